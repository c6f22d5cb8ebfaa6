"""Immutable revision snapshots: ``.revisions/<id>/<9-digit revision>.md`` (S2.3, S4.3, S4.6)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from .. import records
from ..errors import (
    AlreadyExists,
    DurabilityUnknown,
    FactFormatError,
    ModifiedExternally,
    PathEscape,
    StoreIOError,
)
from ..paths import safe_join
from ..records import record
from .fs import FS, atomic_write, fsync_dir, read_file
from .ids import is_valid_id
from .model import Fact
from .store import REVISIONS_DIR, Store


@record
class RevisionFile:
    """One snapshot file of one id."""

    revision: int
    path: Path


def revision_dir(store_root: Path, fact_id: str) -> Path:
    """``<store>/.revisions/<id>``; an id that is not one safe path component is rejected."""
    if not is_valid_id(fact_id):
        raise PathEscape(f"memory path escapes store: {REVISIONS_DIR}/{fact_id}")
    return safe_join(store_root, f"{REVISIONS_DIR}/{fact_id}")


def revision_file_name(revision: int) -> str:
    """``000000003.md``."""
    return f"{revision:09d}.md"


def list_revision_files(store_root: Path, fact_id: str) -> list[RevisionFile]:
    """Every snapshot of ``fact_id`` in one store, newest first."""
    try:
        directory = revision_dir(store_root, fact_id)
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError, PathEscape):
        return []
    files = []
    for name in names:
        stem, dot, ext = name.partition(".")
        if dot and ext == "md" and stem.isdigit():
            files.append(RevisionFile(int(stem), directory / name))
    files.sort(key=lambda f: f.revision, reverse=True)
    return files


def write_snapshot(fs: FS, store_root: Path, fact_id: str, revision: int, data: bytes) -> bool:
    """Copy ``data`` create-only to the snapshot of ``revision`` (call under the store lock).

    An existing snapshot with identical bytes (a crash after the snapshot, before the write) is
    fine; different bytes stop the operation, because snapshots are never modified. Returns True
    when this call created the snapshot.
    """
    directory = revision_dir(store_root, fact_id)
    target = directory / revision_file_name(revision)
    if not directory.is_dir():
        fs.mkdir(directory)
        fsync_dir(fs, directory.parent)
        fsync_dir(fs, directory.parent.parent)
    try:
        # The temp file lives in the store root so the stale-temp sweep there covers it.
        atomic_write(fs, target, data, create_only=True, temp_dir=store_root)
    except DurabilityUnknown as exc:
        # The fact itself is not written yet: for the operation this is a pre-commit failure.
        raise StoreIOError(exc.message, exc.errno) from exc
    except AlreadyExists:
        existing, _ = read_file(fs, target)
        if existing != data:
            raise ModifiedExternally(
                f"revision snapshot {target.name} of {fact_id} already exists with other content"
            ) from None
        return False
    return True


@contextmanager
def snapshot_first(
    fs: FS, store_root: Path, fact_id: str, revision: int, data: bytes
) -> Iterator[None]:
    """Snapshot ``data`` (S4.3), then run the write in the ``with`` body.

    If that write fails before its commit point (``StoreIOError`` other than
    ``DurabilityUnknown``, or ``AlreadyExists``), a snapshot this call created is removed again:
    it never became history, and the store is left byte-identical (RELIABILITY §1, pre-commit).
    A crash instead leaves it as an orphan equal to the still-active bytes, which is harmless.
    """
    directory = revision_dir(store_root, fact_id)
    fresh_dirs = [d for d in (directory.parent, directory) if not d.is_dir()]
    created = write_snapshot(fs, store_root, fact_id, revision, data)
    try:
        yield
    except (StoreIOError, AlreadyExists) as exc:
        if created and not isinstance(exc, DurabilityUnknown):
            with suppress(OSError):
                fs.unlink(directory / revision_file_name(revision))
                for made in reversed(fresh_dirs):
                    fs.rmdir(made)
        raise


def history(stores: Iterable[Store], fact_id: str, name: str) -> list[Fact]:
    """Snapshots of ``fact_id`` from every store, deduplicated by revision, newest first (S4.6).

    The revision is the file name's (snapshots of legacy files may not carry one); a snapshot
    that cannot be parsed is skipped.
    """
    by_revision: dict[int, Fact] = {}
    for store in stores:
        for item in list_revision_files(store.root, fact_id):
            if item.revision in by_revision:
                continue
            try:
                data, st = read_file(store.fs, item.path)
                # Parse as if it were the active file, so a legacy snapshot keeps the same id.
                fact = store.parse(data, store.root / f"{name}.md", st).fact
            except (OSError, FactFormatError, PathEscape):
                continue
            by_revision[item.revision] = records.replace(
                fact, revision=item.revision, path=item.path
            )
    return [by_revision[r] for r in sorted(by_revision, reverse=True)]


def highest_revision(stores: Iterable[Store], fact_id: str) -> int:
    """The highest snapshot revision of ``fact_id`` in any store (0 when none)."""
    return max(
        (files[0].revision for s in stores if (files := list_revision_files(s.root, fact_id))),
        default=0,
    )
