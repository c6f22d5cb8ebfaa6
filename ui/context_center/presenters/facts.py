"""Facts presenter: snapshot reads, off-thread filtering and detail rendering for the tab."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from context_engine.errors import ContextEngineError
from context_engine.facts.resolve import Stores
from PySide6.QtCore import QObject, Qt, Signal, Slot

from ..render.markdown import render_markdown
from ..services import backend as backend_module
from ..services.backend import Backend
from ..services.fact_delta import (
    KeyIndex,
    NeedsFullRead,
    Patched,
    merge_sorted,
    patch,
    read_changed,
)
from ..services.fact_rows import (
    Counts,
    FactFilter,
    FactRow,
    FactsSnapshot,
    adjusted_counts,
    counts_of,
    filter_rows,
    sort_for,
    unfiltered,
)
from ..services.fact_table import KeyRows, Rows, merge_rows, patch_table
from ..services.hub import ChangeSet, Hub
from ..services.tasks import CancelToken, Op, TaskManager
from ..widgets.facts_tab import SORT_KEYS, FactsTab, detail_html


def local_stores(backend: Backend | None) -> Stores | None:
    """The engine's two stores of a local window (per-file re-reads), else ``None``.

    Reads go through ``Store.load`` — the same parser as every snapshot — never around it.
    """
    if backend is None or not getattr(backend, "local", False):
        return None
    try:
        return backend.local_catalog().memory.stores
    except ContextEngineError:  # a remote catalog: no local files
        return None


def patch_columns(
    snapshot: FactsSnapshot, changed: dict[str, Any], ordered: Any, totals: Counts | None
) -> tuple[Patched, None, Any, Counts | None]:
    """A column table's snapshot with the changed files applied (for the read pool): the
    patched snapshot, the sorted rows merged (no full re-sort), the chart's counts adjusted."""
    rows = snapshot.rows
    assert isinstance(rows, Rows)
    result = patch_table(rows.table, changed)
    if not result.changed:
        return Patched(snapshot, changed=False), None, None, None
    table = result.table
    patched = FactsSnapshot(Rows(table), snapshot.diagnostics, snapshot.archived)
    removed = tuple(rows.table.row(i) for i in result.removed)
    added = tuple(table.row(i) for i in result.added if table.alive[i])
    merged = None
    if ordered is not None:
        (column, descending), shown = ordered
        if isinstance(shown, Rows):
            merged = ((column, descending), merge_rows(shown, table, result, column, descending))
    counted = adjusted_counts(totals, removed, added) if totals is not None else None
    return Patched(patched, removed, added), None, merged, counted


# A first read that parses every file (no derived index yet) shows the rows committed so far:
# at most every ``POST_EVERY`` seconds, never sooner than ``POST_COST`` times what the last
# showing took, and only once the files read have grown by ``POST_GROWTH`` since. Each showing
# builds a table of every committed row (O(rows)): growing geometrically, all of them together
# cost about as much as three of the last (~3 s at 100,000 facts), not O(rows²).
POST_EVERY = 1.5
POST_COST = 4.0
POST_GROWTH = 1.5


class FirstRead:
    """The progress callback of a first read that parses the stores (on its worker thread).

    After each committed batch: stop if cancelled, say how far it got, and now and then show
    the rows the derived index holds by then (``post``, as a partial snapshot).
    """

    def __init__(self, op: Op, token: CancelToken, backend: Backend,
                 post: Callable[[FactsSnapshot], None]) -> None:
        self.op, self.token, self.backend, self.post = op, token, backend, post
        self.next_post = time.monotonic() + POST_EVERY
        self.posted = 0  # files read when the rows were last shown

    def __call__(self, done: int, total: int) -> None:
        """``done`` files of ``total`` read and committed."""
        self.token.check()  # a cancel stops the read here; every committed batch is kept
        self.op.report(f"Reading the stores: {done:,} of {total:,} files…")
        now = time.monotonic()
        if done >= total or now < self.next_post or done < self.posted * POST_GROWTH:
            return  # the complete table follows at once
        unchecked = self.backend.indexed_table(self.token)
        if unchecked is not None:
            self.post(replace(unchecked.snapshot, reading=True))
        end = time.monotonic()
        self.posted = done
        self.next_post = end + max(POST_EVERY, POST_COST * (end - now))


