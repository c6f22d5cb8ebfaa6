"""One hook invocation: read the agent's payload, add the prefix or the turn's context, reply.

``SessionStart`` builds the stable prefix — the memory block, plus our instruction block when
asked (the agents load their own CLAUDE.md / AGENTS.md / GEMINI.md) — and records the baseline
for that agent session; ``UserPromptSubmit`` / ``BeforeAgent`` adds the recall block
and the turn-tail notes for the prompt, records the trace and moves the baseline. A generic
turn with nothing pending adds nothing. A hook never breaks the agent: any failure prints
``{}`` (add nothing) and one line on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from ..paths import EnginePaths
from ..session.core import SessionSources, open_prefix, run_turn
from .protocol import Agent, HookPayload, event_kind, render_output
from .state import BaselineStore

SourcesFactory = Callable[[EnginePaths], SessionSources]


def default_sources(paths: EnginePaths) -> SessionSources:
    """The engine, reading facts through the persisted snapshot cache (hooks are short-lived)."""
    from .fast_sources import CachedEngine

    return CachedEngine(paths)


def hook_paths(payload: HookPayload, home: str | None, workspace: str | None) -> EnginePaths:
    """``--workspace`` wins, then the payload's ``cwd``, then the process's cwd."""
    chosen = workspace or payload.cwd or None
    return EnginePaths.resolve(home=home, workspace=Path(chosen) if chosen else None)


def handle(
    agent: Agent,
    event: str | None,
    stdin_text: str,
    *,
    home: str | None = None,
    workspace: str | None = None,
    with_instructions: bool = False,
    sources: SourcesFactory = default_sources,
) -> str:
    """The stdout JSON for one hook call (raises on bad input; see :func:`run`)."""
    payload = HookPayload.parse(stdin_text)
    resolved = event_kind(agent, event or payload.event or "")
    if resolved is None:
        return "{}"
    name, kind = resolved
    paths = hook_paths(payload, home, workspace)
    engine = sources(paths)
    states = BaselineStore(paths.workspace_data / "agent-sessions")
    if kind == "start":
        prefix, baseline = open_prefix(engine, with_instructions=with_instructions)
        states.save(agent, payload.session_id, baseline)
        return render_output(name, prefix)
    previous = states.load(agent, payload.session_id)
    result, following = run_turn(engine, previous, payload.prompt)
    if previous is None or result.notes:
        # No note means nothing moved: the baseline on disk is already the one that follows.
        states.save(agent, payload.session_id, following)
    return render_output(name, result.added_context)


def run(
    agent: Agent,
    event: str | None,
    *,
    home: str | None,
    workspace: str | None,
    with_instructions: bool = False,
) -> int:
    """CLI entry: stdin → stdout; always exit 0 so a broken hook never blocks the agent."""
    try:
        text = sys.stdin.read()
        out = handle(
            agent, event, text, home=home, workspace=workspace, with_instructions=with_instructions
        )
    except Exception as exc:  # a hook must never block the prompt
        sys.stderr.write(f"context-engine hook: nothing added ({type(exc).__name__})\n")
        out = "{}"
    sys.stdout.write(out + "\n")
    sys.stdout.flush()
    return 0
