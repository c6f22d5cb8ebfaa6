"""Facts presenter: snapshot reads, off-thread filtering and detail rendering for the tab."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from ..render.markdown import render_markdown
from ..services.backend import Backend
from ..services.fact_rows import FactFilter, FactRow, FactsSnapshot, filter_rows, sort_for
from ..services.hub import ChangeSet, Hub
from ..services.tasks import Op, TaskManager
from ..widgets.facts_tab import SORT_KEYS, FactsTab, detail_html


class FactsPresenter(QObject):
    """Keeps the Facts tab showing the latest snapshot; identical snapshots change nothing.

    Signals:
        snapshot_applied(object): a new :class:`FactsSnapshot` reached the tab (echoes do not)
    """

    snapshot_applied = Signal(object)

    def __init__(self, tab: FactsTab, backend: Backend, tasks: TaskManager, hub: Hub) -> None:
        super().__init__(tab)
        self.tab = tab
        self.backend = backend
        self.tasks = tasks
        self.snapshot = FactsSnapshot((), ())
        self._loaded = False
        self._filter_generation = 0
        # The snapshot sorted for one (column, descending); filtering keeps that order.
        self._sorted: tuple[tuple[int, bool], tuple[FactRow, ...]] | None = None
        # The last filter result, to narrow from while the person keeps typing.
        self._last: tuple[FactFilter, tuple[FactRow, ...], tuple[FactRow, ...]] | None = None
        self._detail_generation = 0
        self._loading: Op | None = None
        self._reload_again = False
        hub.changes_applied.connect(self._on_changes)
        tasks.finished.connect(self._on_task_finished)
        tab.filter_changed.connect(self._on_filter_changed)
        tab.selection_changed.connect(self._on_selection_changed)

    def reload(self) -> None:
        """Read both stores on the read pool; coalesce requests while one read runs."""
        if self._loading is not None and not self._loading.token.cancelled:
            self._reload_again = True
            return
        # The first read of a large store is long work: shown in the status bar, cancellable.
        self._loading = self.tasks.read(
            Op("Reading the stores", self.backend.facts, self._on_snapshot, self._on_failed,
               long=not self._loaded)
        )

    @Slot(object)
    def _on_task_finished(self, op: Op) -> None:
        if op is self._loading and op.token.cancelled:
            self._loading = None
            if not self._loaded:
                self.tab.summary.setText("Reading cancelled.<br>Press F5 to read the stores.")

    @Slot(object)
    def _on_changes(self, changes: ChangeSet) -> None:
        if changes.touches("facts") or changes.touches("archive"):
            self.reload()

    def _on_snapshot(self, snapshot: FactsSnapshot) -> None:
        self._loading = None
        if self._reload_again:
            self._reload_again = False
            self.reload()
        # Compare ids and revisions: the echo of our own write (or a no-op touch) changes nothing.
        if self._loaded and snapshot.signature == self.snapshot.signature:
            return
        self._loaded = True
        self.snapshot = snapshot
        self._sorted = None
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
        generation = self._filter_generation
        spec = (criteria.sort_column, criteria.descending)
        cached = self._sorted if self._sorted is not None and self._sorted[0] == spec else None
        rows = self.snapshot.rows
        narrowed = self._narrowing_base(criteria, rows)

        def work(token: object) -> tuple[tuple[FactRow, ...], tuple[FactRow, ...]]:
            ordered = cached[1] if cached is not None else sort_for(rows, criteria, SORT_KEYS)
            return ordered, filter_rows(narrowed if narrowed is not None else ordered, criteria)

        def done(result: tuple[tuple[FactRow, ...], tuple[FactRow, ...]]) -> None:
            ordered, shown = result
            if rows is self.snapshot.rows:
                self._sorted = (spec, ordered)
                self._last = (criteria, shown, rows)
            if generation == self._filter_generation:  # a newer keystroke wins
                self.tab.show_rows(shown)

        self.tasks.read(Op("Filtering", work, done))

    def _narrowing_base(
        self, criteria: FactFilter, rows: tuple[FactRow, ...]
    ) -> tuple[FactRow, ...] | None:
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

        def work(token: object) -> str:
            return detail_html(row, render_markdown(row.fact.body))

        def done(html_text: str) -> None:
            if generation == self._detail_generation:
                self.tab.show_detail(html_text)

        self.tasks.read(Op("Rendering", work, done))
