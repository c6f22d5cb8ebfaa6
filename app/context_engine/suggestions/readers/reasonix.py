"""Reasonix sessions: ``<state>/projects/<slug>/sessions/*.jsonl`` (transcripts.md §1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ... import bounded_json
from ...paths import workspace_slug
from ...upgrade.transcript_v5 import TRANSIENT_TAGS, unwrap_v5_turn
from ..model import ReadResult, SessionFile, UserTurn
from ..roots import SourceRoots
from . import _io
from ._io import as_str, list_dir, same_path, stat_mtime_ns
from ._text import starts_with_any, strip_leading_blocks, strip_trailing_blocks

SOURCE = "reasonix"

# store.IsSessionTranscriptName: these sidecars end in .jsonl but are not transcripts (§1.3).
_SIDECAR_SUFFIXES = (
    ".events.jsonl",
    ".turns.jsonl",
    ".conflicts.jsonl",
    ".guardian.jsonl",
    ".wire.jsonl",
    ".adjudication.jsonl",
    ".execution.jsonl",
)

# UserPreviewText: leading transient blocks (§1.7 step 2, plus S5.3's list): the same set
# the v5 upgrade strips.
_LEADING_TAGS = TRANSIENT_TAGS
_TRAILING_TAGS = ("execution-policy", "memory-recall")

# Host-generated user turns in legacy files (§1.7), checked on the stripped text.
_SYNTHETIC_PREFIXES = (
    "<reasoning-language>",
    "<compaction-summary>",
    "Plan approved — plan mode is off",
    "Host final-answer readiness check failed",
    "You are already in the executor phase",
    "The previous assistant response was interrupted while a tool call",
    "The previous assistant response was interrupted during streaming",
    "The previous assistant response was interrupted before visible",
    "The previous assistant response finished without any visible answer",
    "Summary of the later conversation (compacted from here on):",
    "Summary of earlier conversation (compacted up to here):",
    "Continue pursuing the active goal",
    "The agent signaled goal completion and all tasks are marked done.",
    "Goal signaled complete but issues remain:",
    "No tool calls in recent turns.",
    "This turn ended with work still outstanding:",
    "The current task list still has an in-progress item.",
    "A tool failed. Use read-only diagnosis as needed",
    "The tool timed out or hit a transient execution limit.",
    "The host could not confirm this turn is complete:",
    "This task has reached its ",
    "Your tool-call round limit (",
    "The following tools are unavailable in the current workflow phase:",
    "Auto recovery has reached its limit for this turn.",
    "Host progress check:",
    "Host progress redirect:",
    "# Skill: ",  # a /skill invocation is sent as the rendered skill text (§1.4)
)

V5_TAG = "<memory-compiler-execution"


def is_transcript_name(name: str) -> bool:
    """``store.IsSessionTranscriptName`` plus the listing's ``subagent-*`` rule (§1.3)."""
    if not name.endswith(".jsonl") or name.startswith("subagent-"):
        return False
    return not name.endswith(_SIDECAR_SUFFIXES)


def user_text(message: dict[str, Any]) -> str | None:
    """``UserMessageText``: the typed text of a user message, or ``None`` when host-made."""
    if message.get("origin") == "host":
        return None
    raw = as_str(message.get("raw_content")).strip()
    if raw:
        return raw
    text = as_str(message.get("content"))
    if V5_TAG in text:
        try:
            text = unwrap_v5_turn(text)  # S5.3: the original prompt, or empty
        except Exception:  # another package's parser must never end a scan (RELIABILITY)
            text = ""
    text = strip_leading_blocks(text, _LEADING_TAGS)
    text = strip_trailing_blocks(text, _TRAILING_TAGS).strip()
    if not text or starts_with_any(text, _SYNTHETIC_PREFIXES):
        return None
    return text


def read_session(session: SessionFile) -> ReadResult:
    """Real user turns of one Reasonix ``.jsonl`` transcript; corrupt lines are counted."""
    result = ReadResult()
    for number, value in _io.json_objects(session, result):
        if number == 1 and "schema_version" in value and "role" not in value:
            continue  # optional header line (§1.4)
        if value.get("role") != "user":
            continue
        text = user_text(value)
        if text:
            result.turns.append(UserTurn(SOURCE, session.session_id, text))
    return result


def _sessions_in(
    directory: Path, belongs: Callable[[SessionFile], bool] | None
) -> list[SessionFile]:
    entries = list_dir(directory)
    names = {e.name for e in entries}
    found: list[SessionFile] = []
    for entry in entries:
        name = entry.name
        if not is_transcript_name(name):
            continue
        stem = name[: -len(".jsonl")]
        if f"{stem}.cleanup-pending.json" in names or f"{name}.cleanup-pending.json" in names:
            continue
        mtime = stat_mtime_ns(entry)
        if mtime is None:
            continue
        events = f"{stem}.events.jsonl"
        if events in names:  # SessionContentModTime: the newer of the two (§1.6)
            mtime = max(mtime, stat_mtime_ns(directory / events) or 0)
        found.append(SessionFile(SOURCE, stem, entry.path, mtime, read_session, belongs))
    return found


def _sidecar_root(path: Path) -> str:
    """``workspace_root`` from the ``.jsonl.meta`` sidecar, or empty."""
    try:
        meta = bounded_json.loads(_io.read_bytes(path.with_name(path.name + ".meta")))
    except (OSError, ValueError, RecursionError):
        return ""
    return as_str(meta.get("workspace_root")) if isinstance(meta, dict) else ""


def find_sessions(state: Path, root: Path, roots: SourceRoots) -> list[SessionFile]:
    """The workspace's project sessions plus global sessions whose sidecar names the root."""
    base = roots.state if roots.state is not None else state
    found = _sessions_in(base / "projects" / workspace_slug(root) / "sessions", None)
    # Global sessions name their workspace in the sidecar: read late, only for sessions newer
    # than the ones already picked (like a Codex header).
    found += _sessions_in(base / "sessions", lambda s: same_path(_sidecar_root(s.path), root))
    return found
