"""Proposals panel: writes agents asked for when no person could confirm them; accept or dismiss."""

from __future__ import annotations

from PySide6.QtCore import Signal, SignalInstance, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from ..models.table import Column, RowTableModel
from .review_split import detail_split, row_table, selected_row

PROPOSAL_COLUMNS = (
    Column("Agent", lambda p: p.agent),
    Column("Session", lambda p: p.session),
    Column("Time", lambda p: p.created_at),
    Column("Write", lambda p: f"{p.tool} {p.reference}"),
    Column("Why a person must confirm", lambda p: p.reason),
)


class ProposalsPanel(QWidget):
    """Thin view of the workspace's proposals.

    Signals:
        proposal_selected(object), accept_requested(object), dismiss_requested(object)
    """

    proposal_selected = Signal(object)
    accept_requested = Signal(object)
    dismiss_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = RowTableModel(PROPOSAL_COLUMNS, key=lambda p: p.id, parent=self)
        self.status = QLabel("No writes are waiting for review.")
        self.status.setWordWrap(True)
        self.table = row_table(self.model)
        self.detail = QTextBrowser()
        self.table.setAccessibleName("Agent proposals waiting for review")
        self.detail.setAccessibleName("Selected proposal")
        self.accept_button = QPushButton("Accept and write")
        self.dismiss_button = QPushButton("Dismiss")
        buttons = QHBoxLayout()
        buttons.addWidget(self.dismiss_button)
        buttons.addStretch(1)
        buttons.addWidget(self.accept_button)
        splitter = detail_split(self.table, self.detail, buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.status)
        layout.addWidget(splitter, 1)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.accept_button.clicked.connect(lambda: self._emit(self.accept_requested))
        self.dismiss_button.clicked.connect(lambda: self._emit(self.dismiss_requested))
        self._enable(None)

    def selected(self) -> object | None:
        """The selected proposal."""
        return selected_row(self.table, self.model)

    def _enable(self, proposal: object | None) -> None:
        self.accept_button.setEnabled(proposal is not None)
        self.dismiss_button.setEnabled(proposal is not None)

    def _emit(self, signal: SignalInstance) -> None:
        proposal = self.selected()
        if proposal is not None:
            signal.emit(proposal)

    @Slot()
    def _on_selection(self) -> None:
        proposal = self.selected()
        self._enable(proposal)
        self.proposal_selected.emit(proposal)
