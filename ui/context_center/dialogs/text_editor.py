"""Edit one instruction file as plain text; closing with changes asks first."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from ..services.text_files import TextFile
from .discard_dialog import DiscardDialog
from .fact_editor import monospace


class TextFileEditor(QDialog):
    """Non-modal; the owner saves and closes it on success.

    Signals:
        save_requested(str): Save (Ctrl+S) with the typed text
    """

    save_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.resize(720, 560)
        self.file: TextFile | None = None
        self.path_label = QLabel()
        self.path_label.setWordWrap(True)
        self.text_edit = QPlainTextEdit()
        self.text_edit.setFont(monospace())
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._on_save)
        self.buttons.rejected.connect(self.reject)
        for widget, name in ((self.path_label, "File"), (self.text_edit, "File text"),
                             (self.status, "Editor status")):
            widget.setAccessibleName(name)
        layout = QVBoxLayout(self)
        layout.addWidget(self.path_label)
        layout.addWidget(self.text_edit, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        QShortcut(QKeySequence.StandardKey.Save, self, self._on_save)
        self.discard = DiscardDialog(self)
        self._closing_confirmed = False

    def edit(self, file: TextFile) -> None:
        """Load ``file`` and show the editor."""
        self.file = file
        self._closing_confirmed = False
        self.setWindowTitle(f"Edit {file.path.name}")
        self.path_label.setText(str(file.path))
        self.text_edit.setPlainText(file.text)
        self.set_status("")
        self.set_busy(False)
        self.open()
        self.text_edit.setFocus(Qt.FocusReason.OtherFocusReason)

    def rebase(self, file: TextFile) -> None:
        """Keep the typed text but save on top of what is on disk now."""
        self.file = TextFile(file.path, self.file.text if self.file else file.text, file.digest)

    def is_dirty(self) -> bool:
        """Whether the text differs from what was loaded."""
        return self.file is not None and self.text_edit.toPlainText() != self.file.text

    def set_status(self, text: str, error: bool = False) -> None:
        """What happened or what went wrong."""
        self.status.setStyleSheet("color: #cf222e" if error else "")
        self.status.setText(text)

    def set_busy(self, busy: bool) -> None:
        """Disable Save while the write runs."""
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(not busy)

    def reject(self) -> None:
        """Esc, Cancel or close: ask first when typed text would be lost."""
        if self._closing_confirmed or not self.isVisible() or not self.is_dirty():
            self._closing_confirmed = False
            super().reject()
            return
        if not self.discard.isVisible():
            name = self.file.path.name if self.file else "this file"
            self.discard.ask(name, self._on_discard_answered)

    def _on_discard_answered(self, discard: bool) -> None:
        if discard:
            self._closing_confirmed = True
            self.reject()

    @Slot()
    def _on_save(self) -> None:
        if self.isVisible() and self.file is not None:
            self.set_busy(True)
            self.save_requested.emit(self.text_edit.toPlainText())
