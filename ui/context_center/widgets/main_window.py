"""The main window: tabs, menus, shortcuts and the status bar. Layout only, no logic."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QObject, QSettings, QSize, QTimer, Signal, SignalInstance
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QWidget,
)

if TYPE_CHECKING:  # the event classes' enum (~180 members) is built on first use
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QCloseEvent


class MainWindow(QMainWindow):
    """Hosts the five tabs; menu actions become ``*_requested`` signals for the root to wire.

    Nothing here touches PySide's ``Qt`` namespace before :meth:`complete` (building it costs
    ~40 ms): a window made for the first frame (``first_frame=True``, see ``shell.py``) gets
    those settings when the application takes it over; any other window at once.

    Signals:
        refresh_requested(): F5
        new_fact_requested(): Ctrl+N
        find_requested(): Ctrl+F
        save_requested(): Ctrl+S
        forget_requested(): Del
        cancel_requested(): the status bar's Cancel button
        undo_requested(): Ctrl+Z or the status bar's Undo button
        open_workspace_requested(): File → Open workspace…
        edit_requested(): Return / F2 on the Facts tab
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
    undo_requested = Signal()
    open_workspace_requested = Signal()
    edit_requested = Signal()

    def __init__(self, settings: QSettings, parent: QWidget | None = None, *,
                 first_frame: bool = False) -> None:
        super().__init__(parent)
        self._settings = settings
        # Asked before the window closes (e.g. an editor with unsaved changes); False keeps it.
        self.close_guard: Callable[[], bool] | None = None
        self.setWindowTitle("Context Center")
        self.resize(fit_to_screen(QSize(1180, 760)))
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setAccessibleName("Views")
        self.setCentralWidget(self.tabs)
        self._paths_text = ""
        self._paths = ("", "")
        self._completed = False
        self._build_menus()
        self._build_status_bar()
        if not first_frame:
            self.complete()

    def complete(self) -> None:
        """The settings that need ``Qt`` enums: Ctrl+Q from any window, selectable paths."""
        if self._completed:
            return
        from PySide6.QtCore import Qt

        self._completed = True
        # Every window of the app, from any of them (not just this one).
        self.quit_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self.paths_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # A filter, not a resizeEvent override: that would be called (and build QEvent's
        # enum) as the window is first shown.
        _OnResize(self.paths_label, self._on_paths_resized)

    def add_tab(self, widget: QWidget, title: str) -> None:
        """Append a tab (Ctrl+1…5 select it; Ctrl+Tab cycles).

        A placeholder of the same title (the window shown before the tabs were built, see
        ``shell.py``) is replaced in place: same position, the current tab kept.
        """
        index, old = -1, None
        for i in range(self.tabs.count()):
            candidate = self.tabs.widget(i)
            if candidate is not None and candidate.property("placeholder") \
                    and self.tabs.tabText(i) == title:
                index, old = i, candidate
                break
        if old is not None:
            current = self.tabs.currentIndex()
            self.tabs.blockSignals(True)  # the same tab stays current: nothing to announce
            self.tabs.removeTab(index)
            self.tabs.insertTab(index, widget, title)
            self.tabs.setCurrentIndex(current)
            self.tabs.blockSignals(False)
            old.deleteLater()
        else:
            self.tabs.addTab(widget, title)
        widget.setAccessibleName(title.replace("&&", "&") + " tab")

    def _action(
        self,
        text: str,
        shortcut: QKeySequence | QKeySequence.StandardKey | str,
        signal: SignalInstance,
    ) -> QAction:
        action = make_action(text, self)
        action.setShortcuts(keys(shortcut))  # a window shortcut: QAction's default
        action.triggered.connect(signal.emit)
        self.addAction(action)
        return action

    def _build_menus(self) -> None:
        # Keys by name, not Qt.Key: that enum (~470 members) would be built before first paint.
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
        self.open_workspace_action = self._action("&Open workspace…",
                                                  QKeySequence.StandardKey.Open,
                                                  self.open_workspace_requested)
        file_menu.addAction(self.open_workspace_action)
        file_menu.addSeparator()
        self.quit_action = make_action("&Quit", self)
        self.quit_action.setShortcuts(keys("Ctrl+Q"))  # app-wide from complete()
        self.quit_action.triggered.connect(quit_app)
        self.addAction(self.quit_action)
        file_menu.addAction(self.quit_action)
        edit_menu = bar.addMenu("&Edit")
        self.undo_action = self._action("&Undo last write", QKeySequence.StandardKey.Undo,
                                        self.undo_requested)
        self.undo_action.setEnabled(False)
        self.edit_action = self._action("&Edit fact…", QKeySequence("F2"),
                                        self.edit_requested)
        self.find_action = self._action("&Find", QKeySequence.StandardKey.Find, self.find_requested)
        self.forget_action = self._action("&Forget fact…", QKeySequence("Del"),
                                          self.forget_requested)
        edit_menu.addAction(self.undo_action)
        edit_menu.addSeparator()
        edit_menu.addAction(self.edit_action)
        edit_menu.addAction(self.find_action)
        edit_menu.addAction(self.forget_action)
        view_menu = bar.addMenu("&View")
        self.refresh_action = self._action("&Refresh", QKeySequence("F5"),
                                           self.refresh_requested)
        view_menu.addAction(self.refresh_action)
        view_menu.addSeparator()
        self.next_tab_action = make_action("&Next tab", self)
        self.next_tab_action.setShortcuts([QKeySequence("Ctrl+Tab"), QKeySequence("Ctrl+PgDown")])
        self.next_tab_action.triggered.connect(lambda: self._step_tab(1))
        self.previous_tab_action = make_action("&Previous tab", self)
        self.previous_tab_action.setShortcuts([QKeySequence("Ctrl+Shift+Tab"),
                                               QKeySequence("Ctrl+PgUp")])
        self.previous_tab_action.triggered.connect(lambda: self._step_tab(-1))
        for action in (self.next_tab_action, self.previous_tab_action):
            self.addAction(action)
            view_menu.addAction(action)
        self.tab_actions: list[QAction] = []
        for number in range(1, 6):
            action = make_action(f"Tab {number}", self)
            action.setShortcuts(keys(f"Ctrl+{number}"))
            action.triggered.connect(lambda _=False, i=number - 1: self.tabs.setCurrentIndex(i))
            self.addAction(action)
            self.tab_actions.append(action)
        help_menu = bar.addMenu("&Help")
        self.shortcuts_action = make_action("&Keyboard shortcuts", self)
        self.shortcuts_action.setShortcuts(keys(QKeySequence.StandardKey.HelpContents))
        self.shortcuts_action.triggered.connect(self.show_shortcuts)
        self.addAction(self.shortcuts_action)
        self.about_action = make_action("&About Context Center", self)
        self.about_action.triggered.connect(self.show_about)
        help_menu.addAction(self.shortcuts_action)
        help_menu.addAction(self.about_action)
        self.help_box: QWidget | None = None

    def _step_tab(self, step: int) -> None:
        count = self.tabs.count()
        if count:
            self.tabs.setCurrentIndex((self.tabs.currentIndex() + step) % count)

    def show_shortcuts(self) -> None:
        """Help → Keyboard shortcuts (non-blocking)."""
        from .help_dialogs import shortcuts_html

        self._show_help("Keyboard shortcuts", shortcuts_html(self))

    def show_about(self) -> None:
        """Help → About (non-blocking)."""
        from .help_dialogs import about_text

        self._show_help("About Context Center", about_text())

    def _show_help(self, title: str, text: str) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(QMessageBox.Icon.Information, title, text,
                          QMessageBox.StandardButton.Close, self)
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.help_box = box
        box.open()

    def _build_status_bar(self) -> None:
        status = self.statusBar()
        self.paths_label = QLabel()  # selectable from complete()
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
        self.undo_button = QPushButton("Undo")
        self.undo_button.setFlat(True)
        self.undo_button.setToolTip("Undo the last write (Ctrl+Z): restores the revision it "
                                    "replaced, as a new revision")
        self.undo_button.clicked.connect(self.undo_requested.emit)
        self.undo_button.setVisible(False)
        self.paths_label.setMinimumWidth(80)
        # The label takes the room the status bar gives it; the text is elided to fit it.
        self.paths_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        for widget, name in ((self.paths_label, "Store paths"), (self.counts_label, "Counts"),
                             (self.message_label, "Last message"),
                             (self.progress_label, "Work in progress"),
                             (self.progress, "Progress"), (self.cancel_button, "Cancel work"),
                             (self.undo_button, "Undo last write")):
            widget.setAccessibleName(name)
        status.addWidget(self.paths_label, 1)
        status.addPermanentWidget(self.message_label)
        status.addPermanentWidget(self.undo_button)
        status.addPermanentWidget(self.progress_label)
        status.addPermanentWidget(self.progress)
        status.addPermanentWidget(self.cancel_button)
        status.addPermanentWidget(self.counts_label)
        self.show_progress("")

    def show_paths(self, project_store: str, global_store: str) -> None:
        """Store locations (local display only; never sent anywhere)."""
        self._paths_text = f"project: {project_store}   global: {global_store}"
        self._paths = (project_store, global_store)
        self.paths_label.setToolTip(f"Project store: {project_store}\nGlobal store: {global_store}")
        self._elide_paths()

    def _elide_paths(self) -> None:
        # Each whole path elided in its middle to half the room: both ends stay readable.
        from PySide6.QtCore import Qt

        metrics = self.paths_label.fontMetrics()
        labels = metrics.horizontalAdvance("project:    global: ")
        half = max(40, (self.paths_label.width() - labels - 16) // 2)
        project, global_ = (metrics.elidedText(p, Qt.TextElideMode.ElideMiddle, half)
                            for p in self._paths)
        self.paths_label.setText(f"project: {project}   global: {global_}")

    def paths_text(self) -> str:
        """The status bar's store paths in full (the label shows them elided)."""
        return self._paths_text

    def _on_paths_resized(self) -> None:
        if self._paths_text:  # re-elided to the new width
            QTimer.singleShot(0, self._elide_paths)

    def offer_undo(self, label: str | None) -> None:
        """"Saved revision 8 — Undo" in the status bar; ``None`` withdraws the offer."""
        self.undo_action.setEnabled(label is not None)
        self.undo_button.setVisible(label is not None)
        if label is not None:
            self.message_label.setText(label + " —")
            self._message_timer.stop()

    def show_message(self, text: str, timeout_ms: int = 6000) -> None:
        """A transient message (saved, failed …) that leaves the other status widgets shown."""
        self.message_label.setText(text)
        self.undo_button.setVisible(False)
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
            self.resize(fit_to_screen(self.size()))
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
        """Remember the window state on close; an open editor with changes asks first."""
        if self.close_guard is not None and not self.close_guard():
            event.ignore()
            return
        self.save_state()
        super().closeEvent(event)


class _OnResize(QObject):
    """Calls ``then`` after each resize of ``widget`` (never consumes the event)."""

    def __init__(self, widget: QWidget, then: Callable[[], None]) -> None:
        super().__init__(widget)
        self._widget, self._then = widget, then
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Notice the resize; let it through."""
        from PySide6.QtCore import QEvent

        if watched is self._widget and event.type() == QEvent.Type.Resize:
            self._then()
        return False


def make_action(text: str, parent: QWidget) -> QAction:
    """``QAction(text, parent)``, without the overload choice that builds ``QIcon``'s enums."""
    action = QAction(parent)
    action.setText(text)
    return action


def keys(shortcut: QKeySequence | QKeySequence.StandardKey | str) -> list[QKeySequence]:
    """``shortcut`` as the list ``QAction.setShortcuts`` takes (none for an empty one).

    ``setShortcut`` would do, but it has a ``Qt.Key`` overload: choosing between the two
    builds PySide's whole ``Qt`` namespace, ~40 ms before the first paint.
    """
    # Not QKeySequence(a QKeySequence): that overload choice builds the namespace too.
    sequence = shortcut if isinstance(shortcut, QKeySequence) else QKeySequence(shortcut)
    return [] if sequence.isEmpty() else [sequence]


def fit_to_screen(wanted: QSize) -> QSize:
    """``wanted`` shrunk to 90 % of the primary screen's available area (QT_SCALE_FACTOR=2)."""
    screen = QGuiApplication.primaryScreen()
    if screen is None:
        return wanted
    room = screen.availableGeometry().size()
    return QSize(min(wanted.width(), int(room.width() * 0.9)),
                 min(wanted.height(), int(room.height() * 0.9)))


def quit_app() -> None:
    """Ctrl+Q: close every window (each may ask about unsaved edits), then quit."""
    app = QApplication.instance()
    if isinstance(app, QApplication):
        app.closeAllWindows()
        if not any(w.isVisible() for w in app.topLevelWidgets() if isinstance(w, QMainWindow)):
            app.quit()

