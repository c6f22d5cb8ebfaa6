"""Facts tab: one table of both scopes with search, filters, a spread chart and a detail pane."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from operator import attrgetter

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QObject,
    QPoint,
    Qt,
    Signal,
    SignalInstance,
    Slot,
)
from PySide6.QtGui import QColor, QKeyEvent, QTextCharFormat, QTextDocument
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
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from ..models.table import Column, RowTableModel
from ..services.fact_rows import FactFilter, FactRow, FactsSnapshot, counts_of, find_fact_row
from .spread_chart import SpreadChart

FRESHNESS_COLORS = {"stale": "#c0504d", "fresh": "#3fa34d"}

FACT_COLUMNS: tuple[Column, ...] = (
    Column("Name", lambda r: r.fact.name, tooltip=lambda r: r.fact.reference),
    Column("Title", lambda r: r.fact.display_title, sort_key=lambda r: r.fact.display_title.lower(),
           tooltip=lambda r: r.fact.description),
    Column("Type", lambda r: r.fact.type),
    Column("Scope", lambda r: r.fact.scope + (" (conflict)" if r.conflict else
                                              " (overridden)" if r.overridden else ""),
           tooltip=lambda r: r.note,
           color=lambda r: "#cf222e" if r.conflict else "#8a8a8a" if r.overridden else None),
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
        forget_many_requested(list), export_requested(list): the selected FactRows
        open_requested(object), reveal_requested(object): a file Path (external editor,
            file manager)
    """

    filter_changed = Signal(object)
    selection_changed = Signal(object)
    new_requested = Signal()
    edit_requested = Signal(object)
    forget_requested = Signal(object)
    history_requested = Signal(object)
    forget_many_requested = Signal(list)
    export_requested = Signal(list)
    open_requested = Signal(object)
    reveal_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # (scope, id), as ``FactRow.key``; found by a scan of the ids, not a dict of 100,000.
        self.model = RowTableModel(FACT_COLUMNS, key=attrgetter("fact.scope", "fact.id"),
                                   parent=self, lookup=find_fact_row)
        self.diagnostics_model = RowTableModel(DIAGNOSTIC_COLUMNS, key=lambda d: str(d.path),
                                               parent=self)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search name, title, description and body  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.type_box = _combo("types", ("user", "feedback", "project", "reference"))
        self.scope_box = _combo("scopes", ("project", "global"))
        self.freshness_box = _combo("freshness", ("fresh", "current", "stale"))
        self.goto = QLineEdit()
        self.goto.setPlaceholderText("Go to fact…")
        self.goto.setToolTip("Type a name or project/name.md and press Return")
        self.goto.setMaximumWidth(200)
        self.new_button = QPushButton("New fact…")
        self.new_button.setToolTip("Create a fact (Ctrl+N)")
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        for widget in (self.type_box, self.scope_box, self.freshness_box, self.goto,
                       self.new_button):
            bar.addWidget(widget)
        self.chart = SpreadChart()
        self.summary = QLabel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
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
        self.open_button = QPushButton("Open in editor")
        self.open_button.setToolTip("Open the fact's file in your external editor")
        self.reveal_button = QPushButton("Show in folder")
        self.reveal_button.setToolTip("Show the fact's file in the file manager")
        actions = QHBoxLayout()
        actions.addWidget(self.edit_button)
        actions.addWidget(self.history_button)
        actions.addWidget(self.open_button)
        actions.addWidget(self.reveal_button)
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
        self._total = 0
        self._pending = ""  # what a partial snapshot still waits for, said under the counts
        # The rows and counts the summary describes (``None`` before a snapshot's rows come).
        self._shown: tuple[Sequence[FactRow], list[tuple[str, dict[str, int]]]] | None = None
        self._all_rows: Sequence[FactRow] = ()
        self._selected_key: object = None
        named: tuple[tuple[QWidget, str], ...] = (
            (self.search, "Search facts"), (self.goto, "Go to fact by name"),
            (self.type_box, "Filter by type"),
            (self.scope_box, "Filter by scope"), (self.freshness_box, "Filter by freshness"),
            (self.new_button, "New fact"), (self.chart, "Spread of the shown facts"),
            (self.summary, "Fact counts"), (self.table, "Facts"),
            (self.diagnostics, "Files that could not be read"),
            (self.diagnostics_label, "Unreadable files"), (self.detail, "Selected fact"),
            (self.edit_button, "Edit fact"), (self.forget_button, "Forget fact"),
            (self.history_button, "Fact history"), (self.open_button, "Open in external editor"),
            (self.reveal_button, "Show in file manager"),
        )
        for control, name in named:
            control.setAccessibleName(name)
        self.search.textChanged.connect(self._on_filter_edited)
        self.goto.returnPressed.connect(self._on_goto)
        for box in (self.type_box, self.scope_box, self.freshness_box):
            box.currentIndexChanged.connect(self._on_filter_edited)
        self.model.sort_requested.connect(self._on_sort_requested)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        # A reset drops the selection without selectionChanged: follow it, or the pane lies.
        self.model.modelReset.connect(self._on_selection)
        self.table.doubleClicked.connect(self._on_double_click)
        self._keys = _EditKeys(self.table, lambda: self._emit_for_selected(self.edit_requested))
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_context_menu)
        self.new_button.clicked.connect(self.new_requested.emit)
        self.edit_button.clicked.connect(lambda: self._emit_for_selected(self.edit_requested))
        self.forget_button.clicked.connect(self._on_forget_clicked)
        self.open_button.clicked.connect(lambda: self._emit_path(self.open_requested))
        self.reveal_button.clicked.connect(lambda: self._emit_path(self.reveal_requested))
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
        self._total = len(snapshot.rows)  # counts and chart follow with the filtered rows
        self._all_rows = snapshot.rows
        self._shown = None  # until its filtered rows come
        # Rows shown before the listing is complete: parsed so far, or not yet checked.
        self._pending = ("" if not snapshot.partial else
                         "Reading the rest of the stores…" if snapshot.reading else
                         "Checking them against the files…")
        self.diagnostics_model.set_rows(snapshot.diagnostics)
        count = len(snapshot.diagnostics)
        self.diagnostics_label.setText(
            f"<b>{count} file(s) could not be read</b> — left untouched on disk:" if count else ""
        )
        self.diagnostics.setVisible(bool(count))
        self.diagnostics_label.setVisible(bool(count))

    def show_stopped(self, note: str) -> None:
        """The read of the rows shown stopped part-way: ``note`` says so until new rows come
        (kept under the counts when the filter changes)."""
        self._pending = note
        if self._shown is None:
            self.summary.setText(note)
        else:
            self._show_counts(*self._shown)

    def _show_counts(self, rows: Sequence[FactRow],
                     counts: list[tuple[str, dict[str, int]]]) -> None:
        self._shown = (rows, counts)
        self.chart.set_counts(counts)
        project = counts[1][1].get("project", 0) if len(counts) > 1 else 0
        shown = len(rows)
        head = (f"<b>{shown}</b> facts" if shown == self._total
                else f"<b>{shown}</b> of {self._total} facts")
        still = f"<br><i>{self._pending}</i>" if self._pending else ""
        self.summary.setText(f"{head}<br>{project} project · {shown - project} global{still}")

    def show_rows(self, rows: Sequence[FactRow],
                  counts: list[tuple[str, dict[str, int]]] | None = None) -> None:
        """Filtered, sorted rows; keeps the selection on the same fact when it is still there.

        Counts and chart describe what is shown ("3 of 11"); ``counts`` may come computed
        off the GUI thread.
        """
        self._show_counts(rows, counts if counts is not None else counts_of(rows))
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
        """The selected fact row (the first, when several are)."""
        rows = self.selected_rows()
        return rows[0] if rows else None

    def selected_rows(self) -> list[FactRow]:
        """Every selected fact row, in table order."""
        numbers = sorted(i.row() for i in self.table.selectionModel().selectedRows())
        return [r for r in (self.model.row_at(n) for n in numbers) if r is not None]

    def select_key(self, key: object) -> bool:
        """Select the row with ``key`` (scope, id) if it is shown."""
        self._selected_key = key
        row = self.model.find(key)
        if row < 0:
            return False
        self.table.selectRow(row)
        return True

    def show_detail(self, html_text: str) -> None:
        """The rendered detail of the selected fact, with the search words highlighted."""
        self.detail.setHtml(html_text)
        self.highlight(self.search.text().split())

    def highlight(self, words: list[str]) -> int:
        """Mark every match of ``words`` in the detail pane; returns how many were marked."""
        document = self.detail.document()
        marks: list[QTextEdit.ExtraSelection] = []
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(255, 210, 0, 130))
        for word in words:
            cursor = document.find(word, 0)
            while not cursor.isNull() and len(marks) < 500:
                mark = QTextEdit.ExtraSelection()
                mark.cursor = cursor
                mark.format = fmt
                marks.append(mark)
                cursor = document.find(word, cursor, QTextDocument.FindFlag(0))
        self.detail.setExtraSelections(marks)
        return len(marks)

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

    @Slot()
    def _on_goto(self) -> None:
        text = self.goto.text().strip()
        if not text:
            return
        rows = self._all_rows
        first = getattr(rows, "first_with", None)  # a column table: a scan of its names
        if callable(first):
            at = first(text)
            wanted = [rows[at]] if at >= 0 else []
        else:
            wanted = [r for r in rows if text in (r.fact.reference, r.fact.name)]
        if wanted:
            self.reveal(wanted[0].key)
            self.table.setFocus()

    def focus_search(self) -> None:
        """Ctrl+F."""
        self.search.setFocus()
        self.search.selectAll()

    def _set_detail_buttons(self, enabled: bool, several: bool = False) -> None:
        for button in (self.edit_button, self.history_button, self.open_button,
                       self.reveal_button):
            button.setEnabled(enabled and not several)
        self.forget_button.setEnabled(enabled)
        self.forget_button.setText("Forget selected…" if several else "Forget…")

    def _emit_for_selected(self, signal: SignalInstance) -> None:
        row = self.selected_row()
        if row is not None:
            signal.emit(row)

    def _emit_path(self, signal: SignalInstance) -> None:
        row = self.selected_row()
        if row is not None and row.fact.path is not None:
            signal.emit(row.fact.path)

    @Slot()
    def _on_forget_clicked(self) -> None:
        rows = self.selected_rows()
        if len(rows) > 1:
            self.forget_many_requested.emit(rows)
        elif rows:
            self.forget_requested.emit(rows[0])

    @Slot()
    def _on_filter_edited(self) -> None:
        self.filter_changed.emit(self.criteria())

    @Slot(int, object)
    def _on_sort_requested(self, column: int, order: Qt.SortOrder) -> None:
        self._sort = (column, order == Qt.SortOrder.DescendingOrder)
        self.filter_changed.emit(self.criteria())

    @Slot()
    def _on_selection(self) -> None:
        rows = self.selected_rows()
        row = rows[0] if rows else None
        self._selected_key = row.key if row is not None else None
        self._set_detail_buttons(row is not None, several=len(rows) > 1)
        if row is None:
            self.detail.setHtml("<p><i>Select a fact to see it here.</i></p>")
            self.detail.setExtraSelections([])
        elif len(rows) > 1:
            self.detail.setHtml(f"<p><b>{len(rows)} facts selected.</b> Forget or export "
                                "them together, or select one to see it.</p>")
            self.selection_changed.emit(None)
            return
        self.selection_changed.emit(row)

    @Slot()
    def _on_double_click(self) -> None:
        self._emit_for_selected(self.edit_requested)

    def context_menu(self) -> QMenu:
        """Edit, History and Forget for the selected fact (also used by tests)."""
        menu = QMenu(self)
        menu.addAction("Edit…", lambda: self._emit_for_selected(self.edit_requested))
        menu.addAction("History", lambda: self._emit_for_selected(self.history_requested))
        menu.addAction("Open in editor", lambda: self._emit_path(self.open_requested))
        menu.addAction("Show in folder", lambda: self._emit_path(self.reveal_requested))
        menu.addAction("Export selected…",
                       lambda: self.export_requested.emit(self.selected_rows()))
        menu.addSeparator()
        menu.addAction("Forget…", self._on_forget_clicked)
        return menu

    @Slot(QPoint)
    def _on_context_menu(self, pos: QPoint) -> None:
        index = self.table.indexAt(pos)
        if not index.isValid():
            return
        if not self.table.selectionModel().isRowSelected(index.row(), index.parent()):
            self.table.selectRow(index.row())
        menu = self.context_menu()
        menu.popup(self.table.viewport().mapToGlobal(pos))  # non-blocking, unlike exec()


class _EditKeys(QObject):
    """Return, Enter and F2 on the table open the editor on the selected fact."""

    def __init__(self, table: QTableView, edit: Callable[[], None]) -> None:
        super().__init__(table)
        self._edit = edit
        table.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Consume only the edit keys, and only without modifiers."""
        plain = (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and \
                event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_F2) and \
                event.modifiers() in plain:
            self._edit()
            return True
        return False


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
