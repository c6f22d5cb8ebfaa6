"""Layout builders the tabs share: a margin-free column, a right-aligned button row, a split."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLayout, QSplitter, QVBoxLayout, QWidget

# A widget, a layout, or a widget with its stretch factor.
Item = QWidget | QLayout | tuple[QWidget, int]


def column(*items: Item) -> QWidget:
    """A widget stacking ``items`` top to bottom with no margins."""
    widget = QWidget()
    stack = QVBoxLayout(widget)
    stack.setContentsMargins(0, 0, 0, 0)
    for item in items:
        if isinstance(item, tuple):
            stack.addWidget(item[0], item[1])
        elif isinstance(item, QLayout):
            stack.addLayout(item)
        else:
            stack.addWidget(item)
    return widget


def button_row(*buttons: QWidget) -> QHBoxLayout:
    """``buttons`` aligned to the right."""
    row = QHBoxLayout()
    row.addStretch(1)
    for button in buttons:
        row.addWidget(button)
    return row


def split(*widgets: QWidget, sizes: list[int] | None = None,
          orientation: Qt.Orientation = Qt.Orientation.Horizontal) -> QSplitter:
    """``widgets`` side by side (or stacked) in a splitter, with optional initial ``sizes``."""
    splitter = QSplitter(orientation)
    for widget in widgets:
        splitter.addWidget(widget)
    if sizes is not None:
        splitter.setSizes(sizes)
    return splitter
