"""A read-only tree model over a tree of immutable-ish nodes built off the GUI thread."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QByteArray, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from . import roles

Index = QModelIndex | QPersistentModelIndex


@dataclass(eq=False)
class Node:
    """One row of a tree: column texts, children, and what the row stands for."""

    values: tuple[str, ...]
    payload: Any = None
    kind: str = ""
    tooltip: str = ""
    color: str | None = None
    children: list[Node] = field(default_factory=list)
    parent: Node | None = field(default=None, repr=False)
    row: int = 0

    def add(self, child: Node) -> Node:
        """Append ``child`` and return it."""
        child.parent = self
        child.row = len(self.children)
        self.children.append(child)
        return child


class NodeTreeModel(QAbstractItemModel):
    """Adapter over a :class:`Node` tree; the root node is invisible."""

    def __init__(self, headers: Sequence[str], parent: Any = None) -> None:
        super().__init__(parent)
        self._headers = tuple(headers)
        self._root = Node(values=())

    @property
    def root(self) -> Node:
        """The invisible root."""
        return self._root

    def set_root(self, root: Node) -> None:
        """Swap in a new tree."""
        self.beginResetModel()
        self._root = root
        self.endResetModel()

    def node(self, index: Index) -> Node:
        """The node behind ``index`` (the root for an invalid index)."""
        if index.isValid():
            node = index.internalPointer()
            if isinstance(node, Node):
                return node
        return self._root

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        """Index of a child of ``parent``."""
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        owner = self.node(parent)
        if not (0 <= row < len(owner.children)):
            return QModelIndex()
        return self.createIndex(row, column, owner.children[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008  # reason: Qt's parent() overloads QObject.parent(); a model only needs the index form
        """Parent of ``index`` (column 0)."""
        if not index.isValid():
            return QModelIndex()
        node = self.node(index)
        up = node.parent
        if up is None or up is self._root:
            return QModelIndex()
        return self.createIndex(up.row, 0, up)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Children count (only column 0 has children)."""
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self.node(parent).children)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Same columns at every level."""
        return len(self._headers)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Texts, tooltips and the named roles."""
        if not index.isValid():
            return None
        node = self.node(index)
        if role == Qt.ItemDataRole.DisplayRole:
            column = index.column()
            return node.values[column] if column < len(node.values) else ""
        if role == Qt.ItemDataRole.ToolTipRole:
            return node.tooltip or None
        if role == Qt.ItemDataRole.ForegroundRole and node.color:
            return QBrush(QColor(node.color))
        if role == roles.ROW:
            return node.payload
        if role == roles.KIND:
            return node.kind
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Column headers."""
        return roles.header(self._headers, section, orientation, role)

    def roleNames(self) -> dict[int, QByteArray]:
        """Qt's default role names plus ours."""
        return roles.with_ours(dict(super().roleNames()))
