"""Shown when the fact changed on disk under an open edit: reload, diff, or save on top."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Slot
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
        self.setMinimumSize(620, 420)
        self._message = QLabel()
        self._message.setWordWrap(True)
        self._diff = QTextBrowser()
        self._diff.setVisible(False)
        self.reload_button = QPushButton("Reload (discard my edit)")
        self.diff_button = QPushButton("Show diff")
        self.diff_button.setCheckable(True)
        self.save_button = QPushButton("Save as new revision")
        self.cancel_button = QPushButton("Keep editing")
        row = QHBoxLayout()
        row.addWidget(self.reload_button)
        row.addWidget(self.diff_button)
        row.addStretch(1)
        row.addWidget(self.save_button)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self._message)
        layout.addWidget(self._diff, 1)
        layout.addLayout(row)
        self._choice = KEEP_EDITING
        self._callback: Callable[[str], None] | None = None
        self.reload_button.clicked.connect(self._on_reload)
        self.save_button.clicked.connect(self._on_save)
        self.cancel_button.clicked.connect(self.reject)
        self.diff_button.toggled.connect(self._diff.setVisible)
        self.finished.connect(self._on_finished)
        self.cancel_button.setDefault(True)

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
        self._callback = callback
        self._choice = KEEP_EDITING
        self._message.setText(
            f"<b>{html.escape(name)}</b> changed on disk while you were editing it: you "
            f"started from revision {base_revision}, the file is now at revision "
            f"{disk_revision}. Nothing has been written. Reload to take the version on "
            f"disk, or save your edit as revision {disk_revision + 1} on top of it."
        )
        self._diff.setHtml(
            diff_html(disk_text, my_text, f"on disk (revision {disk_revision})", "your edit")
        )
        self.diff_button.setChecked(False)
        self._diff.setVisible(False)
        self.open()

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
