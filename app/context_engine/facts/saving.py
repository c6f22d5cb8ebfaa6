"""Save (create, update, rename, move) and restore, with every check of S4.1–S4.3, S4.6, S4.11.

Every function here runs with both store locks held (``Memory`` takes them); the checks and the
writes therefore see one consistent state and no update is lost (S4.5).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from .. import records
from ..errors import (
    AlreadyExists,
    DurabilityUnknown,
    FactFormatError,
    FactNotFound,
    InvalidName,
    ModifiedExternally,
    NameInUse,
    RevisionConflict,
    StoreIOError,
)
from ..records import record
from .archive import move_to_archive
from .changes import Changes
from .codec import new_id, parse_fact, render_fact
from .fs import atomic_write, fsync_dir
from .index_file import update_index
from .model import Fact, FactFields, Scope, one_line
from .resolve import Stores, find_one_by_id, parse_reference, resolve_loaded
from .revisions import history, snapshot_first
from .store import LoadedFile, Store, fact_slug, gc_paused


@record
class SaveRequest(FactFields):
    """The arguments of one save (None = not given: inherit on update, default on create)."""

    id: str | None = None
    expected_revision: int | None = None
    expected_digest: str | None = None
    create_only: bool = False


def _load_or_refuse(store: Store, name: str) -> LoadedFile | None:
    """Load ``name``; a file that exists but cannot be parsed is never overwritten."""
    try:
        return store.load_name(name)
    except FactFormatError as exc:
        raise AlreadyExists(
            f'memory "{name}" exists but cannot be read ({exc.message}); it is left untouched'
        ) from exc


def _target(req: SaveRequest) -> tuple[str | None, Scope | None, bool]:
    """The slugged name, the scope asked for, and whether the name was a reference."""
    if req.name is None:
        return None, req.scope, False
    reference = parse_reference(req.name)
    if reference is None:
        return fact_slug(req.name), req.scope, False
    if req.scope and req.scope != reference[0]:
        raise InvalidName(f'memory reference "{req.name}" does not match scope "{req.scope}"')
    return fact_slug(reference[1]), reference[0], True


def _existing(
    stores: Stores, req: SaveRequest, name: str | None, scope: Scope | None
) -> LoadedFile | None:
    if req.id is not None:
        found = find_one_by_id(stores, req.id)
        if found is None:
            raise FactNotFound(f'memory id "{req.id}" not found')
        return found
    if name is None:
        raise InvalidName("memory name needs at least one letter or digit")
    if scope is not None:
        return _load_or_refuse(stores.get(scope), name)
    for store in stores.all():
        loaded = _load_or_refuse(store, name)
        if loaded is not None:
            return loaded
    return None


def _check_preconditions(
    stores: Stores, req: SaveRequest, existing: LoadedFile | None, name: str | None
) -> None:
    """S4.2 and RELIABILITY C6: create-only, expected revision, expected digest."""
    if req.create_only and name is not None:
        active = existing is not None or any(
            _load_or_refuse(store, name) is not None for store in stores.all()
        )
        if active:
            raise AlreadyExists(f'memory "{name}" already exists; automatic writes are create-only')
    found = existing.fact.revision if existing else 0
    if req.expected_revision is not None and req.expected_revision != found:
        raise RevisionConflict(req.expected_revision, found)
    if req.expected_digest is not None and (
        existing is None or existing.digest != req.expected_digest.lower()
    ):
        label = existing.fact.name if existing else name
        raise ModifiedExternally(f'memory "{label}" changed on disk since it was read')


def _build(
    req: SaveRequest,
    existing: LoadedFile | None,
    name: str | None,
    scope: Scope | None,
    now: datetime,
    home: Scope,
) -> Fact:
    """The fact to write; ``home`` is the scope of the store the existing file lives in."""

    def pick(value: str | None, old: str) -> str:
        return old if value is None else value

    if existing is not None:
        old = existing.fact
        return records.replace(
            old,
            revision=old.revision + 1,
            name=name or old.name,
            title=one_line(pick(req.title, old.title)),
            description=one_line(pick(req.description, old.description)),
            body=pick(req.body, old.body),
            type=req.type or old.type,
            scope=scope or home,
            updated_at=now,
            path=None,
            stamp=None,
        )
    assert name is not None
    return Fact(
        id=new_id(),
        revision=1,
        name=name,
        title=one_line(req.title or ""),
        description=one_line(req.description or ""),
        type=req.type or "project",
        scope=scope or "project",
        body=req.body or "",
        created_at=now,
        updated_at=now,
    )


def save(stores: Stores, req: SaveRequest, now: datetime) -> Changes:
    """Create or update one fact (S4.1); see ``SaveRequest``."""
    name, scope, by_reference = _target(req)
    existing = _existing(stores, req, name, scope)
    _check_preconditions(stores, req, existing, name)
    # The directory a file lives in is its scope: a hand-edited ``scope:`` never moves it.
    home = stores.owner(existing.path).scope if existing else "project"
    fact = _build(req, existing, name, scope, now, home)
    store = stores.get(fact.scope)
    target = store.fact_path(fact.name)
    if existing is not None and existing.path != target:
        occupant = _load_or_refuse(store, fact.name)
        if occupant is not None:
            raise NameInUse(f'memory name "{fact.name}" is already used by id "{occupant.fact.id}"')
    written, removed = write_fact(stores, existing, fact, target)
    archived: list[Path] = []
    touched = [target, *removed]
    if req.id is None and not by_reference:
        moved = _archive_other_copy(stores, fact, now)
        if moved is not None:
            touched.append(moved[0])
            archived.append(moved[1])
    scopes = {fact.scope}
    if existing is not None:
        scopes |= {existing.fact.scope, stores.owner(existing.path).scope}
    if archived:
        scopes.add(stores.other(fact.scope).scope)
    return Changes(
        fact=written,
        written=(target,),
        removed=tuple(removed),
        archived=tuple(archived),
        ids=(fact.id,),
        warnings=refresh_indexes(stores, scopes, touched),
    )


def write_fact(
    stores: Stores, existing: LoadedFile | None, fact: Fact, target: Path
) -> tuple[Fact, list[Path]]:
    """Snapshot the old bytes (S4.3), write ``fact`` to ``target``, drop a renamed-away file.

    Returns the fact as a reader will see it and the active paths that went away.
    """
    store = stores.get(fact.scope)
    data = render_fact(fact)
    removed: list[Path] = []
    if existing is None:
        atomic_write(store.fs, target, data, create_only=True, revision=fact.revision)
    else:
        old_root = stores.owner(existing.path).root
        with snapshot_first(store.fs, old_root, fact.id, existing.fact.revision, existing.data):
            if existing.path == target:
                atomic_write(store.fs, target, data, revision=fact.revision)
            else:
                _rename(store, existing.path, target, data, fact.revision)
                removed.append(existing.path)
    read_back = parse_fact(
        data, path=target, store_scope=store.scope, mtime=fact.updated_at or datetime.now(UTC)
    ).fact
    return read_back, removed


def _rename(store: Store, old: Path, target: Path, data: bytes, revision: int) -> None:
    """Create the new name first (a crash never loses the fact), then drop the old name.

    Once the new file is linked the old one must go even if a directory fsync failed, so one
    id never stays active under two names; the durability doubt is reported afterwards.
    """
    doubt: DurabilityUnknown | None = None
    try:
        atomic_write(store.fs, target, data, create_only=True, revision=revision)
    except DurabilityUnknown as exc:
        doubt = exc
    store.fs.unlink(old)
    try:
        fsync_dir(store.fs, old.parent)
    except OSError as exc:
        doubt = doubt or DurabilityUnknown(f"{old.parent} could not be synced: {exc}", revision)
    if doubt is not None:
        raise doubt


def _archive_other_copy(stores: Stores, fact: Fact, now: datetime) -> tuple[Path, Path] | None:
    """S4.11: one active copy per name — an unqualified save archives the other scope's copy.

    Returns (the copy's path, its archive entry), or None when there was nothing to archive.
    """
    other = stores.other(fact.scope)
    try:
        copy = other.load_name(fact.name)
    except FactFormatError:
        return None
    if copy is None or copy.fact.id == fact.id:
        return None
    return copy.path, move_to_archive(other.fs, other.root, copy.path, fact.name, now)


def refresh_indexes(
    stores: Stores, scopes: set[Scope], touched: Iterable[Path] | None = None
) -> tuple[str, ...]:
    """Rewrite the managed lines of MEMORY.md in the stores of ``scopes`` (S4.9).

    ``touched``: every fact file this write created, replaced or removed, in any store. With
    it, a store whose writer state is ready (``write_state``) re-reads only those files and
    edits MEMORY.md from its rows; without it (a rebuild), every file is read.

    Runs after the fact is committed, so a failure here must not look like "nothing changed":
    MEMORY.md is derived data that the next write regenerates, and the failure is returned as a
    warning for ``Changes.warnings`` instead of being raised.
    """
    paths = None if touched is None else list(touched)
    warnings: list[str] = []
    for store in stores.all():
        writes = store.writes if store.writes is not None and store.writes.ready else None
        if writes is not None and paths is not None:
            writes.touched(paths)  # also records the new files in the derived index
        if store.scope in scopes:
            try:
                if writes is not None and paths is None:
                    writes.reload()
                if writes is None or not writes.write_memory():
                    with gc_paused():
                        update_index(store.fs, store.root, store.snapshot().facts)
            except (StoreIOError, OSError) as exc:
                reason = exc.message if isinstance(exc, StoreIOError) else str(exc)
                warnings.append(f"{store.root / 'MEMORY.md'} was not updated: {reason}")
    return tuple(warnings)


def restore(
    stores: Stores, ref: str, revision: int, expected_revision: int | None, now: datetime
) -> Changes:
    """Make snapshot ``revision`` the content of a new revision (S4.6); the active one is a no-op.

    Title, description, type and body come from the snapshot; id, name and scope stay.
    """
    active = resolve_loaded(stores, ref)
    if expected_revision is not None and expected_revision != active.fact.revision:
        raise RevisionConflict(expected_revision, active.fact.revision)
    if revision == active.fact.revision:
        return Changes(fact=active.fact)
    order = (stores.get(active.fact.scope), stores.other(active.fact.scope))
    chosen = [f for f in history(order, active.fact.id, active.fact.name) if f.revision == revision]
    if not chosen:
        raise FactNotFound(f'memory revision {revision} of "{ref}" not found')
    snapshot = chosen[0]
    fact = records.replace(
        active.fact,
        revision=active.fact.revision + 1,
        scope=stores.owner(active.path).scope,
        title=snapshot.title,
        description=snapshot.description,
        type=snapshot.type,
        body=snapshot.body,
        updated_at=now,
        path=None,
        stamp=None,
    )
    written, _ = write_fact(stores, active, fact, active.path)
    warnings = refresh_indexes(stores, {fact.scope}, [active.path])
    return Changes(fact=written, written=(active.path,), ids=(fact.id,), warnings=warnings)
