"""The first window on screen, shown before the engine and the tabs are imported.

PySide6 alone takes ~0.3 s to import and the engine, presenters and tabs another ~0.5 s: the
main window (menus, status bar, the five tab titles) needs nothing but Qt, so it is shown first
with a busy placeholder in each tab, and :class:`~context_center.application.Application`
puts the real tabs in their places after that first paint. Only Qt is imported here, and
nothing before the paint touches PySide's ``Qt`` namespace (its ~40 ms of enums are built
after it), nor loads an icon, a style sheet or the signal handling.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEventLoop, QSettings
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QLayout,
    QProgressBar,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from . import theme
from .widgets.main_window import MainWindow

TAB_TITLES = ("Instructions", "Facts", "Archive && Revisions", "Suggestions", "Recall")
# The Facts table's headers, shown empty until the real tab takes the placeholder's place
# (a test keeps them equal to the real columns).
FACT_HEADERS = ("Name", "Title", "Type", "Scope", "Freshness", "Revision", "Updated")
STARTING = "Starting"


class Placeholder(QWidget):
    """A tab's stand-in while the app loads: a busy bar, and for Facts an empty table."""

    def __init__(self, title: str) -> None:
        super().__init__()
        self.setProperty("placeholder", True)
        stack = QVBoxLayout(self)
        self.label = QLabel(f"Loading {title.replace('&&', '&')}…")
        busy = QProgressBar()
        busy.setRange(0, 0)
        busy.setMaximumWidth(240)
        busy.setAccessibleName("Loading")
        stack.addLayout(_centred(self.label))
        stack.addLayout(_centred(busy))
        if title == "Facts":
            table = QTableWidget(0, len(FACT_HEADERS))
            table.setHorizontalHeaderLabels(list(FACT_HEADERS))
            table.verticalHeader().setVisible(False)
            table.horizontalHeader().setStretchLastSection(True)
            table.setAccessibleName("Facts table (loading)")
            stack.addWidget(table, 1)
        else:
            stack.addStretch(1)


def _centred(widget: QWidget) -> QLayout:
    # Stretch either side rather than an alignment flag (a ``Qt`` enum: see the module doc).
    row = QHBoxLayout()
    row.addStretch(1)
    row.addWidget(widget)
    row.addStretch(1)
    return row


def first_frame(app: QApplication, settings: QSettings) -> MainWindow:
    """What ``context-center`` does before its first paint: palette, shell, painted.

    ``app`` is made by :func:`context_center.theme.application` (the Fusion style). Then call
    :func:`context_center.theme.finish`, and build the application on the window.
    """
    theme.prepare(app)
    window = open_shell(settings)
    paint_now(window)
    return window


def open_shell(settings: QSettings) -> MainWindow:
    """The main window with placeholder tabs, its saved geometry and tab restored, shown."""
    window = MainWindow(settings, first_frame=True)
    for title in TAB_TITLES:
        window.add_tab(Placeholder(title), title)
    window.restore_state()
    window.show_progress(STARTING + "…")
    window.show()
    return window


def paint_now(window: QWidget, timeout_ms: int = 1000) -> None:
    """Process events until ``window`` has been exposed and painted (or ``timeout_ms``)."""
    app = QCoreApplication.instance()
    if app is None:
        return
    clock = QElapsedTimer()
    clock.start()
    while clock.elapsed() < timeout_ms:
        handle = window.windowHandle()
        if handle is not None and handle.isExposed():
            break
        # No input yet: nothing is wired to the menus until the app is built.
        app.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents, 20)
    window.repaint()  # a synchronous paint, now that the platform shows the window
