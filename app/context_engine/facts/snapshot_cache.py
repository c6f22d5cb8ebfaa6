"""A persisted, validated snapshot of both stores: fast cold starts (hooks), never stale (issue 9).

A hook process starts cold for every prompt; parsing 10,000 fact files each time costs about a
second. This cache keeps the parsed facts of each store in one ``marshal`` file under the
workspace's data directory (S2.4) and trusts an entry only when all of these hold:

* the store's listing has exactly the cached file names;
* each file's lstat matches what was recorded: device, inode, size, mtime, ctime and mode
  (an atomic replace changes the inode; an in-place edit changes mtime and ctime, and ctime
  cannot be set back by anyone);
* the file had not been touched within ``RACY_NS`` of the moment it was recorded, so an edit
  inside one timestamp tick of the recording cannot hide behind an equal stamp.

Whenever a store does not validate completely, the entries that did are kept and every other
listed file is read the way ``Store.snapshot`` reads it (``Store.load`` per file; symlinks and
unreadable files become the same diagnostics); without a usable cache the store's own snapshot
is taken. Tests compare every path with a fresh ``Memory.snapshot()``. Any problem with the cache
file itself (missing, foreign owner, corrupt, other version) means "no cache".
"""

from __future__ import annotations

import errno
import marshal
import operator
import os
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..cachefile import write_cache
from ..paths import EnginePaths
from .model import Diagnostic, Fact, FileStamp

VERSION = 1
RACY_NS = 2_000_000_000
INDEX_NAME = "MEMORY.md"

# One lstat as the cache compares it: (dev, ino, size, mtime_ns, ctime_ns, mode).
Identity = tuple[int, int, int, int, int, int]
# Memory.snapshot's order, (name, scope, id), as one C-level key (a lambda costs ~2 ms at 10^4).
_FACT_ORDER = operator.attrgetter("name", "scope", "id")
# What a long-lived engine keeps per store: file name -> (lstat identity, fact or diagnostic).
StoreView = dict[str, tuple[Identity, Fact | Diagnostic]]


@dataclass(frozen=True, slots=True)
class CachedSnapshot:
    """Active facts of both stores sorted by (name, scope, id), diagnostics, and how we got them."""

    facts: tuple[Fact, ...]
    diagnostics: tuple[Diagnostic, ...]
    reused: int
    parsed_stores: tuple[str, ...]
    # Per-store views (see ``StoreView``) when every store came whole from the cache, else None.
    views: tuple[StoreView, ...] | None = None


def cache_path(paths: EnginePaths) -> Path:
    """``<workspace data>/cache/facts.v1.marshal`` — never inside a store (S2.4)."""
    return paths.workspace_data / "cache" / f"facts.v{VERSION}.marshal"


def _is_fact_name(name: str) -> bool:
    # Must agree with facts.store.is_fact_file_name; a test pins the two together.
    return name.endswith(".md") and name != INDEX_NAME and not name.startswith(".")


def scan(root: Path) -> dict[str, Identity]:
    """lstat identity of every candidate fact file directly in ``root`` (missing → empty)."""
    found: dict[str, Identity] = {}
    try:
        entries = os.scandir(root)
    except (FileNotFoundError, NotADirectoryError):
        return found
    with entries:
        for entry in entries:
            if not _is_fact_name(entry.name):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                found[entry.name] = (-1, -1, -1, -1, -1, -1)  # never matches: fresh read
                continue
            found[entry.name] = (
                st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode
            )
    return found


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _fact_record(fact: Fact, file_name: str) -> tuple[Any, ...] | None:
    """A marshal-safe record of a parsed fact; ``None`` when its extras cannot be kept exactly."""
    record: tuple[Any, ...] = (
        fact.id, fact.revision, fact.name, fact.title, fact.description, fact.type,
        fact.scope, fact.body, _iso(fact.created_at), _iso(fact.updated_at), fact.extra,
        file_name,
    )
    try:
        if marshal.loads(marshal.dumps(record)) != record:
            return None
    except ValueError:
        return None
    return record


