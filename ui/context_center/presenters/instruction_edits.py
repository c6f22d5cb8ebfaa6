"""Editing instruction files in the app: read off-thread, atomic conflict-safe save, live tree.

A file that changed on disk under the edit is never overwritten silently: the same
"Changed on disk" dialog as for facts offers keep editing (the default), reload, or save on top.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from ..dialogs.conflict_dialog import RELOAD, SAVE_AS_NEW, ConflictDialog
from ..dialogs.text_editor import TextFileEditor
from ..services.hub import ChangeSet, Hub
from ..services.tasks import Op, TaskManager
from ..services.text_files import ChangedOnDisk, TextFile, read_text, save_text


class InstructionEdits(QObject):
    """Opens the text editor on a file and saves it on the serial writer.

    Signals:
        saved(object): the :class:`TextFile` as written
        conflict_shown(): the file changed on disk; the conflict dialog opened
    """

    saved = Signal(object)
    conflict_shown = Signal()

    def __init__(self, parent: QWidget, tasks: TaskManager, hub: Hub) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.hub = hub
        self.editor = TextFileEditor(parent)
        self.conflict = ConflictDialog(parent)
        self.editor.save_requested.connect(self._on_save_requested)

    def edit(self, path: Path) -> None:
        """Read ``path`` on the read pool, then open the editor."""
        self.tasks.read(Op("Opening file", lambda t: read_text(path), self.editor.edit,
                           self._on_failed))

    def _on_save_requested(self, text: str) -> None:
        file = self.editor.file
        if file is None:
            return

        def failed(exc: BaseException) -> None:
            self.editor.set_busy(False)
            if isinstance(exc, ChangedOnDisk):
                self._show_conflict(file, exc.current, text)
            else:
                self.editor.set_status(f"Not saved: {exc}", error=True)

        self.tasks.write(Op("Saving file", lambda t: save_text(file.path, text, file.digest),
                            self._on_saved, failed))

    def _on_saved(self, written: TextFile) -> None:
        self.editor.file = written
        self.editor.set_busy(False)
        self.editor.accept()
        # The resolver re-reads now: the import tree shows a new @import at once.
        self.hub.publish(ChangeSet(frozenset({"instructions"}), "app", written))
        self.saved.emit(written)

    def _show_conflict(self, mine: TextFile, disk: TextFile, text: str) -> None:
        def decide(choice: str) -> None:
            if choice == RELOAD:
                self.editor.edit(disk)
            elif choice == SAVE_AS_NEW:
                self.editor.rebase(disk)
                self._on_save_requested(self.editor.text_edit.toPlainText())
            else:
                self.editor.set_status("Not saved: the file changed on disk.", error=True)

        self.conflict.ask_file(mine.path.name, disk.text, text, decide)
        self.conflict_shown.emit()

    def _on_failed(self, exc: BaseException) -> None:
        self.editor.set_status(f"Could not open the file: {exc}", error=True)
