"""Claude Code transcripts: ``<root>/projects/<sanitized cwd>/<uuid>.jsonl`` (transcripts.md §4)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..model import ReadResult, SessionFile, UserTurn
from ..roots import SourceRoots
from . import _io
from ._io import as_str, list_dir, stat_mtime_ns, under_root
from ._text import starts_with_any, strip_leading_blocks, strip_trailing_blocks

SOURCE = "claude-code"
_SANITIZE_LIMIT = 200

# Harness text that is not typed by the person (§4.2).
_HARNESS_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "Caveat: The messages below",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<system-reminder>",
    "<task-notification>",
    "[Request interrupted by user",
    "<ide_opened_file>",
    "<ide_selection>",
    "<ide_diagnostics>",
)
_WRAPPER_TAGS = ("system-reminder",)
_MEMORY_INPUT = re.compile(r"\A\s*<user-memory-input>(.*?)</user-memory-input>\s*\Z", re.DOTALL)


def sanitize(path: str) -> str:
    """Claude Code's project directory name for a cwd (before the long-path hash)."""
    return re.sub(r"[^a-zA-Z0-9]", "-", path)


def _text_of(content: Any) -> str | None:
    """Typed text of a user ``message.content``; ``None`` for tool results."""
    if isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        parts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                return None
            if block.get("type") == "text":
                parts.append(as_str(block.get("text")))
    else:
        return None
    kept = []
    for part in parts:
        text = strip_trailing_blocks(strip_leading_blocks(part, _WRAPPER_TAGS), _WRAPPER_TAGS)
        if text.strip() and not starts_with_any(text, _HARNESS_PREFIXES):
            kept.append(text.strip())
    return "\n".join(kept)


def user_turn(line: dict[str, Any], root: Path, session_id: str) -> UserTurn | None:
    """The real user turn on one transcript line, or ``None``."""
    if line.get("type") != "user":
        return None
    if line.get("isMeta") or line.get("isCompactSummary") or line.get("isSidechain"):
        return None
    if "toolUseResult" in line:
        return None
    cwd = as_str(line.get("cwd"))
    if cwd and not under_root(cwd, root):
        return None  # a colliding directory name of another workspace
    message = line.get("message")
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        return None
    text = _text_of(message.get("content"))
    if not text:
        return None
    note = _MEMORY_INPUT.match(text)
    if note is not None:
        inner = note.group(1).strip()
        return UserTurn(SOURCE, session_id, inner, explicit=True) if inner else None
    return UserTurn(SOURCE, session_id, text)


def _reader(root: Path) -> Callable[[SessionFile], ReadResult]:
    """A session reader bound to the workspace root (lines of other cwds are dropped)."""

    def read_session(session: SessionFile) -> ReadResult:
        """Real user turns of one transcript; corrupt lines are counted."""
        result = ReadResult()
        for _number, value in _io.json_objects(session, result):
            turn = user_turn(value, root, session.session_id)
            if turn is not None:
                result.turns.append(turn)
        return result

    return read_session


def _project_dirs(projects: Path, root: Path) -> list[Path]:
    name = sanitize(str(root))
    if len(name) <= _SANITIZE_LIMIT:
        return [projects / name]
    # Long paths end in a runtime-specific hash: match the prefix, the lines' cwd decides.
    prefix = name[:_SANITIZE_LIMIT] + "-"
    return [Path(e.path) for e in list_dir(projects) if e.name.startswith(prefix) and e.is_dir()]


def find_sessions(state: Path, root: Path, roots: SourceRoots) -> list[SessionFile]:
    """Top-level ``*.jsonl`` in the workspace's project directory, subagent files excluded."""
    read = _reader(root)
    found: list[SessionFile] = []
    for directory in _project_dirs(roots.claude / "projects", root):
        for entry in list_dir(directory):
            name = entry.name
            if not name.endswith(".jsonl") or name.startswith("agent-"):
                continue
            if not entry.is_file():
                continue
            mtime = stat_mtime_ns(entry)
            if mtime is not None:
                stem = name[: -len(".jsonl")]
                found.append(SessionFile(SOURCE, stem, entry.path, mtime, read))
    return found
