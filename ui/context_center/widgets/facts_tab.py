"""Facts tab: one table of both scopes with search, filters, a spread chart and a detail pane."""

from __future__ import annotations

import html

from PySide6.QtCore import QItemSelectionModel, QPoint, Qt, Signal, SignalInstance, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..models.table import Column, RowTableModel
from ..services.fact_rows import FactFilter, FactRow, FactsSnapshot
from .spread_chart import SpreadChart

FRESHNESS_COLORS = {"stale": "#c0504d", "fresh": "#3fa34d"}

FACT_COLUMNS: tuple[Column, ...] = (
    Column("Name", lambda r: r.fact.name, tooltip=lambda r: r.fact.reference),
    Column("Title", lambda r: r.fact.display_title, sort_key=lambda r: r.fact.display_title.lower(),
           tooltip=lambda r: r.fact.description),
    Column("Type", lambda r: r.fact.type),
    Column("Scope", lambda r: r.fact.scope + (" (overridden)" if r.overridden else ""),
           tooltip=lambda r: r.note, color=lambda r: "#8a8a8a" if r.overridden else None),
    Column("Freshness", lambda r: r.freshness, color=lambda r: FRESHNESS_COLORS.get(r.freshness)),
    Column("Revision", lambda r: str(r.fact.revision), sort_key=lambda r: r.fact.revision),
    Column("Updated", lambda r: r.updated),
)
SORT_KEYS = tuple(c.sort_key or c.text for c in FACT_COLUMNS)

DIAGNOSTIC_COLUMNS: tuple[Column, ...] = (
    Column("File", lambda d: d.path.name, tooltip=lambda d: str(d.path)),
    Column("Code", lambda d: d.code),
    Column("Line", lambda d: "" if d.line is None else str(d.line)),
    Column("Problem", lambda d: d.message),
)


def _combo(label: str, values: tuple[str, ...]) -> QComboBox:
    box = QComboBox()
    box.addItem(f"All {label}", "")
    for value in values:
        box.addItem(value, value)
    return box