def _child(root: Path, name: str) -> Path:
    """``root / name`` for a plain file name; pathlib's own fast child constructor when present."""
    make = getattr(root, "_make_child_relpath", None)  # what iterdir() uses: no re-parsing
    return make(name) if callable(make) else root / name


def _fact_from(record: Sequence[Any], path: Path, identity: Identity) -> Fact:
    dev, ino, size, mtime_ns = identity[0], identity[1], identity[2], identity[3]
    fact = Fact(
        id=record[0], revision=record[1], name=record[2], title=record[3],
        description=record[4], type=record[5], scope=record[6], body=record[7],
        created_at=_when(record[8]), updated_at=_when(record[9]), path=path,
        stamp=FileStamp(dev, ino, size, mtime_ns), extra=tuple(record[10]),
    )
    return fact


def _read_cache(path: Path) -> dict[str, Any]:
    """The cache document, or ``{}`` when absent, foreign, unsafe or unreadable."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022:
            return {}
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            return {}
        with open(path, "rb") as handle:
            data = marshal.loads(handle.read())  # one read: marshal.load(file) reads piecemeal
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return {}
    return data


def _write_cache(path: Path, document: Mapping[str, Any]) -> None:
    """Atomically replace the cache file; failures are ignored (the cache is optional)."""
    write_cache(path, marshal.dumps(dict(document)))


def _trusted(identity: Identity, recorded: Sequence[Any], written_ns: int) -> bool:
    """Same lstat identity, and settled (untouched for RACY_NS before it was recorded)."""
    if tuple(recorded) != identity:
        return False
    return max(identity[3], identity[4]) < written_ns - RACY_NS


def _whole_store(
    root: Path, listing: Mapping[str, Identity], records: Mapping[str, Any], written_ns: int
) -> tuple[list[Fact], StoreView] | None:
    """Every listed file's fact from the cache, or ``None`` unless each one is trusted.

    The same rule as ``_trusted`` for every file (equal identity, settled), in one tight loop:
    this is the path of every quiet hook turn. The view holds each fact under its listed
    identity, which is the identity its stamp was built from (what ``views_from`` keeps).
    """
    settled = written_ns - RACY_NS
    make = getattr(root, "_make_child_relpath", None)
    child = make if callable(make) else root.joinpath
    when = datetime.fromisoformat
    facts: list[Fact] = []
    view: StoreView = {}
    for name, identity in listing.items():
        found = records.get(name)
        if found is None:
            return None
        recorded, record = found
        if recorded != identity or max(identity[3], identity[4]) >= settled:
            return None
        created, updated = record[8], record[9]
        fact = Fact(
            record[0], record[1], record[2], record[3], record[4], record[5], record[6],
            record[7], None if created is None else when(created),
            None if updated is None else when(updated), child(name),
            FileStamp(identity[0], identity[1], identity[2], identity[3]), tuple(record[10]),
        )
        facts.append(fact)
        view[name] = (identity, fact)
    return facts, view


class SnapshotCache:
    """Load both stores through the persisted cache; rewrite it when something changed."""

    def __init__(self, paths: EnginePaths, *, file: Path | None = None) -> None:
        self.paths = paths
        self.file = file or cache_path(paths)

    def _stores(self) -> list[tuple[str, Path]]:
        return [("project", self.paths.project_store), ("global", self.paths.global_store)]

    def load(self, listings: Sequence[Mapping[str, Identity]] | None = None) -> CachedSnapshot:
        """Facts and diagnostics equal to a fresh ``Memory.snapshot()`` of both stores.

        ``listings`` are the caller's ``scan`` of the project and global store taken just
        before (the engine's own turn): validating against them instead of scanning again
        gives the answer a fresh load would have given at that scan.
        """
        document = _read_cache(self.file)
        cached_stores: dict[str, Any] = document.get("stores", {}) if document else {}
        facts: list[Fact] = []
        diagnostics: list[Diagnostic] = []
        new_stores: dict[str, Any] = {}
        reused = 0
        parsed: list[str] = []
        views: list[StoreView] = []
        for number, (scope, root) in enumerate(self._stores()):
            listing = scan(root) if listings is None else listings[number]
            found = cached_stores.get(scope)
            entry: dict[str, Any] = found if isinstance(found, dict) else {}
            usable = entry.get("root") == str(root)
            records: dict[str, Any] = entry["files"] if usable else {}
            written_ns = int(entry["written_ns"]) if usable else 0
            whole = None
            if usable and not entry["diagnostics"] and len(records) == len(listing):
                whole = _whole_store(root, listing, records, written_ns)
            if whole is not None:
                facts.extend(whole[0])
                views.append(whole[1])
                reused += len(whole[0])
                new_stores[scope] = entry
                continue
            trusted = {
                name: records[name]
                for name, identity in listing.items()
                if name in records and _trusted(identity, records[name][0], written_ns)
            }
            parsed.append(scope)
            if usable:
                # Only the files that changed are read; the rest come from the cache.
                reused += len(trusted)
                result = self._refresh(scope, root, listing, trusted)
            else:
                result = self._fresh(scope, root)
            store_facts, store_diags, new_stores[scope] = result
            facts.extend(store_facts)
            diagnostics.extend(store_diags)
        if parsed:
            _write_cache(self.file, {"version": VERSION, "stores": new_stores})
        facts.sort(key=_FACT_ORDER)
        diagnostics.sort(key=lambda d: str(d.path))
        # Two scopes sharing one directory would mix in views_from; leave that case to it.
        complete = not parsed and len({root for _, root in self._stores()}) == len(views)
        whole_views = tuple(views) if complete else None
        return CachedSnapshot(tuple(facts), tuple(diagnostics), reused, tuple(parsed), whole_views)

    def _refresh(
        self,
        scope: str,
        root: Path,
        listing: Mapping[str, Identity],
        trusted: Mapping[str, Any],
    ) -> tuple[tuple[Fact, ...], tuple[Diagnostic, ...], dict[str, Any]]:
        """Trusted entries from the cache, every other listed file read as the store reads it."""
        from .memory import Memory

        store = Memory(self.paths).stores.get("global" if scope == "global" else "project")
        written_ns = time.time_ns()
        facts: list[Fact] = []
        diagnostics: list[Diagnostic] = []
        files: dict[str, Any] = {}
        for name in listing:
            if name in trusted:
                identity, record = trusted[name]
                facts.append(_fact_from(record, _child(root, name), tuple(identity)))
                files[name] = (identity, record)
                continue
            outcome = _read_entry(store, root / name)
            if isinstance(outcome, Diagnostic):
                diagnostics.append(outcome)
            elif outcome is not None:
                facts.append(outcome)
                identity_now = _lstat_identity(root / name)
                stamp = outcome.stamp
                if identity_now is not None and stamp == FileStamp(*identity_now[:4]):
                    fresh_record = _fact_record(outcome, name)
                    if fresh_record is not None:
                        files[name] = (identity_now, fresh_record)
        facts.sort(key=lambda f: (f.name, f.id))
        diagnostics.sort(key=lambda d: str(d.path))
        entry = {
            "root": str(root),
            # Kept entries were settled long before; new ones are judged against this moment.
            "written_ns": written_ns,
            "files": files,
            "diagnostics": len(diagnostics),
        }
        return tuple(facts), tuple(diagnostics), entry

    def _fresh(
        self, scope: str, root: Path
    ) -> tuple[tuple[Fact, ...], tuple[Diagnostic, ...], dict[str, Any]]:
        """The store's own snapshot (the fresh-load answer) and the cache entry to persist."""
        from .memory import Memory

        # A new Memory each time: a store's in-process parse cache is keyed without ctime, so
        # in a long-lived process (the MCP server) it could hand back a same-size, same-mtime
        # in-place edit's old text. A fresh one reads every file of the changed store.
        store = Memory(self.paths).stores.get("global" if scope == "global" else "project")
        written_ns = time.time_ns()
        snapshot = store.snapshot()
        listing = scan(root)
        files: dict[str, Any] = {}
        for fact in snapshot.facts:
            if fact.path is None or fact.stamp is None:
                continue
            identity = listing.get(fact.path.name)
            if identity is None or FileStamp(*identity[:4]) != fact.stamp:
                continue  # changed again since it was read: leave it to the next load
            record = _fact_record(fact, fact.path.name)
            if record is not None:
                files[fact.path.name] = (identity, record)
        entry = {
            "root": str(root),
            "written_ns": written_ns,
            "files": files,
            "diagnostics": len(snapshot.diagnostics),
        }
        return snapshot.facts, snapshot.diagnostics, entry


def _lstat_identity(path: Path) -> Identity | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


def _read_entry(store: Any, path: Path) -> Fact | Diagnostic | None:
    """One listed file as ``Store.snapshot`` treats it: a fact, a diagnostic, or nothing."""
    from ..errors import FactFormatError

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return _unreadable(path, exc)
    if stat.S_ISLNK(st.st_mode):
        return Diagnostic("symlink", path, f"{path.name}: symlinks are not read")
    if not stat.S_ISREG(st.st_mode):
        return None
    try:
        loaded = store.load(path)
    except FactFormatError as exc:
        return Diagnostic(exc.reason, path, exc.message, exc.line)
    if loaded is None:
        return None
    fact: Fact = loaded.fact
    return fact


def _unreadable(path: Path, exc: OSError) -> Diagnostic:
    if exc.errno == errno.ELOOP:
        return Diagnostic("symlink", path, f"{path.name}: symlinks are not read")
    return Diagnostic("unreadable", path, f"{path.name}: {exc.strerror or exc}")


def views_from(
    loaded: CachedSnapshot,
    listings: Sequence[Mapping[str, Identity]],
    roots: Sequence[Path],
) -> list[StoreView]:
    """Per-store views of a loaded snapshot; an item whose file moved on since is left out."""
    views: list[StoreView] = [{} for _ in roots]
    items: list[Fact | Diagnostic] = [*loaded.facts, *loaded.diagnostics]
    for item in items:
        path = item.path
        if path is None:
            continue
        for view, listing, root in zip(views, listings, roots, strict=True):
            identity = listing.get(path.name)
            if path.parent != root or identity is None:
                continue
            if isinstance(item, Fact) and item.stamp != FileStamp(*identity[:4]):
                continue  # read after it changed again: not kept, re-read next time
            view[path.name] = (identity, item)
    return views


def refresh_view(
    paths: EnginePaths,
    scope: str,
    view: Mapping[str, tuple[Identity, Fact | Diagnostic]],
    listing: Mapping[str, Identity],
    settled_before: int,
) -> StoreView:
    """The store now: unchanged, settled entries of ``view`` kept, every other file read."""
    from .memory import Memory

    root = paths.global_store if scope == "global" else paths.project_store
    store: Any = None
    fresh: StoreView = {}
    for name, identity in listing.items():
        kept = view.get(name)
        settled = max(identity[3], identity[4]) < settled_before
        if kept is not None and kept[0] == identity and settled:
            fresh[name] = kept
            continue
        if store is None:
            store = Memory(paths).stores.get("global" if scope == "global" else "project")
        outcome = _read_entry(store, root / name)
        if outcome is not None:
            fresh[name] = (identity, outcome)
    return fresh


def view_items(views: Sequence[StoreView]) -> tuple[tuple[Fact, ...], tuple[Diagnostic, ...]]:
    """Facts sorted by (name, scope, id) and diagnostics by path, as ``Memory.snapshot``."""
    facts = [item for view in views for _, item in view.values() if isinstance(item, Fact)]
    diags = [item for view in views for _, item in view.values() if isinstance(item, Diagnostic)]
    facts.sort(key=_FACT_ORDER)
    diags.sort(key=lambda d: str(d.path))
    return tuple(facts), tuple(diags)
