"""Forget (archive, S4.7), recover (S4.8) and the archive listing (S4.10) over both stores.

Forget and recover run with both store locks held (``Memory`` takes them).
"""

from __future__ import annotations

import dataclasses
import os
import stat
import time
from contextlib import suppress
from datetime import datetime
from pathlib import Path

from ..errors import AlreadyActive, AlreadyExists, FactFormatError, InvalidName
from .archive import (
    ArchivedEntry,
    archived_time,
    list_entries,
    move_to_archive,
    open_entry,
    original_name,
    owning_store,
)
from .changes import Changes
from .codec import parse_fact, render_fact, unsafe_written_name
from .fs import atomic_write, read_file
from .model import Diagnostic, Scope
from .resolve import Stores, find_by_id, looks_like_id, parse_reference
from .revisions import highest_revision, snapshot_first
from .saving import refresh_indexes
from .store import RACY_NS, Store, fact_slug, mtime_of, stamp_of


def _regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _targets(stores: Stores, ref: str) -> list[tuple[Store, Path, str]]:
    """What ``forget(ref)`` archives: an id → that identity; a reference → that scope only;
    a bare name → that name in every store. Names are slugged first (``../x`` → ``x``)."""
    text = ref.strip()
    if looks_like_id(text):
        by_id = find_by_id(stores, text)
        if by_id:
            return [(stores.owner(item.path), item.path, item.path.stem) for item in by_id]
    reference = parse_reference(text)
    candidates = (stores.get(reference[0]),) if reference else stores.all()
    name = fact_slug(reference[1] if reference else text)
    targets = []
    for store in candidates:
        path = store.fact_path(name)
        if _regular_file(path):
            targets.append((store, path, name))
    return targets


def forget(stores: Stores, ref: str, now: datetime) -> Changes:
    """Archive what ``ref`` names by a rename inside its store; a missing fact is not an error."""
    archived: list[Path] = []
    removed: list[Path] = []
    ids: list[str] = []
    touched: set[Scope] = set()
    for store, path, name in _targets(stores, ref):
        touched.add(store.scope)
        # An unreadable file is archived too (moved, never rewritten); it just has no id.
        with suppress(FactFormatError):
            loaded = store.load(path)
            if loaded is not None:
                ids.append(loaded.fact.id)
        archived.append(move_to_archive(store.fs, store.root, path, name, now))
        removed.append(path)
    warnings = refresh_indexes(stores, touched, removed)
    return Changes(
        removed=tuple(removed), archived=tuple(archived), ids=tuple(ids), warnings=warnings
    )


def recover(stores: Stores, archive_path: str | Path, now: datetime) -> Changes:
    """Bring an archive entry back as a fresh file at a new revision (S4.8).

    Only a regular, non-symlink, single-link ``.md`` directly inside ``.archive/`` of one of our
    stores (``.archive`` not a symlink) is accepted. The entry is re-read through a descriptor
    and a fresh file is written create-only — never renamed or linked — then the entry is removed.
    """
    root, entry = owning_store(archive_path, [s.root for s in stores.all()])
    store = stores.global_ if root == stores.global_.root else stores.project
    archive_fd, data, st = open_entry(store.fs, store.root, entry)
    try:
        hostile = unsafe_written_name(data)
        if hostile is not None:
            raise InvalidName(
                f"archive entry names the fact {hostile!r}, which is a path, not a fact name; "
                "fix its name: line by hand to recover it"
            )
        fact = store.parse(data, store.root / original_name(entry), st).fact
        name = fact_slug(fact.name)
        active = find_by_id(stores, fact.id)
        if active:
            raise AlreadyActive(
                f'memory id "{fact.id}" is already active as {active[0].fact.reference}'
            )
        target = store.fact_path(name)
        if os.path.lexists(target):
            raise AlreadyActive(f'memory "{name}" is already active in the {store.scope} store')
        revision = max(fact.revision, highest_revision(stores.all(), fact.id)) + 1
        fresh = dataclasses.replace(
            fact,
            name=name,
            scope=store.scope,
            revision=revision,
            updated_at=now,
            path=None,
            stamp=None,
        )
        rendered = render_fact(fresh)
        try:
            with snapshot_first(store.fs, store.root, fact.id, fact.revision, data):
                atomic_write(store.fs, target, rendered, create_only=True, revision=revision)
        except AlreadyExists as exc:
            raise AlreadyActive(
                f'memory "{name}" is already active in the {store.scope} store'
            ) from exc
        store.fs.unlink(entry, dir_fd=archive_fd)
        store.fs.fsync(archive_fd)
    finally:
        store.fs.close(archive_fd)
    warnings = refresh_indexes(stores, {store.scope}, [target])
    written = parse_fact(rendered, path=target, store_scope=store.scope, mtime=now).fact
    return Changes(
        fact=written,
        written=(target,),
        recovered=(Path(os.path.abspath(archive_path)),),
        ids=(fact.id,),
        warnings=warnings,
    )


ArchiveCache = dict[Path, tuple[tuple[int, int, int, int, int], ArchivedEntry]]


def list_archived(stores: Stores, cache: ArchiveCache | None = None) -> list[ArchivedEntry]:
    """Archive entries of both stores, newest first (time from the name prefix, else mtime).

    ``cache`` (kept by the caller between listings) reuses entries whose lstat is unchanged;
    it is pruned to what exists now.
    """
    cache = {} if cache is None else cache
    found: list[ArchivedEntry] = []
    seen: set[Path] = set()
    racy_from = time.time_ns() - RACY_NS  # same racy-clean rule as ``Store.snapshot``
    for store in stores.all():
        for path, st in list_entries(store.root):
            key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev)
            seen.add(path)
            hit = cache.get(path)
            if hit is None or hit[0] != key:
                hit = (key, _archived_entry(store, path, st))
                if max(st.st_ctime_ns, st.st_mtime_ns) < racy_from:
                    cache[path] = hit
            found.append(hit[1])
    for gone in [p for p in cache if p not in seen]:
        del cache[gone]
    found.sort(key=lambda e: (e.archived_at, str(e.path)), reverse=True)
    return found


def _archived_entry(store: Store, path: Path, st: os.stat_result) -> ArchivedEntry:
    """Parse one archive entry (as if it were still its original file) or describe the failure."""
    when = archived_time(path.name, mtime_of(st))
    try:
        data, fst = read_file(store.fs, path)
        parsed = parse_fact(
            data,
            path=store.root / original_name(path.name),
            store_scope=store.scope,
            mtime=mtime_of(fst),
            stamp=stamp_of(fst),
        )
    except FactFormatError as exc:
        return ArchivedEntry(path, when, None, Diagnostic(exc.reason, path, exc.message, exc.line))
    except OSError as exc:
        return ArchivedEntry(path, when, None, Diagnostic("unreadable", path, str(exc)))
    return ArchivedEntry(path, when, dataclasses.replace(parsed.fact, path=path))
