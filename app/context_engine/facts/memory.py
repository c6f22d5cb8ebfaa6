"""``Memory``: the two stores of one workspace behind one object (S4, S5.1).

Reads return immutable snapshots and never write or lock. Every mutation takes the OS locks of
both stores (project, then global: one fixed order, so two writers never deadlock), upgrades a
store not yet migrated by this object (S5.1, "on open"), runs its checks and writes under those
locks, and returns a ``Changes`` value. OS errors before a commit point surface as
``StoreIOError``; the store is then unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ContextEngineError, StoreIOError
from ..paths import EnginePaths
from ..records import record
from .changes import Changes
from .derived_index import Summary, store_index
from .fs import FS, store_lock, sweep_temps
from .model import Diagnostic, Fact, FactType, Scope, utc_now
from .resolve import Stores, resolve_loaded
from .store import LoadedFile, Store

if TYPE_CHECKING:
    from .archive import ArchivedEntry
    from .recovery import ArchiveCache

# The write modules (saving, recovery, migration: the codec, YAML) load on the first write:
# a read the derived index answers imports none of them.


@record
class MemorySnapshot:
    """Active facts of both stores sorted by (name, scope, id) (S4.10), plus file diagnostics."""

    facts: tuple[Fact, ...]
    diagnostics: tuple[Diagnostic, ...]


class Memory:
    """The project and global stores of a workspace: list, resolve, save, forget, recover."""

    def __init__(
        self,
        paths: EnginePaths,
        *,
        fs: FS | None = None,
        clock: Callable[[], datetime] = utc_now,
        lock_timeout: float = 10.0,
    ) -> None:
        self.paths = paths
        self.fs = fs or FS()
        self.clock = clock
        self.lock_timeout = lock_timeout
        self.stores = Stores(
            Store(paths.project_store, "project", self.fs, store_index(paths, "project")),
            Store(paths.global_store, "global", self.fs, store_index(paths, "global")),
        )
        # Keep each store's writer state (facts/write_state.py), made on the first write.
        self.keep_write_state = True
        self._migrated: set[Scope] = set()
        # Legacy files the last migration of each store left untouched (ambiguous shapes).
        self.migration_skipped: dict[Scope, list[Diagnostic]] = {}
        self._archive_cache: ArchiveCache = {}
        self._archive_lock = threading.Lock()

    @classmethod
    def open(
        cls,
        paths: EnginePaths,
        *,
        fs: FS | None = None,
        clock: Callable[[], datetime] = utc_now,
        lock_timeout: float = 10.0,
    ) -> Memory:
        """A ``Memory`` whose stores were upgraded on open (S5.1)."""
        memory = cls(paths, fs=fs, clock=clock, lock_timeout=lock_timeout)
        memory.migrate()
        return memory

    # -- reads (never lock, never write) ------------------------------------------------------

    def snapshot(self) -> MemorySnapshot:
        """Both stores read now: facts sorted by (name, scope, id), diagnostics by path."""
        facts: list[Fact] = []
        diagnostics: list[Diagnostic] = []
        for store in self.stores.all():
            snap = store.snapshot()
            facts.extend(snap.facts)
            diagnostics.extend(snap.diagnostics)
        facts.sort(key=lambda f: (f.name, f.scope, f.id))
        return MemorySnapshot(tuple(facts), tuple(diagnostics))

    def file_identities(self) -> dict[int, tuple[int, int, int, int, int, int]]:
        """``id(fact)`` → the lstat identity it was read under, for the last snapshot's facts."""
        found: dict[int, tuple[int, int, int, int, int, int]] = {}
        for store in self.stores.all():
            found.update(store.identities())
        return found

    def summaries(self) -> list[Summary]:
        """Both stores' indexed list rows (no bodies) still vouched for by their files.

        For a table's first paint over many facts: no file is read. Changed or unindexed
        files are missing here; ``snapshot()`` is the complete, validated answer.
        """
        rows = [row for store in self.stores.all() for row in store.summaries()]
        rows.sort(key=lambda r: (r.name, r.scope, r.id))
        return rows

    def list_all(self) -> tuple[Fact, ...]:
        """ListAll (S4.10): both stores, sorted by (name, scope, id)."""
        return self.snapshot().facts

    def list_legacy(self) -> tuple[Fact, ...]:
        """List (S4.10, legacy view): one fact per name, project first."""
        chosen: dict[str, Fact] = {}
        for fact in self.list_all():
            current = chosen.get(fact.name)
            if current is None or (current.scope == "global" and fact.scope == "project"):
                chosen[fact.name] = fact
        return tuple(chosen[name] for name in sorted(chosen))

    def list_archived(self) -> tuple[ArchivedEntry, ...]:
        """ListArchived (S4.10): archive entries of both stores, newest first."""
        with self._archive_lock:
            from .recovery import list_archived

            return tuple(list_archived(self.stores, self._archive_cache))

    def load(self, ref: str) -> LoadedFile:
        """The active file a ref names, with its exact bytes and ``digest`` (for C6 checks)."""
        return resolve_loaded(self.stores, ref)

    def resolve(self, ref: str) -> Fact:
        """The active fact for an id, a reference (``project/x.md``) or a bare name."""
        return self.load(ref).fact

    def revisions(self, ref: str) -> tuple[Fact, ...]:
        """History of the fact ``ref`` names from both stores, newest first, active excluded."""
        from .revisions import history

        active = self.resolve(ref)
        order = (self.stores.get(active.scope), self.stores.other(active.scope))
        return tuple(
            f for f in history(order, active.id, active.name) if f.revision != active.revision
        )

    # -- mutations (both locks held) ----------------------------------------------------------

    def save(
        self,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        body: str | None = None,
        type: FactType | None = None,
        scope: Scope | None = None,
        id: str | None = None,
        expected_revision: int | None = None,
        expected_digest: str | None = None,
        create_only: bool = False,
    ) -> Changes:
        """Create or update one fact (S4.1, S4.2, S4.11); ``None`` inherits on update.

        ``name`` may be a reference (``global/x.md``): then the other scope's copy is kept.
        ``expected_digest`` is the sha256 of the bytes the caller read (``load(ref).digest``).
        """
        from .saving import SaveRequest, save

        request = SaveRequest(
            name=name,
            title=title,
            description=description,
            body=body,
            type=type,
            scope=scope,
            id=id,
            expected_revision=expected_revision,
            expected_digest=expected_digest,
            create_only=create_only,
        )
        with self._writing():
            return save(self.stores, request, self.clock())

    def restore(self, ref: str, revision: int, expected_revision: int | None = None) -> Changes:
        """Make snapshot ``revision`` a new revision (S4.6); the active revision is a no-op."""
        with self._writing():
            from .saving import restore

            return restore(self.stores, ref, revision, expected_revision, self.clock())

    def forget(self, ref: str) -> Changes:
        """Archive what ``ref`` names (S4.7); a missing fact is not an error."""
        with self._writing():
            from .recovery import forget

            return forget(self.stores, ref, self.clock())

    def recover(self, archive_path: str | Path) -> Changes:
        """Bring an archive entry back at a new revision, keeping its id (S4.8)."""
        with self._writing():
            from .recovery import recover

            return recover(self.stores, archive_path, self.clock())

    def close(self) -> None:
        """Close both stores' derived index and writer state (they reopen on next use)."""
        for store in self.stores.all():
            if store.index is not None:
                store.index.close()
            if store.writes is not None:
                store.writes.close()

    def migrate(self) -> int:
        """Upgrade legacy files of both stores (S5.1); returns how many were rewritten.

        Files left untouched because their shape is ambiguous are in ``migration_skipped``.
        A store whose writer state vouches for its files re-reads only those still legacy.
        """
        count = 0
        for store in self.stores.all():
            if not store.root.is_dir():
                self._migrated.add(store.scope)
                continue
            with self._guard(), self._session(store):
                count += self._migrate_locked(store)
        return count

    def rebuild_indexes(self) -> Changes:
        """Rewrite the managed lines of both MEMORY.md files from the fact files (S4.9)."""
        with self._writing():
            from .saving import refresh_indexes

            return Changes(warnings=refresh_indexes(self.stores, {"project", "global"}))

    def _migrate_locked(self, store: Store) -> int:
        from .migration import migrate_store  # the codec loads only when a store is upgraded

        skipped: list[Diagnostic] = []
        writes = store.writes
        if writes is not None and writes.ready:
            candidates = [store.root / name for name in writes.legacy_names()]
            rewritten = migrate_store(store, skipped, candidates)
        else:
            rewritten = migrate_store(store, skipped)
        self.migration_skipped[store.scope] = skipped
        self._migrated.add(store.scope)
        if rewritten:
            from .saving import refresh_indexes

            refresh_indexes(self.stores, {store.scope}, rewritten)
        return len(rewritten)

    @contextmanager
    def _session(self, store: Store) -> Iterator[None]:
        """One store's lock and its writer state for one operation (``write_state``).

        The state is brought up to date first (a store that is unchanged since the last write
        is not even listed); without a usable state, stale temp files are swept as before.
        On failure it is dropped unsaved, so the next writer looks at the directory again.
        """
        with store_lock(self.fs, store.root, timeout=self.lock_timeout, sweep=False):
            if store.writes is None and self.keep_write_state:
                from .write_state import WriteState, state_path

                store.writes = WriteState(
                    state_path(self.paths, store.scope), store, str(self.paths.state)
                )
            writes = store.writes
            if writes is None or not writes.begin():
                sweep_temps(self.fs, store.root)
            try:
                yield
            except BaseException:
                if writes is not None:
                    writes.abort()
                raise
            if writes is not None:
                writes.finish()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Both store locks (project first), migration on first use, OS errors as StoreIOError.

        A writing process keeps the derived index: it is created if missing, and the files
        each write touches are recorded in it under the lock, right after they are written.
        """
        with self._guard(), ExitStack() as stack:
            for store in self.stores.all():
                if store.index is not None:
                    store.index.create = True
                stack.enter_context(self._session(store))
            try:
                for store in self.stores.all():
                    if store.scope not in self._migrated:
                        self._migrate_locked(store)
                yield
            finally:
                for store in self.stores.all():
                    if store.index is not None:
                        store.index.close()  # checkpoint the WAL while the lock is held

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except ContextEngineError:
            raise
        except OSError as exc:
            where = f": {exc.filename}" if exc.filename else ""
            raise StoreIOError(
                f"memory store I/O error{where}: {exc.strerror or exc}", exc.errno
            ) from exc
