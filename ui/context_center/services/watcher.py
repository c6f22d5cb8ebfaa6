"""Watch the stores, instruction files and session folders; deliver debounced area changes.

watchdog calls its handler on the observer thread; the handler only classifies the path and
emits a Qt signal, which is queued to the GUI thread. There a ~250 ms timer coalesces a burst
(one atomic save is several events) into one :class:`ChangeSet`. Nothing here reads a file.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from context_engine.areas import WatchTargets, event_paths, is_ignored
from PySide6.QtCore import QObject, QTimer, Signal, Slot
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from .hub import AREAS, ChangeSet

__all__ = ["FileWatcher", "WatchTargets", "is_ignored"]

DEBOUNCE_MS = 250
MAX_WAIT_S = 0.6  # a continuous stream still refreshes the views this often
OVERFLOW_EVENTS = 2000  # more raw events than this in one window → treat as overflow, rescan all
class _Handler(FileSystemEventHandler):
    """Observer-thread side: classify and forward; no file reads, no widgets."""

    def __init__(self, bridge: FileWatcher) -> None:
        self._bridge = bridge

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = event_paths(event)
        if paths:
            self._bridge.raw_event.emit(paths)


class FileWatcher(QObject):
    """watchdog → GUI-thread bridge → debounce → ``changed`` (create on the GUI thread).

    Signals:
        raw_event(list): emitted on the observer thread, delivered queued to the GUI thread
        changed(object): a debounced :class:`ChangeSet` of areas that changed on disk
    """

    raw_event = Signal(list)
    changed = Signal(object)

    def __init__(self, targets: WatchTargets, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._targets = targets
        self._areas: set[str] = set()
        self._events = 0
        self._window_start = 0.0
        self._observer: BaseObserver | None = None
        self._handler = _Handler(self)
        self._scheduled: set[Path] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._on_quiet)
        self.raw_event.connect(self._on_raw_event)

    @property
    def running(self) -> bool:
        """Whether the observer thread is running."""
        return self._observer is not None

    def start(self) -> None:
        """Start the observer on every existing watch root."""
        if self._observer is not None:
            return
        observer = Observer()
        handler = self._handler
        for folder, recursive in self._targets.roots():
            try:
                observer.schedule(handler, str(folder), recursive=recursive)
                self._scheduled.add(folder)
            except OSError:
                continue  # a folder that vanished or exhausted inotify watches: F5 still works
        observer.daemon = True
        observer.start()
        self._observer = observer

    def stop(self) -> None:
        """Stop the observer thread and drop pending events."""
        self._timer.stop()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
            self._scheduled.clear()

    def watch_files(self, area: str, files: Iterable[Path], folders: Iterable[Path]) -> None:
        """Also report changes to exactly ``files`` as ``area`` (e.g. imported instructions).

        ``folders`` are their existing parent directories, computed off the GUI thread; each
        is watched non-recursively.
        """
        for path in files:
            self._targets.files[Path(path)] = area
        if self._observer is None:
            return
        handler = self._handler
        for folder in folders:
            if folder in self._scheduled:
                continue
            self._scheduled.add(folder)
            try:
                self._observer.schedule(handler, str(folder), recursive=False)
            except OSError:
                continue

    def restart(self) -> None:
        """Re-schedule roots (a watched folder was created after start)."""
        self.stop()
        self.start()

    @Slot(list)
    def _on_raw_event(self, paths: list[str]) -> None:
        self._events += 1
        for path in paths:
            area = self._targets.classify(path)
            if area is not None:
                self._areas.add(area)
        if not (self._areas or self._events > OVERFLOW_EVENTS):
            return
        now = time.monotonic()
        if not self._timer.isActive():
            self._window_start = now
        # Restart (fire once the burst is quiet), but never hold a change back past MAX_WAIT.
        if now - self._window_start < MAX_WAIT_S or not self._timer.isActive():
            self._timer.start()

    def overflow(self) -> None:
        """The event queue overflowed (or events were dropped): rescan everything."""
        self._areas.update(AREAS)
        self._timer.start()

    @Slot()
    def _on_quiet(self) -> None:
        if self._events > OVERFLOW_EVENTS:
            self._areas.update(AREAS)
        areas, self._areas, self._events = frozenset(self._areas), set(), 0
        if areas:
            self.changed.emit(ChangeSet(areas, "disk"))
