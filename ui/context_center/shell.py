"""The first window on screen, shown before the engine and the tabs are imported.

PySide6 alone takes ~0.3 s to import and the engine, presenters and tabs another ~0.5 s: the
main window (menus, status bar, the five tab titles) needs nothing but Qt, so it is shown first
with a busy placeholder in each tab, and :class:`~context_center.application.Application`
puts the real tabs in their places after that first paint. Only Qt is imported here.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEventLoop, QSettings, Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QTableWidget, QVBoxLayout, QWidget

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
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        busy = QProgressBar()
        busy.setRange(0, 0)
        busy.setMaximumWidth(240)
        busy.setAccessibleName("Loading")
        stack.addWidget(self.label)
        stack.addWidget(busy, 0, Qt.AlignmentFlag.AlignHCenter)
        if title == "Facts":
            table = QTableWidget(0, len(FACT_HEADERS))
            table.setHorizontalHeaderLabels(list(FACT_HEADERS))
            table.verticalHeader().setVisible(False)
            table.horizontalHeader().setStretchLastSection(True)
            table.setAccessibleName("Facts table (loading)")
            stack.addWidget(table, 1)
        else:
            stack.addStretch(1)


def open_shell(settings: QSettings) -> MainWindow:
    """The main window with placeholder tabs, its saved geometry and tab restored, shown."""
    window = MainWindow(settings)
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
