"""Remote workspaces in the app (S13.6): File → Open remote workspace…, one window per remote.

The window is a normal :class:`Application` whose :class:`Backend` is over a
:class:`RemoteCatalog`: no local path is watched, shown or read for it. The title and the
status bar name the remote; the status bar shows the connection state and offers Reconnect
when it drops (the views then show "disconnected" through their failure paths, never local
data). The server's watcher pushes changes, delivered to the GUI thread as Qt signals.
Completers on the ref fields come from the catalog's ``complete`` call, local or remote.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from context_engine.catalog.remote import RemoteCatalog
from context_engine.errors import ContextEngineError
from PySide6.QtCore import QEvent, QObject, QSettings, QStringListModel, Qt, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCompleter,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QWidget,
)

from .application import Application, build
from .services.backend import Backend
from .services.hub import ChangeSet
from .services.tasks import Op

OPEN_REMOTE_TEXT = "Open &remote workspace…"
COMMAND_HINT = "ssh devbox context-engine serve --stdio --workspace ~/proj"

# Windows opened from the menu live as long as the app (nothing else holds them).
_OPEN: list[RemoteWorkspace] = []


class RefCompleter(QObject):
    """A completer on a line edit, refilled off the GUI thread from ``complete(kind, "")``."""

    def __init__(self, root: Application, field: QLineEdit,
                 complete: Callable[[str, str], tuple[str, ...]], kind: str = "refs") -> None:
        super().__init__(field)
        self.model = QStringListModel(self)
        self.completer = QCompleter(self.model, field)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setFilterMode(Qt.MatchFlag.MatchStartsWith)
        field.setCompleter(self.completer)
        self._root = root
        self._complete = complete
        self._kind = kind
        self._stale = True
        root.hub.changes_applied.connect(self._on_changes)
        field.installEventFilter(self)

    def refresh(self) -> None:
        """Ask for the candidates in the background; errors leave the list as it was."""
        self._stale = False
        self._root.tasks.read(Op("Completing", lambda t: self._complete(self._kind, ""),
                                 self._apply, lambda exc: None))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Refill only when the field is about to be used (a listing at 100k is not free)."""
        if event.type() == QEvent.Type.FocusIn and self._stale:
            self.refresh()
        return False

    def _apply(self, items: tuple[str, ...]) -> None:
        self.model.setStringList(list(items))

    @Slot(object)
    def _on_changes(self, changes: ChangeSet) -> None:
        if changes.touches("facts") or changes.touches("archive"):
            self._stale = True


