"""Archive & Revisions tab: a fact's history with a diff between any two; restore; recover."""

from __future__ import annotations

from context_engine.facts.archive import ArchivedEntry
from context_engine.facts.model import Fact
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QPushButton,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..models.table import Column, RowTableModel
from .layout import button_row, column, split


def _stamp(fact: Fact) -> str:
    stamp = fact.timestamp
    return stamp.strftime("%Y-%m-%d %H:%M") if stamp else ""


REVISION_COLUMNS = (
    Column("Revision", lambda r: f"{r[1].revision}" + ("  (active)" if r[0] else ""),
           sort_key=lambda r: r[1].revision),
    Column("Updated", lambda r: _stamp(r[1])),
    Column("What changed", lambda r: r[2] if len(r) > 2 else "",
           tooltip=lambda r: r[2] if len(r) > 2 else ""),
    Column("Written by", lambda r: r[3] if len(r) > 3 else ""),
    Column("Scope", lambda r: r[1].scope),
    Column("Type", lambda r: r[1].type),
    Column("Description", lambda r: r[1].description),
)

ARCHIVE_COLUMNS = (
    Column("Archived", lambda e: e.archived_at.strftime("%Y-%m-%d %H:%M:%S")),
    Column("Name", lambda e: e.fact.name if e.fact else e.path.name),
    Column("Scope", lambda e: e.fact.scope if e.fact else ""),
    Column("Type", lambda e: e.fact.type if e.fact else ""),
    Column("Revision", lambda e: str(e.fact.revision) if e.fact else ""),
    Column("Description", lambda e: e.fact.description if e.fact else
           (e.diagnostic.message if e.diagnostic else "unreadable")),
)


def _table(model: RowTableModel, multi: bool = False) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(
        QAbstractItemView.SelectionMode.ExtendedSelection if multi
        else QAbstractItemView.SelectionMode.SingleSelection
    )
    view.verticalHeader().setVisible(False)
    view.horizontalHeader().setStretchLastSection(True)
    view.setAlternatingRowColors(True)
    return view


class ArchiveTab(QWidget):
    """Thin view of one fact's revisions and of the archive of both stores.

    Signals:
        revisions_selected(list): the selected (is_active, Fact) rows (one or two)
        restore_requested(object): restore this (is_active, Fact) row
        archive_selected(object): an ArchivedEntry or None
        recover_requested(object): recover this ArchivedEntry
    """

    revisions_selected = Signal(list)
    restore_requested = Signal(object)
    archive_selected = Signal(object)
    recover_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.revisions_model = RowTableModel(REVISION_COLUMNS, key=lambda r: r[1].revision,
                                             parent=self)
        self.archive_model = RowTableModel(ARCHIVE_COLUMNS, key=lambda e: str(e.path), parent=self)
        self.history_label = QLabel("Select a fact in the Facts tab and press History.")
        self.history_label.setWordWrap(True)
        self.revisions = _table(self.revisions_model, multi=True)
        self.restore_button = QPushButton("Restore selected revision")
        self.diff = QTextBrowser()
        self.archive = _table(self.archive_model)
        self.recover_button = QPushButton("Recover")
        self.archive_detail = QTextBrowser()
        hint = QLabel("Select one revision to compare it with the active one, or two to "
                      "compare them with each other.")
        hint.setWordWrap(True)
        history = split(column(self.history_label, (self.revisions, 1), hint,
                               button_row(self.restore_button)), self.diff, sizes=[640, 520])
        archive_title = QLabel("<b>Archive</b> — forgotten facts of both stores, newest first")
        archive = split(column(archive_title, (self.archive, 1), button_row(self.recover_button)),
                        self.archive_detail, sizes=[640, 520])
        outer = split(history, archive, orientation=Qt.Orientation.Vertical)
        layout = QVBoxLayout(self)
        layout.addWidget(outer)
        self.restore_button.setEnabled(False)
        self.recover_button.setEnabled(False)
        self.revisions.selectionModel().selectionChanged.connect(self._on_revisions)
        self.archive.selectionModel().selectionChanged.connect(self._on_archive)
        # A reset drops the selection silently: follow it, so no pane shows what is gone.
        self.revisions_model.modelReset.connect(self._on_revisions)
        self.archive_model.modelReset.connect(self._on_archive)
        for widget, name in ((self.history_label, "History of the selected fact"),
                             (self.revisions, "Revisions"), (self.diff, "Revision difference"),
                             (self.restore_button, "Restore selected revision"),
                             (self.archive, "Archive"), (self.recover_button, "Recover"),
                             (self.archive_detail, "Selected archive entry"), (hint, "Hint")):
            widget.setAccessibleName(name)
        self.restore_button.clicked.connect(self._on_restore)
        self.recover_button.clicked.connect(self._on_recover)

    def selected_revisions(self) -> list[tuple[bool, Fact]]:
        """Selected revision rows, newest first."""
        rows = sorted(i.row() for i in self.revisions.selectionModel().selectedRows())
        return [self.revisions_model.row_at(r) for r in rows]

    def selected_entry(self) -> ArchivedEntry | None:
        """The selected archive entry."""
        rows = self.archive.selectionModel().selectedRows()
        return self.archive_model.row_at(rows[0].row()) if rows else None

    @Slot()
    def _on_revisions(self) -> None:
        chosen = self.selected_revisions()
        self.restore_button.setEnabled(len(chosen) == 1 and not chosen[0][0])
        self.revisions_selected.emit(chosen)

    @Slot()
    def _on_archive(self) -> None:
        entry = self.selected_entry()
        self.recover_button.setEnabled(entry is not None and entry.fact is not None)
        if entry is None:
            self.archive_detail.clear()
        self.archive_selected.emit(entry)

    @Slot()
    def _on_restore(self) -> None:
        chosen = self.selected_revisions()
        if len(chosen) == 1:
            self.restore_requested.emit(chosen[0])

    @Slot()
    def _on_recover(self) -> None:
        entry = self.selected_entry()
        if entry is not None:
            self.recover_requested.emit(entry)
