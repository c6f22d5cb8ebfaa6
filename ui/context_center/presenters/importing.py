"""Import presenter: File ▸ Import… scans on the read pool and writes on the serial writer.

The engine does the work (``transfer.sources.scan_agent``, ``transfer.plan.plan``,
``transfer.writing.import_candidates``: the import's one write path); this class only moves
results between worker threads and the dialog. Cancel stops a scan, or an import between two
whole facts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QWidget

from ..dialogs.import_dialog import ImportDialog
from ..services.backend import Backend
from ..services.tasks import CancelToken, Op, TaskManager

if TYPE_CHECKING:  # the engine's transfer package loads on first use, not at app start
    from context_engine.transfer.candidate import Planned
    from context_engine.transfer.writing import ImportReport


def import_candidates(*args: Any, **kwargs: Any) -> ImportReport:
    """The engine's import (loaded on first call): the one write path of an import."""
    from context_engine.transfer.writing import import_candidates as run

    return run(*args, **kwargs)


class ImportPresenter(QObject):
    """Owns the dialog of one window.

    Signals:
        imported(object): an import finished with this ``ImportReport``
        progressed(int, int): done, total (emitted from the writer thread, queued to the GUI)
    """

    imported = Signal(object)
    progressed = Signal(int, int)

    def __init__(self, window: QWidget, backend: Backend, tasks: TaskManager) -> None:
        super().__init__(window)
        self.backend = backend
        self.tasks = tasks
        self.dialog = ImportDialog(window)
        self._op: Op | None = None
        self._diagnostics: tuple[Any, ...] = ()
        self.dialog.scan_requested.connect(self.scan)
        self.dialog.import_requested.connect(self.write)
        self.dialog.cancel_requested.connect(self.cancel)
        self.progressed.connect(self.dialog.show_progress)

    @Slot()
    def open(self) -> None:
        """Show the dialog (File ▸ Import…)."""
        self.dialog.show()

    @Slot(str)
    def scan(self, agent: str) -> None:
        """Read ``agent``'s memories and plan them against both stores (never writes)."""
        def work(token: CancelToken) -> tuple[tuple[Planned, ...], tuple[Any, ...]]:
            from context_engine.transfer.plan import plan
            from context_engine.transfer.sources import scan_agent

            found = scan_agent(agent, self.backend.paths)  # type: ignore[arg-type]  # reason: the dialog offers only known agent names
            token.check()
            facts = self.backend.catalog.list_facts().facts
            return plan(found.candidates, facts), found.diagnostics

        self.dialog.set_busy(True, "Reading memories…")
        self._op = self.tasks.read(Op("Scanning memories", work, self._on_scanned,
                                      self._on_failed, long=True))

    @Slot()
    def write(self) -> None:
        """Write the ticked rows as edited (a person's explicit action, S10.5)."""
        candidates, allowed = self.dialog.model.to_write()
        if not candidates:
            self.dialog.status.setText("Nothing is ticked.")
            return
        def work(token: CancelToken) -> ImportReport:
            catalog = self.backend.local_catalog()
            return import_candidates(catalog, candidates, allow_flagged=allowed,
                                     progress=lambda d, t, _w: self.progressed.emit(d, t),
                                     check=token.check, surface="app")

        self.dialog.set_busy(True, f"Importing {len(candidates)} memories…")
        self._op = self.tasks.write(Op("Importing memories", work, self._on_imported,
                                       self._on_failed, long=True))

    @Slot()
    def cancel(self) -> None:
        """Stop what runs; an import keeps the facts it finished, whole."""
        if self._op is not None:
            self._op.cancel()
            self._op = None
        self.dialog.set_busy(False, "Cancelled. Facts already written are complete; a new "
                                    "import skips them.")

    def _on_scanned(self, result: tuple[tuple[Planned, ...], tuple[Any, ...]]) -> None:
        self._op = None
        planned, self._diagnostics = result
        self.dialog.model.set_planned(planned)
        new = sum(1 for p in planned if p.status == "new")
        flagged = sum(1 for p in planned if p.status == "new" and p.flagged)
        text = (f"{len(planned)} found: {new} new ({flagged} flagged: untick the warning to "
                f"import one), {len(planned) - new} already here.")
        if self._diagnostics:
            text += " Skipped: " + "; ".join(
                f"{d.path.name}: {d.message}" for d in self._diagnostics)
        self.dialog.set_busy(False, text)

    def _on_imported(self, report: ImportReport) -> None:
        self._op = None
        self.dialog.model.mark_clean()
        text = f"Imported {len(report.written)} memories."
        if report.failed:
            text += " Failed: " + "; ".join(f"{c.name}: {m}" for c, m in report.failed)
        self.dialog.set_busy(False, text)
        self.imported.emit(report)

    def _on_failed(self, exc: BaseException) -> None:
        self._op = None
        self.dialog.set_busy(False, f"Failed: {exc}")