class RemoteWorkspace(QObject):
    """One remote workspace's window, connection state and reconnect.

    Signals:
        changes_arrived(list): areas the server's watcher reported (any thread → GUI)
        state_arrived(str): ``connected`` / ``disconnected`` (any thread → GUI)
    """

    changes_arrived = Signal(list)
    state_arrived = Signal(str)

    def __init__(self, command: str, settings: QSettings | None = None) -> None:
        super().__init__()
        self.command = command
        self.catalog = RemoteCatalog(
            command,
            on_changes=self.changes_arrived.emit,
            on_state=self.state_arrived.emit,
            connect=False,
        )
        self.backend = Backend(self.catalog, local=False)
        # The server's confirmation requests open this window's dialog (S10.6): the application
        # hands its dialog to the catalog, as it does for a local one.
        self.root = build(None, settings, self.backend)
        window = self.root.window
        self.state_label = QLabel()
        self.reconnect_button = QPushButton("Reconnect")
        self.reconnect_button.setFlat(True)
        # Permanent: a temporary status message (e.g. "Saved.") must not hide the state.
        window.statusBar().addPermanentWidget(self.state_label)
        window.statusBar().addPermanentWidget(self.reconnect_button)
        self.reconnect_button.clicked.connect(self.reconnect)
        self.changes_arrived.connect(self._on_changes)
        self.state_arrived.connect(self._on_state)
        # On the "Go to fact" field: never a popup over the full-text search box.
        self.completer = RefCompleter(self.root, self.root.facts_tab.goto, self._complete)
        self._quiet = False  # our own close/reconnect: not a dropped connection
        self._started = False
        self._show_state("connecting…")

    def _complete(self, kind: str, prefix: str) -> tuple[str, ...]:
        return self.backend.complete("archives" if kind == "archives" else "refs", prefix)

    def start(self) -> None:
        """Show the window, connect on a worker (ssh may take seconds), then load the views."""
        self.root.window.show()
        self.reconnect()

    def shutdown(self) -> None:
        """Stop the window's workers and close the connection (the server exits)."""
        self._quiet = True
        self.root.shutdown()
        self.catalog.close()

    @Slot()
    def reconnect(self) -> None:
        """Run the command (again) in the background; on success every view reloads."""
        self.state_label.setText(f"Remote: {self.catalog.name} · connecting…")
        self.reconnect_button.setEnabled(False)
        self._quiet = True

        def failed(exc: BaseException) -> None:
            self._quiet = False
            self.reconnect_button.setEnabled(True)
            message = exc.message if isinstance(exc, ContextEngineError) else str(exc)
            self._show_state(f"disconnected ({message})")

        self.root.tasks.read(Op("Reconnecting", lambda t: self.catalog.reconnect(),
                                lambda _: self._reconnected(), failed))

    def _reconnected(self) -> None:
        self._quiet = False
        self.reconnect_button.setEnabled(True)
        self._show_state(self.catalog.state)
        if self._started:
            self.root.refresh()
        else:
            self._started = True
            self.root.start()
        self.completer.refresh()

    @Slot(list)
    def _on_changes(self, areas: list[str]) -> None:
        self.root.hub.publish(ChangeSet(frozenset(areas), "disk"))

    @Slot(str)
    def _on_state(self, state: str) -> None:
        if self._quiet:
            return
        self._show_state(state)
        if state == "disconnected":
            # Views re-read, fail with "disconnected" and say so; nothing local is shown.
            self.root.refresh()

    def _show_state(self, state: str) -> None:
        name = self.catalog.name  # the server's host:root once connected, else the command
        self.root.window.setWindowTitle(f"Context Center — {name}")
        self.state_label.setText(f"Remote: {name} · {state}")
        self.reconnect_button.setVisible(state.startswith("disconnected"))


def open_remote(command: str, settings: QSettings | None = None) -> RemoteWorkspace:
    """Show a window for ``command``'s server and connect (kept alive by this module)."""
    workspace = RemoteWorkspace(command, settings)
    _OPEN.append(workspace)
    workspace.start()
    return workspace


def install(root: Application, settings: QSettings | None = None) -> QAction:
    """Add File → Open remote workspace… to ``root``'s window and completers to its fields."""
    window = root.window
    action = QAction(OPEN_REMOTE_TEXT, window)
    file_menu = cast(QMenu, window.menuBar().actions()[0].menu())
    actions = file_menu.actions()
    if actions:
        file_menu.insertAction(actions[0], action)
    else:
        file_menu.addAction(action)

    def ask() -> None:
        dialog = QInputDialog(window)
        dialog.setWindowTitle("Open remote workspace")
        dialog.setLabelText("Command that runs `context-engine serve --stdio` there:")
        dialog.setTextValue(COMMAND_HINT)
        dialog.textValueSelected.connect(lambda text: _open_or_warn(window, text, settings))
        dialog.open()

    action.triggered.connect(ask)
    if root.paths is not None:
        from context_engine.catalog.local import LocalCatalog

        local = LocalCatalog(root.paths)

        def complete(kind: str, prefix: str) -> tuple[str, ...]:
            return local.complete("archives" if kind == "archives" else "refs", prefix)

        RefCompleter(root, root.facts_tab.goto, complete)
    return action


def _open_or_warn(parent: QWidget, command: str, settings: QSettings | None) -> None:
    if not command.strip():
        return
    try:
        open_remote(command.strip(), settings)
    except ContextEngineError as exc:
        box = QMessageBox(QMessageBox.Icon.Warning, "Context Center",
                          f"Could not open the remote workspace: {exc.message}",
                          QMessageBox.StandardButton.Ok, parent)
        box.open()
