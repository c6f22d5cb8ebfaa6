"""Removal of the retired ``[agent].memory_compiler`` key from config.toml files (S5.4).

Line-based: the lines of that one statement are deleted and every other byte stays as it
was (comments, blank lines, CRLF, other tables' keys of the same name, multi-line strings
that merely contain ``memory_compiler = ``). The write is atomic (temp file in the same
directory, fsync, ``os.replace``, directory fsync) and keeps the file's permission bits.
A file the scanner does not understand is left untouched.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from context_engine.filemodes import replace_keeping_mode
from context_engine.paths import EnginePaths
from context_engine.upgrade.toml_lines import TomlScanError, scan_statements

RETIRED_TABLE = ("agent",)
RETIRED_KEY = "memory_compiler"
NOTICE = (
    "Removed the retired [agent].memory_compiler setting from {path}: "
    "Memory v5 is gone and Context Engine v2 needs no compiler setting."
)


def _is_retired(table: tuple[str, ...], key: tuple[str, ...]) -> bool:
    # ``[agent] memory_compiler = …`` or, from the root table, ``agent.memory_compiler = …``.
    return table + key == (*RETIRED_TABLE, RETIRED_KEY)


def strip_retired_key(text: str) -> tuple[str, bool]:
    """(text without the retired key's lines, whether anything was removed).

    Raises ``TomlScanError`` when the text is not TOML the scanner understands.
    """
    spans = [(s.start, s.end) for s in scan_statements(text) if _is_retired(s.table, s.key)]
    if not spans:
        return text, False
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return "".join(pieces), True


def remove_memory_compiler_key(path: Path) -> str | None:
    """Remove ``[agent].memory_compiler`` from ``path``; the one-time notice, else ``None``.

    ``None`` when the file is missing, unreadable, not understood, or has no such key.
    """
    try:
        data = path.read_bytes()
    except OSError:
        return None
    # surrogateescape keeps any non-UTF-8 bytes byte-identical through the round trip.
    text = data.decode("utf-8", errors="surrogateescape")
    try:
        updated, changed = strip_retired_key(text)
    except TomlScanError:
        return None
    if not changed:
        return None
    # A config kept in a dotfiles repo is often a symlink: rewrite its target, keep the link.
    target = path.resolve() if path.is_symlink() else path
    _atomic_write(target, updated.encode("utf-8", errors="surrogateescape"))
    return NOTICE.format(path=path)


def config_files(paths: EnginePaths) -> list[Path]:
    """The two config files S5.4 cleans: ``<home>/config.toml`` and the workspace's."""
    return [paths.home / "config.toml", paths.root / ".reasonix" / "config.toml"]


def remove_retired_config_keys(paths: EnginePaths) -> list[str]:
    """Run S5.4 on both config files; the notices of the files that changed (once each).

    Never raises for an unwritable file: the key then stays and is retried next time.
    """
    notices: list[str] = []
    for path in config_files(paths):
        try:
            notice = remove_memory_compiler_key(path)
        except OSError:
            continue
        if notice is not None:
            notices.append(notice)
    return notices


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` over ``path`` so a reader sees the old or the new file, never a mix."""
    replace_keeping_mode(path, data)


def _fsync_dir(directory: Path) -> None:
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # platforms without directory handles (Windows)
    try:
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
