"""Instructions tab: documents in precedence order, import trees, diagnostics, the block."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QModelIndex, Signal, SignalInstance, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ..dialogs.fact_editor import monospace
from ..models import roles
from ..models.table import Column, RowTableModel
from ..models.tree import NodeTreeModel
from .layout import column, split

DIAGNOSTIC_COLUMNS = (
    Column("Code", lambda d: d.code),
    Column("Source", lambda d: d.source.name if d.source else "", tooltip=lambda d: str(d.source)),
    Column("Line", lambda d: "" if d.line is None else str(d.line)),
    Column("Import", lambda d: d.path),
    Column("Message", lambda d: d.message),
)


class InstructionsTab(QWidget):
    """Thin view; the presenter fills the tree, diagnostics and texts.

    Signals:
        document_selected(object): an InstructionDocument (or an import's payload) was chosen
        diagnostic_activated(object): an InstructionDiagnostic was clicked
        target_changed(str): resolve for this path (relative to the workspace root; "" = the
            workspace itself)
        edit_requested(object), open_requested(object), reveal_requested(object): the
            selected document's or import's file Path
    """

    document_selected = Signal(object)
    diagnostic_activated = Signal(object)
    target_changed = Signal(str)
    edit_requested = Signal(object)
    open_requested = Signal(object)
    reveal_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree_model = NodeTreeModel(["Document / import", "Scope", "Kind", "Directory"], self)
        self.diagnostics_model = RowTableModel(DIAGNOSTIC_COLUMNS, key=lambda d: (
            d.code, str(d.source), d.line, d.path), parent=self)
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.target = QLineEdit()
        self.target.setPlaceholderText("the workspace (type a sub-path such as admin, then Enter)")
        self.target.setClearButtonEnabled(True)
        target_row = QHBoxLayout()
        target_row.addWidget(QLabel("Resolve for:"))
        target_row.addWidget(self.target, 1)
        self.tree = QTreeView()
        self.tree.setModel(self.tree_model)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setColumnWidth(0, 260)
        self.tree.setColumnWidth(1, 80)
        self.tree.setColumnWidth(2, 70)
        self.diagnostics = QTableView()
        self.diagnostics.setModel(self.diagnostics_model)
        self.diagnostics.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.diagnostics.verticalHeader().setVisible(False)
        self.diagnostics.horizontalHeader().setStretchLastSection(True)
        for index, width in enumerate((170, 100, 44, 130)):
            self.diagnostics.setColumnWidth(index, width)
        self.rendered = QTextBrowser()
        self.source = QPlainTextEdit()
        self.source.setReadOnly(True)
        self.source.setFont(monospace())
        self.block = QPlainTextEdit()
        self.block.setReadOnly(True)
        self.block.setFont(monospace())
        self.views = QTabWidget()
        self.views.addTab(self.rendered, "Rendered")
        self.views.addTab(self.source, "Expanded text")
        self.views.addTab(self.block, "Exact provider block")
        left = column(QLabel("<b>Documents</b>, lowest precedence first (later ones win)"),
                      (self.tree, 3),
                      QLabel("<b>Diagnostics</b> (local only; never sent to the model)"),
                      (self.diagnostics, 1))
        splitter = split(left, self.views, sizes=[560, 620])
        for widget, name in ((self.header, "Workspace and home"),
                             (self.target, "Resolve instructions for a sub-path"),
                             (self.tree, "Instruction documents and imports"),
                             (self.diagnostics, "Instruction diagnostics"),
                             (self.rendered, "Rendered document"),
                             (self.source, "Expanded text"), (self.block, "Exact provider block"),
                             (self.views, "Document views")):
            widget.setAccessibleName(name)
        self.edit_button = QPushButton("Edit file…")
        self.open_button = QPushButton("Open in editor")
        self.reveal_button = QPushButton("Show in folder")
        for button, signal in ((self.edit_button, self.edit_requested),
                               (self.open_button, self.open_requested),
                               (self.reveal_button, self.reveal_requested)):
            button.clicked.connect(lambda _=False, s=signal: self._emit_path(s))
            button.setEnabled(False)
            target_row.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addLayout(target_row)
        layout.addWidget(splitter, 1)
        self.tree.selectionModel().currentRowChanged.connect(self._on_current)
        self.tree_model.modelReset.connect(self._on_reset)
        self.diagnostics.clicked.connect(self._on_diagnostic)
        self.target.returnPressed.connect(lambda: self.target_changed.emit(self.target.text()))

    def select_node(self, predicate: Callable[[object], bool]) -> bool:
        """Select the first tree row whose payload satisfies ``predicate``."""
        stack = [QModelIndex()]
        while stack:
            parent = stack.pop()
            for row in range(self.tree_model.rowCount(parent)):
                index = self.tree_model.index(row, 0, parent)
                if predicate(self.tree_model.data(index, roles.ROW)):
                    self.tree.setCurrentIndex(index)
                    self.tree.scrollTo(index)
                    return True
                stack.append(index)
        return False

    def selected_path(self) -> Path | None:
        """The file of the selected document or import (an existing file only)."""
        payload = self.tree_model.data(self.tree.currentIndex(), roles.ROW)
        path = getattr(payload, "path", None)
        return path if isinstance(path, Path) else None

    def _emit_path(self, signal: SignalInstance) -> None:
        path = self.selected_path()
        if path is not None:
            signal.emit(path)

    @Slot()
    def _on_reset(self) -> None:
        for button in (self.edit_button, self.open_button, self.reveal_button):
            button.setEnabled(self.selected_path() is not None)

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._on_reset()
        self.document_selected.emit(self.tree_model.data(current, roles.ROW))

    @Slot(QModelIndex)
    def _on_diagnostic(self, index: QModelIndex) -> None:
        self.diagnostic_activated.emit(self.diagnostics_model.row_at(index.row()))
