"""Suggestions tab: memory candidates from recent sessions, with evidence; edit, accept, dismiss."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, SignalInstance, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..models.table import Column, RowTableModel
from .proposals_panel import ProposalsPanel
from .review_split import detail_split, row_table, selected_row

CANDIDATE_COLUMNS = (
    Column("Kind", lambda c: "skill" if not hasattr(c, "type") else "memory"),
    Column("Title", lambda c: getattr(c, "title", "") or c.name, tooltip=lambda c: c.description),
    Column("Type", lambda c: getattr(c, "type", "")),
    Column("Reason", lambda c: getattr(c, "reason", "") or "repeated workflow"),
    Column("Evidence", lambda c: f"{len(c.evidence)} line(s)", sort_key=lambda c: len(c.evidence)),
)


class SuggestionsTab(QWidget):
    """Thin view of one scan result.

    Signals:
        rescan_requested(), candidate_selected(object), accept_requested(object),
        edit_requested(object), dismiss_requested(object)
    """

    rescan_requested = Signal()
    candidate_selected = Signal(object)
    accept_requested = Signal(object)
    edit_requested = Signal(object)
    dismiss_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = RowTableModel(CANDIDATE_COLUMNS, key=lambda c: c.id, parent=self)
        self.status = QLabel("Sessions are scanned when this tab opens.")
        self.status.setWordWrap(True)
        self.rescan_button = QPushButton("Scan again")
        self.table = row_table(self.model)
        for column, width in enumerate((64, 300, 72, 130)):
            self.table.setColumnWidth(column, width)
        self.detail = QTextBrowser()
        self.accept_button = QPushButton("Accept")
        self.edit_button = QPushButton("Edit and accept…")
        self.dismiss_button = QPushButton("Dismiss")
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.rescan_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.dismiss_button)
        buttons.addStretch(1)
        buttons.addWidget(self.edit_button)
        buttons.addWidget(self.accept_button)
        splitter = detail_split(self.table, self.detail, buttons)
        # Writes agents asked for, kept for review (S15.2), above the scan's candidates.
        self.proposals = ProposalsPanel()
        candidates = QWidget()
        cl = QVBoxLayout(candidates)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addLayout(top)
        cl.addWidget(splitter, 1)
        stack = QSplitter(Qt.Orientation.Vertical)
        stack.addWidget(self.proposals)
        stack.addWidget(candidates)
        stack.setSizes([220, 520])
        layout = QVBoxLayout(self)
        layout.addWidget(stack, 1)
        self.rescan_button.clicked.connect(self.rescan_requested.emit)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.model.modelReset.connect(self._on_selection)  # accepted/dismissed rows vanish
        for widget, name in ((self.status, "Scan status"), (self.rescan_button, "Scan again"),
                             (self.table, "Suggestions"), (self.detail, "Selected suggestion"),
                             (self.accept_button, "Accept suggestion"),
                             (self.edit_button, "Edit and accept suggestion"),
                             (self.dismiss_button, "Dismiss suggestion")):
            widget.setAccessibleName(name)
        self.accept_button.clicked.connect(lambda: self._emit(self.accept_requested))
        self.edit_button.clicked.connect(lambda: self._emit(self.edit_requested))
        self.dismiss_button.clicked.connect(lambda: self._emit(self.dismiss_requested))
        self._enable(None)

    def selected(self) -> object | None:
        """The selected candidate."""
        return selected_row(self.table, self.model)

    def _enable(self, candidate: object | None) -> None:
        memory = candidate is not None and hasattr(candidate, "type")
        self.accept_button.setEnabled(candidate is not None)
        self.accept_button.setText("Accept" if candidate is None or memory else "Write skill")
        self.edit_button.setEnabled(memory)
        self.dismiss_button.setEnabled(candidate is not None)

    def _emit(self, signal: SignalInstance) -> None:
        candidate = self.selected()
        if candidate is not None:
            signal.emit(candidate)

    @Slot()
    def _on_selection(self) -> None:
        candidate = self.selected()
        self._enable(candidate)
        self.candidate_selected.emit(candidate)