class FactsTab(QWidget):
    """A thin view: it shows snapshots and filter results, and emits what the person wants.

    Signals:
        filter_changed(object): the :class:`FactFilter` to apply (run off the GUI thread)
        selection_changed(object): the selected :class:`FactRow` or None
        new_requested(), edit_requested(object), forget_requested(object),
        history_requested(object)
    """

    filter_changed = Signal(object)
    selection_changed = Signal(object)
    new_requested = Signal()
    edit_requested = Signal(object)
    forget_requested = Signal(object)
    history_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = RowTableModel(FACT_COLUMNS, key=lambda r: r.key, parent=self)
        self.diagnostics_model = RowTableModel(DIAGNOSTIC_COLUMNS, key=lambda d: str(d.path),
                                               parent=self)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search name, title, description and body  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.type_box = _combo("types", ("user", "feedback", "project", "reference"))
        self.scope_box = _combo("scopes", ("project", "global"))
        self.freshness_box = _combo("freshness", ("fresh", "current", "stale"))
        self.new_button = QPushButton("New fact…")
        self.new_button.setToolTip("Create a fact (Ctrl+N)")
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        for widget in (self.type_box, self.scope_box, self.freshness_box, self.new_button):
            bar.addWidget(widget)
        self.chart = SpreadChart()
        self.summary = QLabel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSortingEnabled(True)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        for column, width in enumerate((150, 176, 72, 146, 72, 64, 118)):
            self.table.setColumnWidth(column, width)
        self.diagnostics = QTableView()
        self.diagnostics.setModel(self.diagnostics_model)
        self.diagnostics.verticalHeader().setVisible(False)
        self.diagnostics.horizontalHeader().setStretchLastSection(True)
        self.diagnostics.setMaximumHeight(130)
        self.diagnostics_label = QLabel()
        self.detail = QTextBrowser()
        self.detail.setOpenExternalLinks(False)
        self.edit_button = QPushButton("Edit…")
        self.forget_button = QPushButton("Forget…")
        self.history_button = QPushButton("History")
        actions = QHBoxLayout()
        actions.addWidget(self.edit_button)
        actions.addWidget(self.history_button)
        actions.addStretch(1)
        actions.addWidget(self.forget_button)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.detail, 1)
        right_layout.addLayout(actions)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.table, 1)
        left_layout.addWidget(self.diagnostics_label)
        left_layout.addWidget(self.diagnostics)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([850, 430])
        top = QHBoxLayout()
        top.addWidget(self.summary)
        top.addWidget(self.chart, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)
        self._sort = (0, False)
        self._selected_key: object = None
        self.search.textChanged.connect(self._on_filter_edited)
        for box in (self.type_box, self.scope_box, self.freshness_box):
            box.currentIndexChanged.connect(self._on_filter_edited)
        self.model.sort_requested.connect(self._on_sort_requested)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.table.doubleClicked.connect(self._on_double_click)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_context_menu)
        self.new_button.clicked.connect(self.new_requested.emit)
        self.edit_button.clicked.connect(lambda: self._emit_for_selected(self.edit_requested))
        self.forget_button.clicked.connect(lambda: self._emit_for_selected(self.forget_requested))
        self.history_button.clicked.connect(lambda: self._emit_for_selected(self.history_requested))
        self._set_detail_buttons(False)
        self.show_snapshot(FactsSnapshot((), ()))
        self.summary.setText("Reading the stores…")  # until the first snapshot arrives

    def criteria(self) -> FactFilter:
        """The current search, filters and sort."""
        return FactFilter(
            text=self.search.text(),
            type=self.type_box.currentData() or "",
            scope=self.scope_box.currentData() or "",
            freshness=self.freshness_box.currentData() or "",
            sort_column=self._sort[0],
            descending=self._sort[1],
        )

    def show_snapshot(self, snapshot: FactsSnapshot) -> None:
        """A new store snapshot: chart, counts and diagnostics (the rows come filtered)."""
        self.chart.set_counts(snapshot.counts())
        project = sum(1 for r in snapshot.rows if r.fact.scope == "project")
        self.summary.setText(
            f"<b>{len(snapshot.rows)}</b> facts<br>{project} project · "
            f"{len(snapshot.rows) - project} global"
        )
        self.diagnostics_model.set_rows(snapshot.diagnostics)
        count = len(snapshot.diagnostics)
        self.diagnostics_label.setText(
            f"<b>{count} file(s) could not be read</b> — left untouched on disk:" if count else ""
        )
        self.diagnostics.setVisible(bool(count))
        self.diagnostics_label.setVisible(bool(count))

    def show_rows(self, rows: tuple[FactRow, ...]) -> None:
        """Filtered, sorted rows; keeps the selection on the same fact when it is still there."""
        key = self._selected_key
        self.model.set_rows(rows)
        row = self.model.find(key) if key is not None else -1
        if row >= 0:
            self.table.selectionModel().select(
                self.model.index(row, 0),
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows,
            )
            self.table.scrollTo(self.model.index(row, 0))
        else:
            self._selected_key = None
            self.selection_changed.emit(None)

    def selected_row(self) -> FactRow | None:
        """The selected fact row."""
        rows = self.table.selectionModel().selectedRows()
        return self.model.row_at(rows[0].row()) if rows else None

    def select_key(self, key: object) -> bool:
        """Select the row with ``key`` (scope, id) if it is shown."""
        self._selected_key = key
        row = self.model.find(key)
        if row < 0:
            return False
        self.table.selectRow(row)
        return True

    def show_detail(self, html_text: str) -> None:
        """The rendered detail of the selected fact."""
        self.detail.setHtml(html_text)

    def reveal(self, key: object) -> None:
        """Show the fact with ``key``: clear search and filters, then select it."""
        self._selected_key = key
        for box in (self.type_box, self.scope_box, self.freshness_box):
            box.blockSignals(True)
            box.setCurrentIndex(0)
            box.blockSignals(False)
        self.search.blockSignals(True)
        self.search.clear()
        self.search.blockSignals(False)
        self.select_key(key)
        # Always re-filter: it supersedes any filter still in flight, and show_rows then
        # selects the fact again in the full list.
        self.filter_changed.emit(self.criteria())

    def focus_search(self) -> None:
        """Ctrl+F."""
        self.search.setFocus()
        self.search.selectAll()

    def _set_detail_buttons(self, enabled: bool) -> None:
        for button in (self.edit_button, self.forget_button, self.history_button):
            button.setEnabled(enabled)

    def _emit_for_selected(self, signal: SignalInstance) -> None:
        row = self.selected_row()
        if row is not None:
            signal.emit(row)

    @Slot()
    def _on_filter_edited(self) -> None:
        self.filter_changed.emit(self.criteria())

    @Slot(int, object)
    def _on_sort_requested(self, column: int, order: Qt.SortOrder) -> None:
        self._sort = (column, order == Qt.SortOrder.DescendingOrder)
        self.filter_changed.emit(self.criteria())

    @Slot()
    def _on_selection(self) -> None:
        row = self.selected_row()
        self._selected_key = row.key if row is not None else None
        self._set_detail_buttons(row is not None)
        if row is None:
            self.detail.setHtml("<p><i>Select a fact to see it here.</i></p>")
        self.selection_changed.emit(row)

    @Slot()
    def _on_double_click(self) -> None:
        self._emit_for_selected(self.edit_requested)

    def context_menu(self) -> QMenu:
        """Edit, History and Forget for the selected fact (also used by tests)."""
        menu = QMenu(self)
        menu.addAction("Edit…", lambda: self._emit_for_selected(self.edit_requested))
        menu.addAction("History", lambda: self._emit_for_selected(self.history_requested))
        menu.addSeparator()
        menu.addAction("Forget…", lambda: self._emit_for_selected(self.forget_requested))
        return menu

    @Slot(QPoint)
    def _on_context_menu(self, pos: QPoint) -> None:
        index = self.table.indexAt(pos)
        if not index.isValid():
            return
        self.table.selectRow(index.row())
        menu = self.context_menu()
        menu.popup(self.table.viewport().mapToGlobal(pos))  # non-blocking, unlike exec()


def detail_html(row: FactRow, body_html: str) -> str:
    """Header, override/duplicate explanation and the rendered body of one fact."""
    fact = row.fact
    esc = html.escape
    parts = [
        f"<h2>{esc(fact.display_title)}</h2>",
        f"<p><code>{esc(fact.reference)}</code> · {esc(fact.type)} · revision {fact.revision}"
        f" · <b>{esc(row.freshness)}</b> · updated {esc(row.updated)}</p>",
        f"<p><i>{esc(fact.description)}</i></p>",
    ]
    if row.note:
        parts.append(
            "<table width='100%' cellpadding='6' style='background-color:rgba(200,155,60,0.18)'>"
            f"<tr><td>{esc(row.note)}</td></tr></table>"
        )
    parts.append("<hr>")
    parts.append(body_html)
    parts.append(f"<p style='color:gray'><small>id {esc(fact.id)}</small></p>")
    return "".join(parts)
