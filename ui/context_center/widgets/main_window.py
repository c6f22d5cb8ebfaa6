"""The main window: tabs, menus, shortcuts and the status bar. Layout only, no logic."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QWidget,
)


class MainWindow(QMainWindow):
    """Hosts the five tabs; menu actions become ``*_requested`` signals for the root to wire.

    Signals:
        refresh_requested(): F5
        new_fact_requested(): Ctrl+N
        find_requested(): Ctrl+F
        save_requested(): Ctrl+S
        forget_requested(): Del
        cancel_requested(): the status bar's Cancel button
    """

    refresh_requested = Signal()
    new_fact_requested = Signal()
    import_requested = Signal()
    export_bundle_requested = Signal()
    import_bundle_requested = Signal()
    find_requested = Signal()
    save_requested = Signal()
    forget_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self.setWindowTitle("Context Center")
        self.resize(1180, 760)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.setCentralWidget(self.tabs)
        self._build_menus()
        self._build_status_bar()

    def add_tab(self, widget: QWidget, title: str) -> None:
        """Append a tab."""
        self.tabs.addTab(widget, title)

    def _action(
        self,
        text: str,
        shortcut: QKeySequence | QKeySequence.StandardKey | str,
        signal: SignalInstance,
    ) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(signal.emit)
        self.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.new_action = self._action("&New fact…", QKeySequence.StandardKey.New,
                                       self.new_fact_requested)
        self.save_action = self._action("&Save", QKeySequence.StandardKey.Save, self.save_requested)
        file_menu.addAction(self.new_action)
        file_menu.addAction(self.save_action)
        self.import_action = self._action("&Import…", "", self.import_requested)
        file_menu.addAction(self.import_action)
        self.export_bundle_action = self._action("&Export bundle…", "",
                                                 self.export_bundle_requested)
        self.import_bundle_action = self._action("Import &bundle…", "",
                                                 self.import_bundle_requested)
        file_menu.addAction(self.export_bundle_action)
        file_menu.addAction(self.import_bundle_action)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        edit_menu = bar.addMenu("&Edit")
        self.find_action = self._action("&Find", QKeySequence.StandardKey.Find, self.find_requested)
        self.forget_action = self._action("&Forget fact…", QKeySequence(Qt.Key.Key_Delete),
                                          self.forget_requested)
        edit_menu.addAction(self.find_action)
        edit_menu.addAction(self.forget_action)
        view_menu = bar.addMenu("&View")
        self.refresh_action = self._action("&Refresh", QKeySequence(Qt.Key.Key_F5),
                                           self.refresh_requested)
        view_menu.addAction(self.refresh_action)

    def _build_status_bar(self) -> None:
        status = self.statusBar()
        self.paths_label = QLabel()
        self.paths_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.counts_label = QLabel()
        # Transient messages go in their own label: QStatusBar.showMessage() would hide the
        # other status widgets (store paths, a remote window's Reconnect button) meanwhile.
        self.message_label = QLabel()
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(self.message_label.clear)
        self.progress_label = QLabel()
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)  # busy indicator: long ops rarely know their total
        self.progress.setMaximumWidth(120)
        self.progress.setMaximumHeight(14)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setFlat(True)
        self.cancel_button.clicked.connect(self.cancel_requested.emit)
        status.addWidget(self.paths_label, 1)
        status.addPermanentWidget(self.message_label)
        status.addPermanentWidget(self.progress_label)
        status.addPermanentWidget(self.progress)
        status.addPermanentWidget(self.cancel_button)
        status.addPermanentWidget(self.counts_label)
        self.show_progress("")

    def show_paths(self, project_store: str, global_store: str) -> None:
        """Store locations (local display only; never sent anywhere)."""
        self.paths_label.setText(
            f"project: {_tilde(project_store)}   global: {_tilde(global_store)}")
        self.paths_label.setToolTip(f"Project store: {project_store}\nGlobal store: {global_store}")

    def show_message(self, text: str, timeout_ms: int = 6000) -> None:
        """A transient message (saved, failed …) that leaves the other status widgets shown."""
        self.message_label.setText(text)
        self._message_timer.start(timeout_ms)

    def show_counts(self, text: str) -> None:
        """Fact/archive/diagnostic counts."""
        self.counts_label.setText(text)

    def show_progress(self, label: str) -> None:
        """Show a cancellable busy indicator for long work; empty label hides it."""
        busy = bool(label)
        self.progress_label.setText(label)
        self.progress_label.setVisible(busy)
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)

    def restore_state(self) -> None:
        """Geometry, dock/splitter state and the current tab from QSettings."""
        geometry = self._settings.value("window/geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        state = self._settings.value("window/state")
        if isinstance(state, QByteArray):
            self.restoreState(state)
        tab = self._settings.value("window/tab", 0)
        try:
            self.tabs.setCurrentIndex(int(str(tab)))
        except (TypeError, ValueError):
            self.tabs.setCurrentIndex(0)

    def save_state(self) -> None:
        """Persist geometry and the current tab."""
        self._settings.setValue("window/geometry", self.saveGeometry())
        self._settings.setValue("window/state", self.saveState())
        self._settings.setValue("window/tab", self.tabs.currentIndex())
        self._settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Remember the window state on close."""
        self.save_state()
        super().closeEvent(event)


def _tilde(path: str) -> str:
    """``~`` for the user's home directory: shorter, still unambiguous on this machine."""
    home = str(Path.home())
    return "~" + path[len(home):] if path == home or path.startswith(home + "/") else path
