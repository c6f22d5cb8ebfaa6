"""Restore primitive: put exact files back into stores, create-only, all or nothing.

Used by bundle restore (S15.3), where facts, revision snapshots and archive entries must come
back byte-identical with their ids, which no save can do. ``restore_stores`` takes every
store's lock and places each store's files with ``place_files``: ``link`` (an existing target
is never replaced), the recorded mtime, then the data and directories made durable; if
anything fails or the caller's ``check`` raises (a cancel), every file placed and every
directory created is removed again, in every store.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path

from ..errors import AlreadyExists, ContextEngineError
from ..paths import safe_join
from .fs import FS, atomic_write, fsync_dir, read_file, store_lock
from .store import INDEX_NAME
from .store_files import is_empty_store


@dataclass(frozen=True, slots=True)
class StagedFile:
    """A file waiting in the staging folder, where it goes inside the store, its mtime."""

    source: Path
    relative: str  # e.g. ``name.md``, ``.archive/….md``, ``.revisions/<id>/000000001.md``
    mtime_ns: int | None = None


BULK_FILES = 64  # above this, one sync() instead of an fsync per staged file and directory


def place_files(
    fs: FS,
    store_root: Path,
    files: Sequence[StagedFile],
    *,
    check: Callable[[], None] = lambda: None,
    progress: Callable[[int], None] = lambda _n: None,
) -> list[Path]:
    """Place ``files`` into ``store_root`` (caller holds its lock); returns the new paths.

    Staged bytes are made durable before they become store content, and the new directory
    entries after (S4.4): with fsync per file and directory for a few files, with one
    ``os.sync()`` before and after for a bulk restore (thousands of fsyncs cost seconds).
    """
    placed: list[Path] = []
    made_dirs: list[Path] = []
    known: set[str] = set()  # directories proven to exist inside the store
    bulk = len(files) > BULK_FILES
    try:
        fs.mkdir(store_root)
        if bulk:
            os.sync()
        for number, staged in enumerate(files):
            check()
            folder, _, name = staged.relative.rpartition("/")
            simple = name not in ("", ".", "..") and not set(name) & {"/", "\\", "\0"}
            if folder in known and simple:
                target = store_root / folder / name
            else:
                target = safe_join(store_root, staged.relative)
                _make_parents(store_root, target.parent, made_dirs)
                known.add(folder)
            if not bulk:
                _fsync_file(fs, staged.source)
            _place(fs, staged.source, target)
            placed.append(target)
            if staged.mtime_ns is not None:
                os.utime(target, ns=(staged.mtime_ns, staged.mtime_ns), follow_symlinks=False)
            progress(number + 1)
        if bulk:
            os.sync()
        else:
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


def _fsync_file(fs: FS, path: Path) -> None:
    fd = fs.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fs.fsync(fd)
    finally:
        fs.close(fd)


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


@dataclass(frozen=True, slots=True)
class StoreRestore:
    """One store's share of a restore: its files, the index to write, whether it must be empty.

    ``index`` replaces the store's MEMORY.md (only a bare one can be there when ``empty`` holds:
    ``is_empty_store``); a merge passes None and rebuilds the index afterwards instead.
    """

    root: Path
    files: Sequence[StagedFile]
    index: StagedFile | None = None
    empty: bool = False


def restore_stores(
    fs: FS,
    stores: Sequence[StoreRestore],
    *,
    check: Callable[[], None] = lambda: None,
    progress: Callable[[int], None] = lambda _n: None,
) -> int:
    """Place every store's files under all their locks; every store or none. Returns the count."""
    placed: list[Path] = []
    with ExitStack() as locks:
        for store in stores:
            locks.enter_context(store_lock(fs, store.root))
        try:
            for store in stores:
                if store.empty and not is_empty_store(store.root):
                    raise ContextEngineError(
                        f"{store.root.name} store changed meanwhile; run the import again")
                placed.extend(place_files(fs, store.root, store.files, check=check,
                                          progress=lambda n: progress(len(placed) + n)))
            for store in stores:
                if store.index is not None:
                    _write_index(fs, store.root, store.index)
        except BaseException:
            for path in reversed(placed):
                with suppress(OSError):
                    fs.unlink(path)
            for directory in sorted({p.parent for p in placed}, key=lambda d: -len(d.parts)):
                with suppress(OSError):
                    fs.rmdir(directory)  # only ever empty ones; a store root keeps its .lock
            raise
    return len(placed)


def _write_index(fs: FS, root: Path, index: StagedFile) -> None:
    target = root / INDEX_NAME
    data, _ = read_file(fs, index.source)
    atomic_write(fs, target, data)
    os.chmod(target, 0o600)
    if index.mtime_ns is not None:
        os.utime(target, ns=(index.mtime_ns, index.mtime_ns))
