"""A read-only table model showing a tuple of rows exactly in the order it is given."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QByteArray,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor

from . import roles

Index = QModelIndex | QPersistentModelIndex
SCANS_BEFORE_INDEX = 8  # keys looked up one by one before a model indexes every row
MADE_ROWS = 512  # rows made on demand kept for repeated cell reads (a screenful and more)


@dataclass(frozen=True, slots=True)
class Column:
    """One column: header, how to show a row, how to sort it, and an optional tooltip."""

    header: str
    text: Callable[[Any], str]
    sort_key: Callable[[Any], Any] | None = None
    tooltip: Callable[[Any], str] | None = None
    color: Callable[[Any], str | None] | None = None


class RowTableModel(QAbstractTableModel):
    """Adapter over an immutable tuple of rows; sorting is requested, never done here.

    Signals:
        sort_requested(int, object): the header asked for (column, Qt.SortOrder); the owner
            sorts the snapshot off the GUI thread and calls :meth:`set_rows`
    """

    sort_requested = Signal(int, object)

    def __init__(
        self,
        columns: Sequence[Column],
        key: Callable[[Any], object],
        parent: Any = None,
        lookup: Callable[[Sequence[Any], object], int] | None = None,
    ) -> None:
        super().__init__(parent)
        self._columns = tuple(columns)
        self._key = key
        # ``lookup(rows, key)`` finds one key without indexing every row (large tables).
        self._lookup = lookup
        self._rows: Sequence[Any] = ()
        self._index: dict[object, int] | None = None  # key → row, built on first find()
        self._found: dict[object, int] = {}  # keys ``lookup`` answered for these rows
        # Rows made on demand (a column table's): the few shown are kept while painted.
        self._made: dict[int, Any] = {}

    @property
    def columns(self) -> tuple[Column, ...]:
        """The column definitions."""
        return self._columns

    @property
    def rows(self) -> Sequence[Any]:
        """The rows currently shown (a tuple, or rows made on demand from columns)."""
        return self._rows

    def set_rows(self, rows: Sequence[Any]) -> None:
        """Swap in a new snapshot (already sorted and filtered).

        A sequence that makes its rows on demand (``on_demand``, a column table's) is kept as
        it is; anything else is copied into a tuple.
        """
        self.beginResetModel()
        self._rows = rows if getattr(rows, "on_demand", False) else tuple(rows)
        self._index = None
        self._found = {}
        self._made = {}
        self.endResetModel()

    def row_at(self, row: int) -> Any:
        """The row object at ``row`` (or ``None``)."""
        return self._row(row) if 0 <= row < len(self._rows) else None

    def _row(self, row: int) -> Any:
        if not self._made and not getattr(self._rows, "on_demand", False):
            return self._rows[row]
        made = self._made.get(row)
        if made is None:
            if len(self._made) >= MADE_ROWS:
                self._made.clear()
            made = self._made[row] = self._rows[row]
        return made

    def find(self, key: object) -> int:
        """Row number of the row with ``key`` (-1 when absent)."""
        own = getattr(self._rows, "find", None)
        if callable(own) and getattr(self._rows, "on_demand", False):
            # Column scans, then (many keys asked of one set of rows) an index of the
            # columns — never of every row made.
            if self._index is None:
                if len(self._found) < SCANS_BEFORE_INDEX:
                    found = self._found.get(key)
                    if found is None:
                        found = self._found[key] = own(key)
                    return found
                self._index = self._rows.positions()  # type: ignore[attr-defined]  # reason: on_demand rows have positions()
            return self._index.get(key, -1)
        if self._index is None and self._lookup is not None:
            # A scan per key (remembered until set_rows); many keys asked of one set of rows
            # index them all once instead.
            found = self._found.get(key)
            if found is not None:
                return found
            if len(self._found) < SCANS_BEFORE_INDEX:
                found = self._found[key] = self._lookup(self._rows, key)
                return found
        if self._index is None:
            # Built from the end so the first row holding a key wins; C-level loops (with a
            # C-level key such as ``attrgetter``: ~0.1 s for 100,000 rows).
            rows = self._rows
            self._index = dict(zip(map(self._key, reversed(rows)),
                                   range(len(rows) - 1, -1, -1), strict=True))
        return self._index.get(key, -1)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Rows under the invisible root only (a flat table)."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Number of columns (0 under any real index)."""
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Cell text, tooltip and the named roles."""
        if not index.isValid() or not (0 <= index.row() < len(self._rows)):
            return None
        if not (0 <= index.column() < len(self._columns)):
            return None
        row = self._row(index.row())
        column = self._columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.text(row)
        if role == Qt.ItemDataRole.ToolTipRole and column.tooltip is not None:
            return column.tooltip(row) or None
        if role == Qt.ItemDataRole.ForegroundRole and column.color is not None:
            color = column.color(row)
            return QBrush(QColor(color)) if color else None
        if role == roles.ROW:
            return row
        if role == roles.KEY:
            return self._key(row)
        if role == roles.SORT:
            return (column.sort_key or column.text)(row)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Column headers; row numbers are not shown."""
        return roles.header([c.header for c in self._columns], section, orientation, role)

    def roleNames(self) -> dict[int, QByteArray]:
        """Qt's default role names plus ours."""
        return roles.with_ours(dict(super().roleNames()))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Ask the owner to sort off the GUI thread (the view calls this on a header click)."""
        if 0 <= column < len(self._columns):
            self.sort_requested.emit(column, order)


def sort_rows(rows: Sequence[Any], column: Column, descending: bool) -> tuple[Any, ...]:
    """Sort ``rows`` by ``column`` (pure Python, for the read pool)."""
    key = column.sort_key or column.text
    return tuple(sorted(rows, key=key, reverse=descending))
