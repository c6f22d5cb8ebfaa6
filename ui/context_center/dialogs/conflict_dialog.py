"""Shown when the fact changed on disk under an open edit: reload, diff, or save on top.

"Keep editing" is the default and has the focus every time the dialog opens (it is reused):
Return or Esc never discards the edit or writes on top of the other revision. Those two need
an explicit click or their own key (Alt+R, Alt+S).
"""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..render.diff import diff_html

RELOAD = "reload"
SAVE_AS_NEW = "save_as_new"
KEEP_EDITING = "keep_editing"


class ConflictDialog(QDialog):
    """Non-blocking: ``ask(...)`` calls back with RELOAD, SAVE_AS_NEW or KEEP_EDITING."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Changed on disk")
        self.resize(680, 460)
        self._message = QLabel()
        self._message.setWordWrap(True)
        self._message.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self._message.setAccessibleName("What changed")
        self._diff_label = QLabel("Differences (on disk → your edit):")
        self._diff = QTextBrowser()
        self._diff.setAccessibleName("Differences between the file on disk and your edit")
        self.reload_button = QPushButton("&Reload (discard my edit)")
        self.save_button = QPushButton("&Save as new revision")
        self.cancel_button = QPushButton("&Keep editing")
        for button in (self.reload_button, self.save_button):
            # Never the default, not even while focused: Return goes to "Keep editing".
            button.setAutoDefault(False)
            button.setDefault(False)
        self.cancel_button.setAutoDefault(True)
        self.cancel_button.setDefault(True)
        row = QHBoxLayout()
        row.addWidget(self.reload_button)
        row.addStretch(1)
        row.addWidget(self.save_button)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self._message)
        layout.addWidget(self._diff_label)
        layout.addWidget(self._diff, 1)
        layout.addLayout(row)
        self._choice = KEEP_EDITING
        self._callback: Callable[[str], None] | None = None
        self.reload_button.clicked.connect(self._on_reload)
        self.save_button.clicked.connect(self._on_save)
        self.cancel_button.clicked.connect(self.reject)
        self.finished.connect(self._on_finished)

    def ask(
        self,
        name: str,
        base_revision: int,
        disk_revision: int,
        disk_text: str,
        my_text: str,
        callback: Callable[[str], None],
    ) -> None:
        """Explain the conflict and call ``callback(choice)`` when the person decides."""
        self._show(
            f"<b>{html.escape(name)}</b> changed on disk while you were editing it: you "
            f"started from revision {base_revision}, the file is now at revision "
            f"{disk_revision}. Nothing has been written.<br><br>Keep editing (Return), reload "
            f"to take the version on disk, or save your edit as revision {disk_revision + 1} "
            "on top of it.",
            diff_html(disk_text, my_text, f"on disk (revision {disk_revision})", "your edit"),
            callback,
        )

    def ask_file(self, name: str, disk_text: str, my_text: str,
                 callback: Callable[[str], None]) -> None:
        """The same question for a plain file (no revisions): reload, or save on top."""
        self.save_button.setText("&Save on top of it")
        self._show(
            f"<b>{html.escape(name)}</b> changed on disk while you were editing it. Nothing "
            "has been written.<br><br>Keep editing (Return), reload to take the version on "
            "disk, or save your text on top of it.",
            diff_html(disk_text, my_text, "on disk", "your edit"),
            callback,
        )

    def _show(self, message: str, diff: str, callback: Callable[[str], None]) -> None:
        self._callback = callback
        self._choice = KEEP_EDITING
        self._message.setText(message)
        self._diff.setHtml(diff)
        self.cancel_button.setDefault(True)
        self.open()
        # Reused dialog: the last clicked button would otherwise keep the focus.
        self.cancel_button.setFocus(Qt.FocusReason.OtherFocusReason)

    @Slot()
    def _on_reload(self) -> None:
        self._choice = RELOAD
        self.accept()

    @Slot()
    def _on_save(self) -> None:
        self._choice = SAVE_AS_NEW
        self.accept()

    @Slot(int)
    def _on_finished(self, result: int) -> None:
        callback, self._callback = self._callback, None
        if callback is not None:
            callback(self._choice)
