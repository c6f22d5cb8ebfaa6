"""Asks before an editor with unsaved changes closes; "Keep editing" is the safe default."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget


class DiscardDialog(QMessageBox):
    """Non-blocking: ``ask(what, callback)`` calls ``callback(True)`` only on "Discard changes".

    Return and Esc keep editing from every focus position; discarding needs a click or its
    own key (Alt+D).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Warning)
        self.setWindowTitle("Unsaved changes")
        self.keep_button: QPushButton = self.addButton("&Keep editing",
                                                       QMessageBox.ButtonRole.RejectRole)
        self.discard_button: QPushButton = self.addButton(
            "&Discard changes", QMessageBox.ButtonRole.DestructiveRole)
        self.discard_button.setAutoDefault(False)
        self.setDefaultButton(self.keep_button)
        self.setEscapeButton(self.keep_button)
        self._callback: Callable[[bool], None] | None = None
        self.finished.connect(self._on_finished)

    def ask(self, what: str, callback: Callable[[bool], None]) -> None:
        """Say what would be lost and call back with the person's answer."""
        self._callback = callback
        self.setText(f"Discard your unsaved changes to {what}?")
        self.setInformativeText("Nothing has been written yet. Keep editing to save them.")
        self.setDefaultButton(self.keep_button)
        self.open()
        self.keep_button.setFocus(Qt.FocusReason.OtherFocusReason)

    @Slot(int)
    def _on_finished(self, _result: int) -> None:
        callback, self._callback = self._callback, None
        if callback is not None:
            callback(self.clickedButton() is self.discard_button)
