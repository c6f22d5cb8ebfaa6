"""Restore primitive: put exact files back into a store, create-only, all or nothing.

Used by bundle restore (S15.3), where facts, revision snapshots and archive entries must come
back byte-identical with their ids, which no save can do. Call it under the store's lock.
Every file is placed with ``link`` (an existing target is never replaced), its mtime set as
recorded, and the directories fsynced; if anything fails or the caller's ``check`` raises
(a cancel), every file this call placed and every directory it created is removed again.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from ..errors import AlreadyExists
from ..paths import safe_join
from .fs import FS, atomic_write, fsync_dir, read_file


@dataclass(frozen=True, slots=True)
class StagedFile:
    """A file waiting in the staging folder, where it goes inside the store, its mtime."""

    source: Path
    relative: str  # e.g. ``name.md``, ``.archive/….md``, ``.revisions/<id>/000000001.md``
    mtime_ns: int | None = None


def place_files(
    fs: FS,
    store_root: Path,
    files: Sequence[StagedFile],
    *,
    check: Callable[[], None] = lambda: None,
    progress: Callable[[int], None] = lambda _n: None,
) -> list[Path]:
    """Place ``files`` into ``store_root`` (caller holds its lock); returns the new paths."""
    placed: list[Path] = []
    made_dirs: list[Path] = []
    checked: set[str] = set()  # directories already proven to be inside the store
    try:
        fs.mkdir(store_root)
        for number, staged in enumerate(files):
            check()
            folder, _, name = staged.relative.rpartition("/")
            simple = name not in ("", ".", "..") and not set(name) & {"/", "\\", "\0"}
            target = store_root / folder / name if folder in checked and simple else None
            if target is None:
                target = safe_join(store_root, staged.relative)
                checked.add(folder)
            _make_parents(store_root, target.parent, made_dirs)
            _place(fs, staged.source, target)
            placed.append(target)
            if staged.mtime_ns is not None:
                os.utime(target, ns=(staged.mtime_ns, staged.mtime_ns), follow_symlinks=False)
            progress(number + 1)
        for directory in sorted({p.parent for p in placed}, key=lambda d: len(d.parts)):
            fsync_dir(fs, directory)
    except BaseException:
        for path in reversed(placed):
            with suppress(OSError):
                fs.unlink(path)
        for directory in reversed(made_dirs):
            with suppress(OSError):
                fs.rmdir(directory)
        raise
    return placed


def _make_parents(root: Path, directory: Path, made: list[Path]) -> None:
    missing = []
    current = directory
    while current != root and not current.is_dir():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        os.mkdir(path, 0o755)  # as the store's own directories (fs.FS.mkdir)
        made.append(path)


def _place(fs: FS, source: Path, target: Path) -> None:
    """Hard-link the staged file in (no clobber); across devices, copy create-only."""
    try:
        fs.link(source, target)
    except FileExistsError:
        raise AlreadyExists(f"{target.name} already exists") from None
    except OSError as exc:
        if exc.errno != errno.EXDEV:  # the staging folder is on another file system
            raise
        data, _ = read_file(fs, source)
        atomic_write(fs, target, data, create_only=True)
        os.chmod(target, 0o600)
