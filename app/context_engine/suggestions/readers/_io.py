"""The only places readers touch session bytes: small seams tests can watch."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model import ReadResult, SessionFile

from ... import bounded_json

# Transcript lines nest tool inputs a few levels deep; far deeper is hostile, not a transcript.
TRANSCRIPT_DEPTH = 256

HEADER_LIMIT = 1 << 20  # a Codex session_meta line can carry long instructions


def read_bytes(path: Path) -> bytes:
    """Whole content of a session file (read-only open)."""
    with open(path, "rb") as handle:
        return handle.read()


def read_first_line(path: Path, limit: int = HEADER_LIMIT) -> bytes:
    """The first line of a file, at most ``limit`` bytes, without reading the rest."""
    with open(path, "rb") as handle:
        return handle.readline(limit)


def stat_mtime_ns(path: Path | str | os.DirEntry[str]) -> int | None:
    """Modification time in ns (a ``DirEntry`` is stat'ed through its cache), else ``None``."""
    try:
        if isinstance(path, os.DirEntry):
            return path.stat().st_mtime_ns
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def list_dir(path: Path | str) -> list[os.DirEntry[str]]:
    """Entries of a directory; a missing or unreadable directory is empty."""
    try:
        with os.scandir(path) as entries:
            return list(entries)
    except OSError:
        return []


def iter_jsonl(data: bytes) -> Iterator[tuple[int, Any, bool]]:
    """Yield ``(line number, value, ok)`` for each non-blank line; ``ok`` false when corrupt."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            yield (
                number,
                bounded_json.loads(
                    line.decode("utf-8-sig" if number == 1 else "utf-8"),
                    max_depth=TRANSCRIPT_DEPTH,
                    what="transcript line",
                ),
                True,
            )
        except (ValueError, RecursionError):  # RecursionError: absurdly nested JSON
            yield number, None, False


def as_str(value: object) -> str:
    """``value`` when it is a string, else empty."""
    return value if isinstance(value, str) else ""


def under_root(candidate: str, root: Path) -> bool:
    """Whether an absolute path string equals ``root`` or lies under it."""
    if not candidate:
        return False
    text = os.path.normpath(candidate)
    base = os.path.normpath(str(root))
    if os.name == "nt":
        text, base = text.lower(), base.lower()
    return text == base or text.startswith(base.rstrip(os.sep) + os.sep)


def same_path(candidate: str, root: Path) -> bool:
    """Whether an absolute path string names ``root`` itself."""
    if not candidate:
        return False
    text, base = os.path.normpath(candidate), os.path.normpath(str(root))
    return text.lower() == base.lower() if os.name == "nt" else text == base


def session_bytes(session: SessionFile, result: ReadResult) -> bytes | None:
    """The session file's bytes, or None with an ``unreadable`` diagnostic on ``result``."""
    from ..model import ScanDiagnostic

    try:
        return read_bytes(session.path)
    except OSError as exc:
        result.diagnostics.append(ScanDiagnostic("unreadable", session.path, str(exc)))
        return None


def json_objects(session: SessionFile, result: ReadResult) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each JSON-object line; other lines count as corrupt."""
    data = session_bytes(session, result)
    for number, value, ok in iter_jsonl(data or b""):
        if not ok or not isinstance(value, dict):
            result.corrupt_lines += 1
            continue
        yield number, value