def _written_paths(detail: object) -> frozenset[str]:
    """The files one of our own writes (the engine's ``Changes``) created or removed."""
    paths = getattr(detail, "paths", None)
    if not isinstance(paths, tuple) or not paths:
        return frozenset()
    return frozenset(str(p) for p in paths)


class FactsPresenter(QObject):
    """Keeps the Facts tab showing the latest snapshot; identical snapshots change nothing.

    Signals:
        snapshot_applied(object): a new :class:`FactsSnapshot` reached the tab (echoes do not)
    """

    snapshot_applied = Signal(object)
    _page_ready = Signal(int, object)  # emitted on a reader thread, delivered on the GUI's

    def __init__(self, tab: FactsTab, backend: Backend, tasks: TaskManager, hub: Hub) -> None:
        super().__init__(tab)
        self.tab = tab
        self.backend = backend
        self.tasks = tasks
        self.snapshot = FactsSnapshot((), ())
        self._loaded = False
        self._filter_generation = 0
        # The snapshot sorted for one (column, descending); filtering keeps that order.
        self._sorted: tuple[tuple[int, bool], Sequence[FactRow]] | None = None
        # The last filter result, to narrow from while the person keeps typing.
        self._last: tuple[FactFilter, Sequence[FactRow], Sequence[FactRow]] | None = None
        # Counts of every row of one snapshot's rows (the chart when nothing is filtered); a
        # patch adjusts them by the rows it changed instead of counting 100,000 rows again.
        self._totals: tuple[Sequence[FactRow], Counts] | None = None
        self._detail_generation = 0
        self._loading: Op | None = None
        self._reload_again = False
        self._rows_generation = 0  # bumped by every full snapshot: older index pages are stale
        self._page_ready.connect(self._on_page, Qt.ConnectionType.QueuedConnection)
        # File-by-file patches of a large snapshot (watcher paths); one in flight at a time.
        self._index: KeyIndex | None = None
        self._patching: Op | None = None
        self._body_search: Op | None = None  # the running body phase of a filter
        self._pending_paths: set[str] = set()
        self._after_listing: set[str] = set()  # patched during a listing: re-read after it
        # The same paths for the listing's worker (appended here, read there: a list, so the
        # worker's copy never sees it change size mid-iteration).
        self._meanwhile: list[str] = []
        hub.changes_applied.connect(self._on_changes)
        tasks.finished.connect(self._on_task_finished)
        tab.filter_changed.connect(self._on_filter_changed)
        tab.selection_changed.connect(self._on_selection_changed)

    def reload(self) -> None:
        """Read both stores on the read pool; coalesce requests while one read runs.

        A local window lists through the derived index (``Backend.listed_facts``): every row
        validated against its file, no body kept (read when shown), so memory stays bounded
        at any size. Its first read shows every indexed row at once (``indexed_table``: no
        lstat, no notes) while the files are checked (``validated_table``); without indexed
        rows, a first page (one lstat per row). A remote window reads the full snapshot.
        """
        self._stop_body_search()  # F5: its answer would be for the old rows
        if self._loading is not None and not self._loading.token.cancelled:
            self._reload_again = True
            return
        backend = self.backend
        indexed = local_stores(backend) is not None  # local stores: patchable
        first = not self._loaded and callable(getattr(backend, "first_rows", None))
        at_once = first and callable(getattr(backend, "indexed_table", None))
        tabled = callable(getattr(backend, "listed_table", None))
        listed = callable(getattr(backend, "listed_facts", None))
        generation = self._rows_generation
        page = self._page_ready
        criteria = self.tab.criteria()
        previous = self.snapshot if self._loaded and not self.snapshot.partial else None
        stores = local_stores(backend)
        meanwhile = self._meanwhile = []

        def post(snapshot: FactsSnapshot) -> None:
            # Filtered and sorted here: at start-up the other tabs' reads fill the pool.
            shown = filter_rows(snapshot.rows, criteria, SORT_KEYS)
            page.emit(generation, (criteria, snapshot, shown, counts_of(shown)))

        def work(token: CancelToken) -> tuple[FactsSnapshot, KeyIndex | None]:
            # A first page and every indexed row at once (its files checked next), else a
            # first page checked by one lstat per row.
            page = backend.indexed_table(token, backend_module.FIRST_PAGE) if at_once \
                else None
            if page is not None:
                post(page.snapshot)
            unchecked = backend.indexed_table(token) if page is not None else None
            if unchecked is not None:
                post(unchecked.snapshot)
            elif first:
                rows = backend.first_rows(token)
                if rows is not None:
                    post(rows)
            # A column table (no Fact per row, search in the derived index), else rows.
            if unchecked is not None:
                snapshot: FactsSnapshot | None = backend.validated_table(unchecked, token)
            elif tabled and at_once:
                # No indexed row yet: every file is parsed, the rows shown as they are
                # committed and the count in the status bar.
                reading = FirstRead(op, token, backend, post)
                snapshot = backend.listed_table(token, previous, progress=reading)
            else:
                snapshot = backend.listed_table(token, previous) if tabled else None
            if snapshot is None and listed:
                snapshot = backend.listed_facts(token, previous)
            if snapshot is None:
                snapshot = backend.facts(token)
            elif first and unchecked is None:
                post(snapshot)  # the whole table now; the patch index follows (~1 s at 100k)
            if snapshot.columns and snapshot is not previous and indexed:
                table = snapshot.rows
                assert isinstance(table, Rows)
                table.table.keys = KeyRows(table.table)  # for patches: built once, here
                if unchecked is not None and meanwhile and stores is not None:
                    # Rows patched on screen while the files were checked: patched into the
                    # checked table too, so it never shows them older (re-read once more
                    # after it lands, as every path changed meanwhile).
                    try:
                        changed = read_changed(stores.all(), frozenset(meanwhile))
                    except NeedsFullRead:
                        changed = {}  # an unreadable file: the patch after it reads again
                    if changed:
                        snapshot = patch_columns(snapshot, changed, None, None)[0].snapshot
            # The key index for per-file patches, built with the rows (never twice); the rows
            # on screen (nothing changed) keep theirs; a column table patches by its columns.
            if snapshot is previous or not indexed or snapshot.columns:
                return snapshot, None
            return snapshot, KeyIndex(snapshot.rows)

        # The first read of a large store is long work: shown in the status bar, cancellable.
        op = Op("Reading the stores", work, self._on_loaded, self._on_failed,
                long=not self._loaded)
        self._loading = self.tasks.read(op)

    @Slot(int, object)
    def _on_page(self, generation: int, page: Any) -> None:
        """Rows from the index (already filtered): shown while the full snapshot is read."""
        criteria, snapshot, shown, counts = page
        if generation != self._rows_generation or (self._loaded and not self.snapshot.partial):
            return
        if self._loading is not None and self._loading.token.cancelled:
            return  # rows of a read the person cancelled, queued before the cancel took effect
        if criteria != self.tab.criteria():  # the person typed meanwhile: filter again
            self._apply_snapshot(snapshot)
            return
        self._loaded = True
        self.snapshot = snapshot
        self._sorted = None
        if unfiltered(criteria):
            self._totals = (snapshot.rows, counts)
        self.tab.show_snapshot(snapshot)
        self.tab.show_rows(shown, counts)
        self.snapshot_applied.emit(snapshot)

    @Slot(object)
    def _on_task_finished(self, op: Op) -> None:
        if op is self._loading and op.token.cancelled:
            self._loading = None
            self._rows_generation += 1  # its pages still queued are stale
            if not self._loaded:
                self.tab.show_stopped("Reading cancelled.<br>Press F5 to read the stores.")
            elif self.snapshot.partial:  # a first read stopped part-way: say what is shown
                self.tab.show_stopped(
                    f"Reading cancelled: {len(self.snapshot.rows):,} facts read so far are "
                    "shown.<br>Press F5 to read the stores."
                )

    @Slot(object)
    def _on_changes(self, changes: ChangeSet) -> None:
        if not (changes.touches("facts") or changes.touches("archive")):
            return
        stores = local_stores(self.backend)
        paths = changes.paths or _written_paths(changes.detail)
        if paths and stores is not None and (self._loaded or self._loading is not None):
            # Shown now (patched into the rows on screen) and, while a listing runs, re-read
            # once it has landed: whether it saw them or not, the files then say what is
            # true — no second listing (seconds at 100,000 facts).
            self._pending_paths.update(paths)
            if self._loading is not None:
                self._after_listing.update(paths)
                self._meanwhile.extend(paths)
            if self._loaded:
                self._patch_next(stores)
        else:
            self.reload()

    def _patch_next(self, stores: Stores) -> None:
        """Re-read only the named files and patch the rows (serially, off the GUI thread)."""
        if self._patching is not None or not self._pending_paths:
            return
        paths, self._pending_paths = frozenset(self._pending_paths), set()
        snapshot, index, ordered = self.snapshot, self._index, self._sorted
        totals = self._totals[1] if self._totals and self._totals[0] is snapshot.rows else None
        unreadable = {str(d.path) for d in snapshot.diagnostics}
        self._index = None  # the worker owns (and updates) it until done

        def work(token: CancelToken) -> tuple[Patched, KeyIndex | None, Any, Counts | None]:
            if paths & unreadable:
                raise NeedsFullRead("a file that could not be read changed")
            if snapshot.columns:
                return patch_columns(snapshot, read_changed(stores.all(), paths), ordered,
                                     totals)
            keys = index if index is not None else KeyIndex(snapshot.rows)
            changed = read_changed(stores.all(), paths)
            patched = patch(snapshot, keys, changed)
            merged = None
            if ordered is not None and patched.changed:  # keep the sort: no full re-sort
                (column, descending), rows = ordered
                key = SORT_KEYS[column] if 0 <= column < len(SORT_KEYS) else None
                if callable(key):
                    merged = ((column, descending), merge_sorted(
                        rows, patched.removed, patched.added, key, descending))
            counted = None
            if totals is not None and patched.changed:
                counted = adjusted_counts(totals, patched.removed, patched.added)
            return patched, keys, merged, counted

        def done(result: tuple[Patched, KeyIndex | None, Any, Counts | None]) -> None:
            self._patching = None
            patched, keys, merged, counted = result
            if snapshot is not self.snapshot:  # a full read landed meanwhile: patch again
                self._pending_paths.update(paths)
            else:
                self._index = keys
                if patched.changed:
                    if counted is not None:
                        self._totals = (patched.snapshot.rows, counted)
                    self._apply_snapshot(patched.snapshot, merged)
            self._patch_next(stores)

        def failed(exc: BaseException) -> None:
            self._patching = None
            self._index = None
            self.reload()

        self._stop_body_search()  # the patch must not wait behind a scan for stale rows
        self._patching = self.tasks.read(Op("Reading changed facts", work, done, failed))

    def _on_loaded(self, result: tuple[FactsSnapshot, KeyIndex | None]) -> None:
        snapshot, index = result
        self._on_snapshot(snapshot, index)

    def _on_snapshot(self, snapshot: FactsSnapshot, index: KeyIndex | None = None) -> None:
        self._loading = None
        if self._reload_again:
            self._reload_again = False
            self.reload()
        self._rows_generation += 1
        # Compare ids and revisions: the echo of our own write (or a no-op touch) changes nothing.
        # A first page is always replaced by the complete listing.
        # (A new column table is never an echo: an unchanged relisting answers the old one.)
        if self._loaded and not self.snapshot.partial and (
                snapshot is self.snapshot or (not snapshot.columns and not self.snapshot.columns
                                              and snapshot.signature == self.snapshot.signature)):
            if self._index is None and self._patching is None:
                self._index = index
        else:
            self._index = index
            self._apply_snapshot(snapshot)
        stores = local_stores(self.backend)
        if stores is not None and self._loading is None:
            self._pending_paths.update(self._after_listing)  # changed while the listing ran
            self._after_listing.clear()
            self._patch_next(stores)

    def _apply_snapshot(self, snapshot: FactsSnapshot, ordered: Any = None) -> None:
        self._loaded = True
        self.snapshot = snapshot
        self._sorted = ordered  # the new rows already sorted (a patch), else sorted on demand
        self.tab.show_snapshot(snapshot)
        self._apply_filter(self.tab.criteria())
        self.snapshot_applied.emit(snapshot)

    def _on_failed(self, error: BaseException) -> None:
        self._loading = None
        self.tab.show_detail(f"<p style='color:#cf222e'>Could not read the stores: {error}</p>")

    @Slot(object)
    def _on_filter_changed(self, criteria: FactFilter) -> None:
        self._apply_filter(criteria)

    def _apply_filter(self, criteria: FactFilter) -> None:
        self._filter_generation += 1
        self._stop_body_search()  # superseded: its scan is aborted, its rows never merged
        generation = self._filter_generation
        spec = (criteria.sort_column, criteria.descending)
        cached = self._sorted if self._sorted is not None and self._sorted[0] == spec else None
        rows = self.snapshot.rows
        narrowed = self._narrowing_base(criteria, rows)
        every = unfiltered(criteria)
        totals = self._totals[1] if every and self._totals and self._totals[0] is rows else None

        def work(token: object) -> tuple[Sequence[FactRow], Sequence[FactRow], Any, Any] | None:
            if generation != self._filter_generation:
                return None  # a newer keystroke is queued: not run at all
            ordered = cached[1] if cached is not None else sort_for(rows, criteria, SORT_KEYS)
            base = narrowed if narrowed is not None else ordered
            if isinstance(base, Rows) and base.needs_bodies(criteria):
                # Phase one: the fields held as columns, at once; bodies follow (below).
                shown: Sequence[FactRow] = base.filtered_fields(criteria, narrowed is not None)
                return ordered, shown, counts_of(shown), base
            shown = filter_rows(base, criteria, narrowing=narrowed is not None)
            return ordered, shown, totals if totals is not None else counts_of(shown), None

        def done(result: tuple[Sequence[FactRow], Sequence[FactRow], Any, Any] | None) -> None:
            if result is None:
                return
            ordered, shown, counts, bodies = result
            if rows is self.snapshot.rows:
                self._sorted = (spec, ordered)
                if bodies is None:  # a final result: the base of the next, narrowing one
                    self._last = (criteria, shown, rows)
                if every:
                    self._totals = (rows, counts)
            if generation == self._filter_generation:  # a newer keystroke wins
                self.tab.show_rows(shown, counts)
                if bodies is not None:
                    self._search_bodies(generation, criteria, bodies, narrowed is not None, rows)

        self.tasks.read(Op("Filtering", work, done))

    def _search_bodies(self, generation: int, criteria: FactFilter, base: Rows,
                       narrowing: bool, rows: Sequence[FactRow]) -> None:
        """Phase two of a filter: the body search in the derived index, on the read pool;
        its rows (a superset of phase one's, same order) replace those shown, selection kept."""
        def work(token: CancelToken) -> tuple[Rows, Any]:
            found = base.filtered(criteria, narrowing, cancelled=lambda: token.cancelled)
            return found, counts_of(found)

        def done(result: tuple[Rows, Any]) -> None:
            if self._body_search is op:
                self._body_search = None
            if generation != self._filter_generation or rows is not self.snapshot.rows:
                return  # superseded while it ran (its op is cancelled then; belt and braces)
            found, counts = result
            self._last = (criteria, found, rows)
            self.tab.show_rows(found, counts)

        def failed(error: BaseException) -> None:
            if self._body_search is op:
                self._body_search = None
            self.tab.show_detail(f"<p style='color:#cf222e'>Could not search bodies: {error}</p>")

        op = Op("Searching bodies…", work, done, failed, long=True)
        self._body_search = self.tasks.read(op)

    def _stop_body_search(self) -> None:
        """Abort a running body search (its SQLite scan stops at the next progress check)."""
        if self._body_search is not None:
            self._body_search.cancel()
            self._body_search = None

    def _narrowing_base(
        self, criteria: FactFilter, rows: Sequence[FactRow]
    ) -> Sequence[FactRow] | None:
        """The last result when ``criteria`` can only narrow it (typing on), else ``None``.

        Every row matching the new words also matched the old ones when each old word is
        part of some new word ("rel" → "rele"), with the same filters, sort and snapshot.
        """
        if self._last is None:
            return None
        last, shown, last_rows = self._last
        if last_rows is not rows or (last.type, last.scope, last.freshness, last.sort_column,
                                     last.descending) != (criteria.type, criteria.scope,
                                                          criteria.freshness,
                                                          criteria.sort_column,
                                                          criteria.descending):
            return None
        old_words = last.text.lower().split()
        new_words = criteria.text.lower().split()
        if all(any(o in n for n in new_words) for o in old_words):
            return shown
        return None

    @Slot(object)
    def _on_selection_changed(self, row: FactRow | None) -> None:
        self._detail_generation += 1
        if row is None:
            return
        generation = self._detail_generation
        backend = self.backend

        def work(token: object) -> str:
            # Rows from the index carry no body: read this one fact's file now.
            body = backend.body(row.fact.reference) if row.lazy else row.fact.body
            return detail_html(row, render_markdown(body))

        def done(html_text: str) -> None:
            if generation == self._detail_generation:
                self.tab.show_detail(html_text)

        def failed(error: BaseException) -> None:
            if generation == self._detail_generation:
                self.tab.show_detail(
                    f"<p style='color:#cf222e'>Could not read {row.fact.reference}: {error}</p>")

        self.tasks.read(Op("Rendering", work, done, failed))
