"""File ▸ Import…: pick an agent, review its memories as a checklist, edit, then import.

Layout and signals only; the presenter scans and writes on worker threads.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..models.import_candidates import DESCRIPTION, ImportCandidatesModel
from .discard_dialog import DiscardDialog

AGENTS = (("claude-code", "Claude Code"), ("codex", "Codex"), ("gemini", "Gemini CLI"))


class ImportDialog(QDialog):
    """The checklist dialog.

    Return never writes: no button is a default, and "Import selected" needs a click, Space on
    it, or its own key (Alt+I). Esc, Close and a new scan ask before edits are dropped.

    Signals:
        scan_requested(str): the agent to scan
        import_requested(): write the ticked rows
        cancel_requested(): stop the scan or import that is running
    """

    scan_requested = Signal(str)
    import_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import memories")
        self.resize(980, 620)
        self.agent_box = QComboBox()
        for agent, label in AGENTS:
            self.agent_box.addItem(label, agent)
        self.scan_button = QPushButton("Scan")
        self.model = ImportCandidatesModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(DESCRIPTION,
                                                           QHeaderView.ResizeMode.Stretch)
        self.body_edit = QPlainTextEdit()
        self.body_edit.setPlaceholderText("Select a candidate to see and edit its body.")
        self.status = QLabel("Choose an agent and press Scan.")
        self.status.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.buttons = QDialogButtonBox()
        self.import_button = self.buttons.addButton("&Import selected",
                                                    QDialogButtonBox.ButtonRole.ActionRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.import_button.setEnabled(False)
        self.cancel_button.setEnabled(False)
        for button in (self.scan_button, self.import_button, self.cancel_button,
                       self.close_button):
            button.setAutoDefault(False)
            button.setDefault(False)
        self.discard = DiscardDialog(self)
        self._closing_confirmed = False
        for widget, name in ((self.agent_box, "Agent to import from"),
                             (self.table, "Import candidates"), (self.body_edit, "Body"),
                             (self.status, "Import status"), (self.progress, "Progress")):
            widget.setAccessibleName(name)
        self.agent_box.setAccessibleName("Agent to import from")
        self.table.setAccessibleName("Memories found")
        self.body_edit.setAccessibleName("Body of the selected memory")
        self._layout()
        self._body_row = -1
        self.scan_button.clicked.connect(self._on_scan)
        self.import_button.clicked.connect(self.import_requested.emit)
        self.cancel_button.clicked.connect(self.cancel_requested.emit)
        self.close_button.clicked.connect(self.reject)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.body_edit.textChanged.connect(self._on_body_edited)

    def _layout(self) -> None:
        top = QHBoxLayout()
        top.addWidget(QLabel("From:"))
        top.addWidget(self.agent_box)
        top.addWidget(self.scan_button)
        top.addStretch(1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.body_edit)
        split.setSizes([380, 160])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.progress)
        layout.addWidget(self.buttons)

    def set_busy(self, busy: bool, text: str = "") -> None:
        """While a scan or import runs: Cancel on, the rest off."""
        self.scan_button.setEnabled(not busy)
        self.agent_box.setEnabled(not busy)
        self.import_button.setEnabled(not busy and bool(self.model.rows))
        self.cancel_button.setEnabled(busy)
        self.progress.setVisible(busy)
        self.progress.setRange(0, 0)
        if text:
            self.status.setText(text)

    def show_progress(self, done: int, total: int) -> None:
        """A determinate bar once the total is known."""
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)

    def reject(self) -> None:
        """Esc or Close: ask first when ticks or fields the person edited would be lost."""
        if self._closing_confirmed or not self.isVisible() or not self.model.is_edited():
            self._closing_confirmed = False
            super().reject()
            return
        if not self.discard.isVisible():
            self.discard.ask("the import checklist", self._on_close_answered)

    def _on_close_answered(self, discard: bool) -> None:
        if discard:
            self._closing_confirmed = True
            self.reject()

    @Slot()
    def _on_scan(self) -> None:
        if self.model.is_edited():
            self.discard.ask("the import checklist", self._on_rescan_answered)
            return
        self.scan_requested.emit(str(self.agent_box.currentData()))

    def _on_rescan_answered(self, discard: bool) -> None:
        if discard:
            self.scan_requested.emit(str(self.agent_box.currentData()))

    @Slot(QItemSelection, QItemSelection)
    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = self.table.selectionModel().selectedRows()
        self._body_row = -1
        if not rows:
            self.body_edit.setPlainText("")
            return
        row = self.model.rows[rows[0].row()]
        self.body_edit.setPlainText(row.candidate.body)
        self.body_edit.setReadOnly(row.planned.status != "new")
        self._body_row = rows[0].row()

    @Slot()
    def _on_body_edited(self) -> None:
        if self._body_row >= 0:
            self.model.set_body(self._body_row, self.body_edit.toPlainText())
