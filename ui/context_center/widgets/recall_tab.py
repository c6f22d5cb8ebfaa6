"""Recall tab: run a message through recall; last and recent traces with why each fact won."""

from __future__ import annotations

from context_engine.defaults import RECALL_BUDGET, RECALL_LIMIT, RECALL_MAX_LIMIT, RECALL_MIN_BUDGET
from context_engine.recall.trace import RecallTrace
from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..dialogs.fact_editor import monospace
from ..models.table import Column, RowTableModel
from .layout import column, split
from .review_split import row_table

TRACE_COLUMNS = (
    Column("When", lambda t: t.at[:19].replace("T", " ")),
    Column("Message", lambda t: t.query),
    Column("Result", lambda t: t.suppressed or f"{len(t.hits)} hit(s)"),
)
HIT_COLUMNS = (
    Column("Fact", lambda h: f"{h.scope}/{h.name}.md", tooltip=lambda h: h.snippet),
    Column("Type", lambda h: h.type),
    Column("Score", lambda h: f"{h.score:.3f}", sort_key=lambda h: h.score),
    Column("Freshness", lambda h: h.freshness),
    Column("Reason", lambda h: h.reason),
)
DROP_COLUMNS = (
    Column("Fact", lambda d: f"{d.scope}/{d.name}.md"),
    Column("Score", lambda d: f"{d.score:.3f}", sort_key=lambda d: d.score),
    Column("Why it lost", lambda d: d.reason + (f": {d.detail}" if d.detail else "")),
)


class RecallTab(QWidget):
    """Thin view of recall traces.

    Signals:
        run_requested(str, int, int): message, limit, budget
        trace_selected(object): a RecallTrace from the recent list
        hit_activated(object): a recalled or dropped fact was double-clicked (open it)
    """

    run_requested = Signal(str, int, int)
    trace_selected = Signal(object)
    hit_activated = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.traces_model = RowTableModel(TRACE_COLUMNS, key=lambda t: (t.at, t.query), parent=self)
        self.hits_model = RowTableModel(HIT_COLUMNS, key=lambda h: h.id, parent=self)
        self.drops_model = RowTableModel(DROP_COLUMNS, key=lambda d: (d.id, d.reason), parent=self)
        self.message = QLineEdit()
        self.message.setPlaceholderText("Type a user message, e.g. which branch do we release from")
        self.limit = QSpinBox()
        self.limit.setRange(1, RECALL_MAX_LIMIT)
        self.limit.setValue(RECALL_LIMIT)
        self.limit.setPrefix("limit ")
        self.budget = QSpinBox()
        self.budget.setRange(RECALL_MIN_BUDGET, 20000)
        self.budget.setSingleStep(100)
        self.budget.setValue(RECALL_BUDGET)
        self.budget.setPrefix("budget ")
        self.budget.setSuffix(" chars")
        self.run_button = QPushButton("Run recall")
        bar = QHBoxLayout()
        bar.addWidget(self.message, 1)
        bar.addWidget(self.limit)
        bar.addWidget(self.budget)
        bar.addWidget(self.run_button)
        self.traces = row_table(self.traces_model)
        self.traces.setColumnWidth(0, 130)
        self.traces.setColumnWidth(1, 170)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.budget_bar = QProgressBar()
        self.budget_bar.setFormat("%v / %m characters of the recall budget")
        self.hits = row_table(self.hits_model)
        self.drops = row_table(self.drops_model)
        for view in (self.hits, self.drops):
            view.setWordWrap(False)
            view.setColumnWidth(0, 210)
        self.block = QPlainTextEdit()
        self.block.setReadOnly(True)
        self.block.setFont(monospace())
        self.block.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        for widget, name in ((self.message, "Recall message"), (self.limit, "Fact limit"),
                             (self.budget, "Character budget"), (self.traces, "Recent traces"),
                             (self.summary, "Trace summary"), (self.budget_bar, "Budget used"),
                             (self.hits, "Recalled facts"), (self.drops, "Omitted and suppressed"),
                             (self.block, "Exact provider block")):
            widget.setAccessibleName(name)
        left = column(QLabel("<b>Recent traces</b> (newest first)"), self.traces)
        right = column(self.summary, self.budget_bar, QLabel("<b>Recalled</b>"), (self.hits, 2),
                       QLabel("<b>Omitted and suppressed</b>, with why"), (self.drops, 2),
                       QLabel("<b>Exact provider block</b> (appended to the user turn)"),
                       (self.block, 3))
        splitter = split(left, right, sizes=[380, 800])
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)
        self.run_button.clicked.connect(self._on_run)
        self.message.returnPressed.connect(self._on_run)
        self.traces.selectionModel().selectionChanged.connect(self._on_trace)
        self.hits.doubleClicked.connect(
            lambda index: self.hit_activated.emit(self.hits_model.row_at(index.row())))
        self.drops.doubleClicked.connect(
            lambda index: self.hit_activated.emit(self.drops_model.row_at(index.row())))
        self.hits.setToolTip("Double-click a fact to open it in the Facts tab")

    def show_trace(self, trace: RecallTrace, block: str | None) -> None:
        """Show one trace; ``block`` is the exact provider text when we ran it here."""
        t = trace
        hits = t.hits
        self.hits_model.set_rows(hits)
        self.drops_model.set_rows(t.dropped)
        budget = max(1, int(t.char_budget))
        self.budget_bar.setRange(0, budget)
        self.budget_bar.setValue(min(budget, int(t.used_chars)))
        why = t.suppressed
        counts = ", ".join(f"{k}: {v}" for k, v in t.dropped_counts.items())
        self.summary.setText(
            f"<b>“{t.query}”</b> — "
            + (f"suppressed: <b>{why}</b>" if why else f"{len(hits)} fact(s) recalled")
            + f"; {t.omitted} omitted; pool {t.pool_size}, {t.candidates} passed the gate"
            + (f"; lost: {counts}" if counts else "")
        )
        self.block.setPlainText(block if block is not None else _block_note(t))

    @Slot()
    def _on_run(self) -> None:
        text = self.message.text().strip()
        if text:
            self.run_requested.emit(text, self.limit.value(), self.budget.value())

    @Slot()
    def _on_trace(self) -> None:
        rows = self.traces.selectionModel().selectedRows()
        if rows:
            self.trace_selected.emit(self.traces_model.row_at(rows[0].row()))


def _block_note(trace: object) -> str:
    if getattr(trace, "suppressed", None):
        return "(no block: recall was suppressed)"
    return "(recorded trace: run it again to see the exact block)"
