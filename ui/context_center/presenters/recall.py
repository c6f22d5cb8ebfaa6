"""Recall presenter: runs recall on the read pool; loads recorded traces off-thread."""

from __future__ import annotations

from context_engine.recall.trace import RecallTrace
from PySide6.QtCore import QObject, Signal, Slot

from ..services.backend import Backend, RecallRun, TraceHistory
from ..services.hub import ChangeSet, Hub
from ..services.tasks import Op, TaskManager
from ..widgets.recall_tab import RecallTab


class RecallPresenter(QObject):
    """Shows the last trace on open and every recall run from the tab.

    Signals:
        ran(object): a :class:`RecallRun` finished and is shown
    """

    ran = Signal(object)

    def __init__(self, tab: RecallTab, backend: Backend, tasks: TaskManager, hub: Hub) -> None:
        super().__init__(tab)
        self.tab = tab
        self.backend = backend
        self.tasks = tasks
        self.last_run: RecallRun | None = None
        hub.changes_applied.connect(self._on_changes)
        tab.run_requested.connect(self._on_run)
        tab.trace_selected.connect(self._on_trace_selected)

    @Slot(object)
    def _on_changes(self, changes: ChangeSet) -> None:
        if changes.touches("traces"):
            self.tasks.read(Op("Reading traces", self.backend.trace_history, self._on_history))

    def _on_history(self, history: TraceHistory) -> None:
        self.tab.traces_model.set_rows(history.recent)
        if self.last_run is None and history.last is not None:
            self.tab.show_trace(history.last, None)

    @Slot(str, int, int)
    def _on_run(self, message: str, limit: int, budget: int) -> None:
        def done(run: RecallRun) -> None:
            self.last_run = run
            self.tab.show_trace(run.trace, run.block)
            self.ran.emit(run)
            self.tasks.read(Op("Reading traces", self.backend.trace_history, self._on_history))

        self.tasks.read(Op("Running recall",
                           lambda t: self.backend.recall(message, limit, budget, t),
                           done, long=True))

    @Slot(object)
    def _on_trace_selected(self, trace: RecallTrace) -> None:
        run = self.last_run
        same = run is not None and run.trace.at == trace.at
        self.tab.show_trace(trace, run.block if same and run is not None else None)
