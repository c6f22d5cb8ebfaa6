"""The review layout shared by the Suggestions tab's lists: a row table beside a detail pane."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QSplitter,
    QTableView,
    QTextBrowser,
)

from ..models.table import RowTableModel
from .layout import column, split


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
    return split(table, column((detail, 1), buttons), sizes=[620, 560])
