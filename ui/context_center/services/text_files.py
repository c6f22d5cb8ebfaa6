"""Conflict-safe, atomic saves of plain text files the person edits (instruction files).

A save names the digest of the bytes the editor was opened on; when the file on disk no
longer has it, nothing is written and :class:`ChangedOnDisk` carries what is there now.
The new bytes go to a temp file in the same folder, are flushed to disk, keep the file's
mode, and replace it with one rename: a reader sees the old file or the new, never half.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from context_engine.filemodes import replace_keeping_mode


@dataclass(frozen=True, slots=True)
class TextFile:
    """A file's text and the sha256 of the exact bytes it was decoded from."""

    path: Path
    text: str
    digest: str


class ChangedOnDisk(Exception):
    """The file changed since it was read; ``current`` is what is on disk now."""

    def __init__(self, current: TextFile) -> None:
        super().__init__(f"{current.path} changed on disk")
        self.current = current


def read_text(path: Path) -> TextFile:
    """Read ``path`` as UTF-8 (BOM kept out of the text)."""
    data = path.read_bytes()
    return TextFile(path, data.decode("utf-8-sig"), hashlib.sha256(data).hexdigest())


def save_text(path: Path, text: str, expected_digest: str) -> TextFile:
    """Write ``text`` atomically if the file still has ``expected_digest``."""
    current = read_text(path)
    if current.digest != expected_digest:
        raise ChangedOnDisk(current)
    data = text.encode("utf-8")
    replace_keeping_mode(path, data)
    return TextFile(path, text, hashlib.sha256(data).hexdigest())
