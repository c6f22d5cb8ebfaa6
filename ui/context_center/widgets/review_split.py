"""The review layout shared by the Suggestions tab's lists: a row table beside a detail pane."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..models.table import RowTableModel


def row_table(model: QAbstractItemModel) -> QTableView:
    """A table that selects one whole row at a time."""
    table = QTableView()
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def selected_row(table: QTableView, model: RowTableModel) -> object | None:
    """The row object selected in ``table``, or None."""
    rows = table.selectionModel().selectedRows()
    return model.row_at(rows[0].row()) if rows else None


def detail_split(table: QTableView, detail: QTextBrowser, buttons: QHBoxLayout) -> QSplitter:
    """``table`` on the left; ``detail`` above ``buttons`` on the right."""
    right = QWidget()
    column = QVBoxLayout(right)
    column.setContentsMargins(0, 0, 0, 0)
    column.addWidget(detail, 1)
    column.addLayout(buttons)
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.addWidget(table)
    splitter.addWidget(right)
    splitter.setSizes([620, 560])
    return splitter
