"""A small stacked-bar chart of how the store spreads over type, scope and freshness."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget

# Fixed colours per category so the same value always looks the same across rows and themes.
COLORS: dict[str, str] = {
    "user": "#8e6bd1",
    "feedback": "#d1706b",
    "project": "#4c8fd6",
    "reference": "#4fb08a",
    "global": "#c89b3c",
    "fresh": "#3fa34d",
    "current": "#7f9c3a",
    "stale": "#c0504d",
}


class SpreadChart(QWidget):
    """Rows of proportional bars, one per dimension, each segment labelled with its count."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[tuple[str, list[tuple[str, int]]]] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip("How the active facts spread over type, scope and freshness")

    def set_counts(self, rows: Sequence[tuple[str, Mapping[str, int]]]) -> None:
        """Replace the data: ``[(dimension, {value: count})]``."""
        self._rows = [(label, list(counts.items())) for label, counts in rows]
        self.updateGeometry()
        self.update()

    @property
    def rows(self) -> list[tuple[str, list[tuple[str, int]]]]:
        """The data shown."""
        return self._rows

    def _row_height(self) -> int:
        return self.fontMetrics().height() + 6

    def sizeHint(self) -> QSize:
        """Three bars tall."""
        return QSize(360, max(3, len(self._rows)) * (self._row_height() + 4) + 4)

    def minimumSizeHint(self) -> QSize:
        """Narrow but still readable."""
        return QSize(200, self.sizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:
        """Draw each dimension as a labelled stacked bar."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        metrics = self.fontMetrics()
        label_width = max((metrics.horizontalAdvance(label) for label, _ in self._rows), default=0)
        label_width += 10
        height = self._row_height()
        text_color = self.palette().color(QPalette.ColorRole.WindowText)
        empty = self.palette().color(QPalette.ColorRole.Mid)
        y = 2
        for label, counts in self._rows:
            painter.setPen(text_color)
            painter.drawText(
                QRectF(0, y, label_width, height),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                label,
            )
            total = sum(n for _, n in counts)
            bar = QRectF(label_width, y, max(0, self.width() - label_width - 2), height)
            if total == 0:
                painter.fillRect(bar, empty)
            x = bar.left()
            for value, count in counts:
                if count <= 0:
                    continue
                width = bar.width() * count / total
                segment = QRectF(x, y, width, height)
                painter.fillRect(segment, QColor(COLORS.get(value, "#888888")))
                text = f"{value} {count}"
                if metrics.horizontalAdvance(text) + 6 > width:
                    text = str(count)
                if metrics.horizontalAdvance(text) + 4 <= width:
                    painter.setPen(QColor("#ffffff"))
                    painter.drawText(segment, Qt.AlignmentFlag.AlignCenter, text)
                x += width
            y += height + 4
        painter.end()
