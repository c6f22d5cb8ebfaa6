"""Hook wire formats: the stdin payload and the JSON each agent expects on stdout.

Claude Code and Codex CLI share one shape (``SessionStart`` / ``UserPromptSubmit``, output
``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}``); Gemini CLI uses the same
output object for ``SessionStart`` and ``BeforeAgent``. An empty object adds nothing.
"""

from __future__ import annotations

import json
import re

from .. import bounded_json

# Not ``typing``'s flag: a hook handed to the running server (``relay.py``) needs neither
# ``typing`` nor ``dataclasses``, ~30 ms of such a process here (issue 14).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

# A hook payload is a prompt plus a few fields; agents cap prompts far below this.
MAX_HOOK_INPUT = 16 * 1024 * 1024

if TYPE_CHECKING:
    Agent = Literal["claude-code", "codex", "gemini"]
    Kind = Literal["start", "prompt"]
else:
    Agent = Kind = str

AGENTS: tuple[Agent, ...] = ("claude-code", "codex", "gemini")

# Event names as each agent sends them (and kebab-case aliases for the command line).
_EVENTS: dict[Agent, dict[str, Kind]] = {
    "claude-code": {"SessionStart": "start", "UserPromptSubmit": "prompt"},
    "codex": {"SessionStart": "start", "UserPromptSubmit": "prompt"},
    "gemini": {"SessionStart": "start", "BeforeAgent": "prompt"},
}


def _kebab(name: str) -> str:
    return "".join(f"-{c.lower()}" if c.isupper() else c for c in name).lstrip("-")


def event_kind(agent: Agent, event: str) -> tuple[str, Kind] | None:
    """``(canonical event name, kind)`` for an event an agent sends; ``None`` if not handled."""
    for name, kind in _EVENTS[agent].items():
        if event in (name, _kebab(name), name.lower()):
            return name, kind
    return None


def supported_events(agent: Agent) -> tuple[str, ...]:
    """The event names this adapter handles for ``agent``."""
    return tuple(_EVENTS[agent])


class HookPayload:
    """The fields we use from a hook's stdin JSON (all agents name them the same)."""

    __slots__ = ("cwd", "event", "prompt", "session_id")

    def __init__(self, session_id: str, cwd: str | None, prompt: str, event: str | None) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.prompt = prompt
        self.event = event

    def __repr__(self) -> str:
        return (
            f"HookPayload(session_id={self.session_id!r}, cwd={self.cwd!r}, "
            f"prompt={self.prompt!r}, event={self.event!r})"
        )

    @classmethod
    def parse(cls, text: str) -> HookPayload:
        """Parse stdin; raises ``ValueError`` when it is not a JSON object."""
        data = (
            bounded_json.loads(text, max_bytes=MAX_HOOK_INPUT, what="hook input")
            if text.strip()
            else {}
        )
        if not isinstance(data, dict):
            raise ValueError("hook input must be a JSON object")
        return cls(
            session_id=_str(data.get("session_id")) or "default",
            cwd=_str(data.get("cwd")) or None,
            prompt=user_prompt(_str(data.get("prompt"))),
            event=_str(data.get("hook_event_name")) or None,
        )


# Gemini CLI puts earlier hook context in front of the prompt it hands the next hook.
_HOST_CONTEXT = re.compile(r"\A(?:\s*<hook_context>.*?</hook_context>)+\s*", re.S)


def user_prompt(text: str) -> str:
    """The person's own words: host-added ``<hook_context>`` blocks in front are dropped (S8.1)."""
    return _HOST_CONTEXT.sub("", text)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def render_output(event: str, context: str) -> str:
    """The stdout JSON: the context as ``additionalContext``, or ``{}`` when there is none."""
    if not context:
        return "{}"
    payload = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
    return json.dumps(payload, ensure_ascii=False)
