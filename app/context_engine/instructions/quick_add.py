"""Quick add (S6.8): ``/remember <note>`` and ``# <note>`` append to the root instruction file.

Append rules follow Reasonix ``memory.AppendDoc`` (formats/transcripts.md §2.3); the write is
atomic (temp file, fsync, replace, directory fsync) and keeps every other byte.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

from ..errors import ContextEngineError, PathEscape
from ..facts.model import one_line
from ..paths import EnginePaths
from .import_lines import FenceTracker
from .model import NORMAL_NAMES

DEFAULT_NAME = "AGENTS.md"
HEADING = "## Notes"
NEW_DOCUMENT = "# Project memory\n\n## Notes\n\n- {note}\n"

_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")
_LOCK = threading.Lock()  # Reasonix holds a process-wide mutex only; so do we


class EmptyNote(ContextEngineError):
    """A quick add with nothing to remember."""

    code = "empty_note"


class InstructionFileUnreadable(ContextEngineError):
    """The root instruction file is not UTF-8: it is left untouched."""

    code = "unreadable"


def parse_quick_add(text: str) -> str | None:
    """The note of ``/remember <note>`` or ``# <note>``; None when ``text`` is neither.

    ``/remember`` alone gives ``""`` (a quick add with nothing to remember). ``#`` must be
    followed by a space or tab and the input must be one line: ``#7``, ``#issue`` and a
    multi-line Markdown prompt are not notes.
    """
    stripped = text.strip()
    if stripped == "/remember":
        return ""
    if stripped.startswith(("/remember ", "/remember\t")):
        return one_line(stripped[len("/remember") :])
    if stripped.startswith(("# ", "#\t")) and "\n" not in stripped and "\r" not in stripped:
        return stripped[1:].strip()
    return None


def root_document(paths: EnginePaths) -> Path:
    """The workspace root's instruction document: first existing normal name, else AGENTS.md."""
    for name in NORMAL_NAMES:
        candidate = paths.root / name
        if os.path.lexists(candidate):
            return candidate
    return paths.root / DEFAULT_NAME


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def append_note(text: str, note: str) -> str:
    """``text`` with ``- <note>`` added by the three S6.8 rules."""
    if not text.strip():
        return NEW_DOCUMENT.format(note=note)
    nl = _newline(text)
    lines = _LINES.findall(text)
    fence = FenceTracker()
    start: int | None = None
    end = len(lines)
    for index, line in enumerate(lines):
        if fence.feed(line.rstrip("\r\n")):
            continue
        bare = line.rstrip("\r\n")
        if start is None:
            if bare.strip() == HEADING:
                start = index
        elif _ATX_HEADING.match(bare):
            end = index
            break
    if start is None:
        return text.rstrip("\r\n") + f"{nl}{nl}{HEADING}{nl}{nl}- {note}{nl}"
    last = end - 1
    while last > start and not lines[last].strip():
        last -= 1
    # An empty section gets the blank line a fresh one has between heading and bullet.
    insert = [f"{nl}- {note}{nl}"] if last == start else [f"- {note}{nl}"]
    if not lines[last].endswith(("\n", "\r")):
        lines[last] += nl
    return "".join(lines[: last + 1] + insert + lines[last + 1 :])


def _confined_target(paths: EnginePaths, path: Path) -> Path:
    """Write through an in-root symlink to its real file; refuse one that leaves the root."""
    if not path.is_symlink():
        return path
    real = Path(os.path.realpath(path))
    root = Path(os.path.realpath(paths.root))
    if root not in real.parents:
        raise PathEscape(f"instruction file is a symlink out of the workspace: {path.name}")
    return real


def _read(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    import secrets  # only a quick add writes: keep base64/hmac/random off every hook's imports

    directory = path.parent
    temp = directory / f".{path.name}.tmp-{secrets.token_hex(6)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temp, flags, 0o600)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    try:
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def quick_add(paths: EnginePaths, note: str) -> Path:
    """Append ``note`` (collapsed to one line) to the root instruction document; return it."""
    line = one_line(note)
    if not line:
        raise EmptyNote("nothing to remember")
    path = _confined_target(paths, root_document(paths))
    with _LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        before = _read(path)
        try:
            text = "" if before is None else before.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InstructionFileUnreadable(
                f"{path.name} is not valid UTF-8; not changed (byte {exc.start})"
            ) from exc
        mode = 0o644 if before is None else os.stat(path).st_mode & 0o7777
        updated = append_note(text, line)
        _write_atomic(path, updated.encode("utf-8"), mode)
    return path
