"""File ▸ Export bundle… / Import bundle…: the CLI's export and restore, on the serial writer.

Both run as long ops (status-bar progress and its Cancel). Importing first checks the bundle and
plans without writing, shows the plan, and asks what to do with facts that differ here (skip
them, or keep the bundle's content as a new revision); nothing is written if the person backs
out. The engine does the work (``transfer.export``, ``transfer.restore``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from ..services.backend import Backend
from ..services.tasks import CancelToken, Op, TaskManager

if TYPE_CHECKING:  # tarfile and the transfer package load on first use, not at app start
    from context_engine.transfer.export import ExportReport
    from context_engine.transfer.restore import RestoreReport

Choice = str | None  # "skip" | "revision" | None (back out)
# (parent, plan text, has conflicts, called with the choice once the person answers)
AskChoice = Callable[[QWidget, str, bool, Callable[[Choice], None]], None]
AskPath = Callable[[QWidget], str]
BUNDLE_FILTER = "Bundles (*.tar.gz *.tgz *.tar *.zip);;All files (*)"


def ask_export_path(parent: QWidget) -> str:
    """A save dialog for the bundle file."""
    path, _ = QFileDialog.getSaveFileName(parent, "Export bundle", "memories.tar.gz",
                                          BUNDLE_FILTER)
    return path


def ask_bundle_path(parent: QWidget) -> str:
    """An open dialog for the bundle file."""
    path, _ = QFileDialog.getOpenFileName(parent, "Import bundle", "", BUNDLE_FILTER)
    return path


def ask_choice(parent: QWidget, text: str, conflicts: bool,
               answered: Callable[[Choice], None]) -> None:
    """Show the plan (window-modal, not blocking); with conflicts, ask skip or keep as revisions.

    ``answered`` gets the choice when the box closes (None: cancelled or closed).
    """
    box = QMessageBox(parent)
    box.setWindowTitle("Import bundle")
    box.setText(text)
    restore = box.addButton("Skip conflicts" if conflicts else "Import",
                            QMessageBox.ButtonRole.AcceptRole)
    revise = box.addButton("Keep as new revisions", QMessageBox.ButtonRole.YesRole) if (
        conflicts) else None
    box.addButton(QMessageBox.StandardButton.Cancel)

    def finished(_result: int) -> None:
        clicked = box.clickedButton()
        box.deleteLater()
        if clicked is restore:
            answered("skip")
        elif revise is not None and clicked is revise:
            answered("revision")
        else:
            answered(None)

    box.finished.connect(finished)
    box.open()


class BundlePresenter(QObject):
    """Export and import of whole stores for one window.

    Signals:
        exported(object): the ``ExportReport`` of a finished export
        restored(object): the ``RestoreReport`` of a finished import
        failed(str): what went wrong (a refused bundle, a cancel, an I/O error)
    """

    exported = Signal(object)
    restored = Signal(object)
    failed = Signal(str)

    def __init__(self, window: QWidget, backend: Backend, tasks: TaskManager, *,
                 export_path: AskPath = ask_export_path, bundle_path: AskPath = ask_bundle_path,
                 choice: AskChoice = ask_choice) -> None:
        super().__init__(window)
        self.window = window
        self.backend = backend
        self.tasks = tasks
        self._export_path = export_path
        self._bundle_path = bundle_path
        self._choice = choice

    @Slot()
    def export(self) -> None:
        """Ask where, then write the bundle (cancel leaves no file)."""
        path = self._export_path(self.window)
        if not path:
            return
        paths = self.backend.paths

        def work(token: CancelToken) -> ExportReport:
            from context_engine.transfer.export import export_bundle

            return export_bundle(paths, Path(path), check=token.check)

        self.tasks.write(Op("Exporting bundle", work, self.exported.emit, self._on_failed,
                            long=True))

    @Slot()
    def restore(self) -> None:
        """Ask which bundle, plan it without writing, then ask and import."""
        path = self._bundle_path(self.window)
        if not path:
            return
        paths = self.backend.paths

        def work(token: CancelToken) -> RestoreReport:
            from context_engine.transfer.restore import restore_bundle

            return restore_bundle(paths, Path(path), write=False, check=token.check)

        self.tasks.read(Op("Checking bundle", work, lambda r: self._on_planned(path, r),
                           self._on_failed, long=True))

    def _on_planned(self, path: str, plan: RestoreReport) -> None:
        from context_engine.transfer.restore import describe, has_conflicts

        self._choice(self.window, "\n".join(describe(plan)), has_conflicts(plan),
                     lambda choice: self._on_choice(path, choice))

    def _on_choice(self, path: str, choice: Choice) -> None:
        from context_engine.transfer.restore import restore_bundle

        if choice is None:
            return
        paths = self.backend.paths

        def work(token: CancelToken) -> RestoreReport:
            return restore_bundle(paths, Path(path), write=True,
                                  on_conflict="revision" if choice == "revision" else "skip",
                                  check=token.check, surface="app")

        self.tasks.write(Op("Importing bundle", work, self.restored.emit, self._on_failed,
                            long=True))

    def _on_failed(self, exc: BaseException) -> None:
        self.failed.emit(getattr(exc, "message", None) or str(exc))
