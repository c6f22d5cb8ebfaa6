"""Import checklist: one editable, checkable row per candidate found in another agent's files.

A row to be written is ticked in the first column. A flagged row (secret-looking content) also
carries a ticked warning in the second column; only a person unticking it lets that row be
written (S15.3). Rows already here are shown greyed and cannot be ticked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from context_engine.facts.model import FACT_TYPES, SCOPES
from context_engine.transfer.candidate import Candidate, Planned
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

Index = QModelIndex | QPersistentModelIndex
HEADERS = ("Import", "Warning", "Status", "Type", "Scope", "Name", "Title", "Description",
           "Source")
IMPORT, WARNING, STATUS, TYPE, SCOPE, NAME, TITLE, DESCRIPTION, SOURCE = range(len(HEADERS))
EDITABLE = {TYPE: "type", SCOPE: "scope", NAME: "name", TITLE: "title",
            DESCRIPTION: "description"}
CHOICES = {TYPE: FACT_TYPES, SCOPE: SCOPES}


@dataclass(frozen=True, slots=True)
class Row:
    """A planned candidate, as edited, with the person's two ticks."""

    planned: Planned
    candidate: Candidate
    chosen: bool
    warning: bool

    @property
    def writable(self) -> bool:
        """Would the Import button write this row?"""
        return self.chosen and not self.warning and self.planned.status == "new"


def row_of(planned: Planned) -> Row:
    """The initial row: new candidates ticked; flagged ones keep their warning ticked."""
    return Row(planned, planned.candidate, planned.status == "new", planned.flagged)


class ImportCandidatesModel(QAbstractTableModel):
    """The checklist; edits replace the row's candidate, never the planned original."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[Row] = []
        self._clean: list[Row] = []  # the rows as scanned (or as last imported)

    @property
    def rows(self) -> tuple[Row, ...]:
        """Every row, in scan order."""
        return tuple(self._rows)

    def set_planned(self, planned: tuple[Planned, ...]) -> None:
        """Show a fresh scan."""
        self.beginResetModel()
        self._rows = [row_of(p) for p in planned]
        self._clean = list(self._rows)
        self.endResetModel()

    def is_edited(self) -> bool:
        """Whether the person changed a tick or a field since the scan (or the last import)."""
        return self._rows != self._clean

    def mark_clean(self) -> None:
        """The current rows are what was imported: closing loses nothing."""
        self._clean = list(self._rows)

    def set_body(self, row: int, body: str) -> None:
        """Replace the body of ``row``'s candidate (edited in the dialog's text box)."""
        if 0 <= row < len(self._rows) and self._rows[row].candidate.body != body:
            current = self._rows[row]
            self._rows[row] = replace(current, candidate=current.candidate.edited(body=body))
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(HEADERS) - 1))

    def to_write(self) -> tuple[list[Candidate], set[int]]:
        """The ticked new candidates as edited, and which of them the person un-warned."""
        chosen = [r for r in self._rows if r.chosen and r.planned.status == "new"]
        allowed = {i for i, r in enumerate(chosen) if r.planned.flagged and not r.warning}
        return [r.candidate for r in chosen], allowed

    # -- Qt model --------------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Rows (none under a child index: this is a flat table)."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Columns."""
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Column titles."""
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(HEADERS)):
            return HEADERS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        """Checkable ticks, editable fields; rows already here are disabled."""
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        row = self._rows[index.row()]
        if row.planned.status != "new":
            return Qt.ItemFlag.ItemIsSelectable
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        column = index.column()
        if column == IMPORT or (column == WARNING and row.planned.flagged):
            return base | Qt.ItemFlag.ItemIsUserCheckable
        if column in EDITABLE:
            return base | Qt.ItemFlag.ItemIsEditable
        return base

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Text, tick states and tooltips."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row, column = self._rows[index.row()], index.column()
        c = row.candidate
        if role == Qt.ItemDataRole.CheckStateRole:
            if column == IMPORT:
                return _check(row.chosen)
            if column == WARNING and row.planned.flagged:
                return _check(row.warning)
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            texts = {
                WARNING: "may hold a secret" if row.planned.flagged else "",
                STATUS: row.planned.status, TYPE: c.type, SCOPE: c.scope, NAME: c.name,
                TITLE: c.title, DESCRIPTION: c.description,
                SOURCE: f"{c.source.name}:{c.line}",
            }
            return texts.get(column, "")
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == WARNING and row.planned.flagged:
                return "Matches: " + ", ".join(row.planned.findings) + ". Untick to write it."
            if column == STATUS and row.planned.reason:
                return row.planned.reason
            if column == SOURCE:
                return c.evidence
        return None

    def setData(self, index: Index, value: Any,
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Tick, untick or edit one cell; invalid values are refused."""
        if not index.isValid() or not self.flags(index) & Qt.ItemFlag.ItemIsEnabled:
            return False
        number, column = index.row(), index.column()
        row = self._rows[number]
        if role == Qt.ItemDataRole.CheckStateRole and column in (IMPORT, WARNING):
            ticked = _is_checked(value)
            row = replace(row, chosen=ticked) if column == IMPORT else replace(row, warning=ticked)
        elif role == Qt.ItemDataRole.EditRole and column in EDITABLE:
            text = str(value).strip()
            if (column in CHOICES and text not in CHOICES[column]) or (column == NAME and not text):
                return False
            row = replace(row, candidate=row.candidate.edited(**{EDITABLE[column]: text}))
        else:
            return False
        self._rows[number] = row
        self.dataChanged.emit(index, index, [role])
        return True


def _check(on: bool) -> Qt.CheckState:
    return Qt.CheckState.Checked if on else Qt.CheckState.Unchecked


def _is_checked(value: Any) -> bool:
    if isinstance(value, Qt.CheckState):
        return value == Qt.CheckState.Checked
    return bool(value == Qt.CheckState.Checked.value or value is True)
