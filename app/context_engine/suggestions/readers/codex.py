"""Codex CLI rollouts: ``<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-*.jsonl`` (transcripts.md §5)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ... import bounded_json
from ..model import ReadResult, SessionFile, UserTurn
from ..roots import SourceRoots
from . import _io
from ._io import as_str, list_dir, stat_mtime_ns, under_root
from ._text import starts_with_any

SOURCE = "codex"
_MAX_DEPTH = 4  # sessions/YYYY/MM/DD/file

# Contextual user messages the CLI injects (§5.4), compared ASCII case-insensitively.
_CONTEXT_PREFIXES = (
    "# AGENTS.md instructions for",
    "<INSTRUCTIONS>",
    "<user_instructions>",
    "<environment_context>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<skill>",
    "<subagent_notification>",
    "<goal_context>",
    "<codex_internal_context",
    "<recommended_plugins>",
    "<hook_prompt",
    "<agents_instructions>",
    "<multiagent_context>",
    "<context_update>",
)
_LEGACY_REQUEST = "## My request for Codex:"
# The IDE extension (VS Code, Cursor …) wraps a typed request in the editor's state:
# "# Context from my IDE setup:", "## Active file: …", "## Open tabs:" with "- name: path"
# lines, selections; only what follows "## My request for Codex:" was typed by the person.
_IDE_CONTEXT = "# Context from my IDE setup:"
_IDE_REQUEST = re.compile(r"^## My request(?: for Codex)?:[ \t]*$", re.MULTILINE)


def _clean(text: str) -> str | None:
    text = text.strip()
    if text.startswith(_IDE_CONTEXT):
        request = _IDE_REQUEST.search(text)
        # No request heading: the whole block is editor state, nothing the person typed.
        text = text[request.end() :].strip() if request else ""
    if not text or starts_with_any(text, _CONTEXT_PREFIXES, fold=True):
        return None
    if text.startswith(_LEGACY_REQUEST):
        text = text[len(_LEGACY_REQUEST) :].strip()
    return text or None


def _event_text(payload: dict[str, Any]) -> str | None:
    if payload.get("type") != "user_message":
        return None
    if payload.get("kind", "plain") != "plain":
        return None
    return _clean(as_str(payload.get("message")))


def _item_text(payload: dict[str, Any]) -> str | None:
    if payload.get("type") != "message" or payload.get("role") != "user":
        return None
    content = payload.get("content")
    if not isinstance(content, list):
        return None
    parts = [
        as_str(block.get("text"))
        for block in content
        if isinstance(block, dict) and block.get("type") == "input_text"
    ]
    return _clean("\n".join(p for p in parts if p))


def read_session(session: SessionFile) -> ReadResult:
    """User turns: ``event_msg/user_message`` when present, else filtered user messages."""
    result = ReadResult()
    events: list[str] = []
    items: list[str] = []
    for _number, value in _io.json_objects(session, result):
        payload = value.get("payload")
        if not isinstance(payload, dict):
            continue
        kind = value.get("type")
        if kind == "event_msg":
            text = _event_text(payload)
            if text:
                events.append(text)
        elif kind == "response_item":
            text = _item_text(payload)
            if text:
                items.append(text)
    # event_msg is the display log with exactly one entry per real turn: prefer it (§5.3).
    chosen = events if events else items
    result.turns.extend(UserTurn(SOURCE, session.session_id, t) for t in chosen)
    return result


def session_cwd(path: Path) -> str:
    """``session_meta.payload.cwd`` from the first line only (never the rest of the file)."""
    try:
        line = _io.read_first_line(path).decode("utf-8-sig")
        first = bounded_json.loads(line, max_depth=_io.TRANSCRIPT_DEPTH)
    except (OSError, ValueError, RecursionError):
        return ""
    if not isinstance(first, dict) or first.get("type") != "session_meta":
        return ""
    payload = first.get("payload")
    return as_str(payload.get("cwd")) if isinstance(payload, dict) else ""


def _walk(directory: Path | str, depth: int, out: list[os.DirEntry[str]]) -> None:
    for entry in list_dir(directory):
        if entry.is_dir(follow_symlinks=False):
            if depth < _MAX_DEPTH:
                _walk(entry.path, depth + 1, out)
        elif entry.name.startswith("rollout-") and entry.name.endswith(".jsonl"):
            out.append(entry)


def find_sessions(state: Path, root: Path, roots: SourceRoots) -> list[SessionFile]:
    """All rollouts by stat; membership is checked late from the header line (``belongs``)."""
    entries: list[os.DirEntry[str]] = []
    _walk(roots.codex / "sessions", 1, entries)
    _walk(roots.codex / "archived_sessions", _MAX_DEPTH, entries)

    def belongs(session: SessionFile) -> bool:
        """Whether the rollout's ``session_meta`` cwd is the root or under it."""
        return under_root(session_cwd(session.path), root)

    found: list[SessionFile] = []
    for entry in entries:
        mtime = stat_mtime_ns(entry)
        if mtime is not None:
            stem = entry.name[: -len(".jsonl")]
            found.append(SessionFile(SOURCE, stem, entry.path, mtime, read_session, belongs))
    return found
