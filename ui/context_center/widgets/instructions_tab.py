"""Instructions tab: documents in precedence order, import trees, diagnostics, the block."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSplitter,
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
    """

    document_selected = Signal(object)
    diagnostic_activated = Signal(object)
    target_changed = Signal(str)

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
        for column, width in enumerate((170, 100, 44, 130)):
            self.diagnostics.setColumnWidth(column, width)
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
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(QLabel("<b>Documents</b>, lowest precedence first (later ones win)"))
        ll.addWidget(self.tree, 3)
        ll.addWidget(QLabel("<b>Diagnostics</b> (local only; never sent to the model)"))
        ll.addWidget(self.diagnostics, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(self.views)
        splitter.setSizes([560, 620])
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addLayout(target_row)
        layout.addWidget(splitter, 1)
        self.tree.selectionModel().currentRowChanged.connect(self._on_current)
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

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.document_selected.emit(self.tree_model.data(current, roles.ROW))

    @Slot(QModelIndex)
    def _on_diagnostic(self, index: QModelIndex) -> None:
        self.diagnostic_activated.emit(self.diagnostics_model.row_at(index.row()))
