"""The confirm-write dialog: says exactly what will happen; Cancel is the default."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)


@dataclass(frozen=True, slots=True)
class ConfirmText:
    """Everything the person must see before a write they did not type themselves."""

    action: str  # verb on the OK button, e.g. "Archive", "Save"
    summary: str  # one line: what will happen
    tool: str = ""  # the tool or command asking (remember, forget, …)
    scope: str = ""
    type: str = ""
    revision: str = ""  # e.g. "3 → 4", "new (1)", "archived"
    reason: str = ""  # the policy finding that triggered the confirmation
    content_html: str = ""  # full content or a diff against the active revision


class ConfirmDialog(QDialog):
    """Non-blocking confirmation: ``ask(text, callback)`` calls back with True or False."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Confirm")
        self.setMinimumWidth(560)
        self._summary = QLabel()
        self._summary.setWordWrap(True)
        self._facts = QLabel()
        self._facts.setWordWrap(True)
        self._content = QTextBrowser()
        self._content.setOpenLinks(False)
        self._summary.setAccessibleName("What will happen")
        self._facts.setAccessibleName("Details")
        self._content.setAccessibleName("Content or difference")
        self._buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self._buttons.accepted.connect(self.accept)
        self._buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self._summary)
        layout.addWidget(self._facts)
        layout.addWidget(self._content, 1)
        layout.addWidget(self._buttons)
        self._callback: Callable[[bool], None] | None = None
        self.finished.connect(self._on_finished)

    @property
    def ok_button(self) -> QPushButton:
        """The confirming button (tests click it)."""
        return self._buttons.button(QDialogButtonBox.StandardButton.Ok)

    @property
    def cancel_button(self) -> QPushButton:
        """The default button."""
        return self._buttons.button(QDialogButtonBox.StandardButton.Cancel)

    def ask(self, text: ConfirmText, callback: Callable[[bool], None]) -> None:
        """Show ``text`` and call ``callback(confirmed)`` once the person answers."""
        self._callback = callback
        self.setWindowTitle(f"Confirm: {text.action}")
        self._summary.setText(f"<b>{html.escape(text.summary)}</b>")
        lines = [
            ("Tool", text.tool),
            ("Scope", text.scope),
            ("Type", text.type),
            ("Revision", text.revision),
            ("Why you are asked", text.reason),
        ]
        self._facts.setText(
            "<br>".join(f"{k}: <b>{html.escape(v)}</b>" for k, v in lines if v)
        )
        self._content.setHtml(text.content_html or "<p><i>No content.</i></p>")
        self._content.setVisible(bool(text.content_html))
        self.ok_button.setText(text.action)
        # Cancel is the default: Enter never confirms by accident.
        self.ok_button.setAutoDefault(False)
        self.ok_button.setDefault(False)
        self.cancel_button.setDefault(True)
        self.open()
        self.cancel_button.setFocus()  # after open(): a reused dialog keeps its last focus

    @Slot(int)
    def _on_finished(self, result: int) -> None:
        callback, self._callback = self._callback, None
        if callback is not None:
            callback(result == int(QDialog.DialogCode.Accepted))
