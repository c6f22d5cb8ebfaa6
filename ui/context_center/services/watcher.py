"""Watch the stores, instruction files and session folders; deliver debounced area changes.

watchdog calls its handler on the observer thread; the handler only classifies the path and
emits a Qt signal, which is queued to the GUI thread. There a ~250 ms timer coalesces a burst
(one atomic save is several events) into one :class:`ChangeSet`. Nothing here reads a file.

The ChangeSet names the fact files that changed, so a large store is patched file by file
instead of re-read. When the kernel's inotify queue overflows (watchdog then only logs a
warning), or a burst is too large to track file by file, every view is re-read instead and
``overflowed`` says so.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable
from pathlib import Path

from context_engine.areas import WatchTargets, event_paths, is_ignored
from context_engine.watchdog_warnings import quiet_rewatch_warning
from PySide6.QtCore import QObject, QTimer, Signal, Slot
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirModifiedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from .hub import AREAS, ChangeSet

__all__ = ["FileWatcher", "WatchTargets", "is_ignored"]

# Every event that can be a change; not opens and reads (``event_paths`` drops them anyway).
# Asked of the kernel, so a read of 100,000 fact files (the app's own first read) is not
# 200,000 inotify events for the observer thread to decode under the GIL.
_CHANGES: list[type[FileSystemEvent]] = [
    FileCreatedEvent, DirCreatedEvent, FileModifiedEvent, DirModifiedEvent, FileDeletedEvent,
    DirDeletedEvent, FileMovedEvent, DirMovedEvent, FileClosedEvent,
]


def _schedule(observer: BaseObserver, handler: FileSystemEventHandler, folder: Path,
              recursive: bool) -> None:
    """Watch ``folder`` for changes only (every event where a watchdog cannot filter)."""
    try:
        observer.schedule(handler, str(folder), recursive=recursive, event_filter=_CHANGES)
    except TypeError:  # a watchdog without ``event_filter``
        observer.schedule(handler, str(folder), recursive=recursive)

DEBOUNCE_MS = 150  # one atomic save is a few events within milliseconds
MAX_WAIT_S = 0.6  # a continuous stream still refreshes the views this often
MAX_TRACKED_PATHS = 20000  # more changed fact files than this in one window → rescan all
OVERFLOW_MESSAGE = "Inotify queue overflowed"
WATCHDOG_LOGGER = "watchdog.observers.inotify_c"
class _Handler(FileSystemEventHandler):
    """Observer-thread side: classify and forward; no file reads, no widgets."""

    def __init__(self, bridge: FileWatcher) -> None:
        self._bridge = bridge

    def on_any_event(self, event: FileSystemEvent) -> None:
        # Dropped here, not on the GUI thread: a flood of them (the derived index written
        # while it is built) would otherwise cost one queued call each.
        paths = [p for p in event_paths(event) if not is_ignored(os.path.basename(p))]
        if paths:
            self._bridge.raw_event.emit(paths)


class _OverflowLog(logging.Handler):
    """Turns watchdog's "Inotify queue overflowed" warning into our overflow signal."""

    def __init__(self, bridge: FileWatcher) -> None:
        super().__init__(logging.WARNING)
        self._bridge = bridge

    def emit(self, record: logging.LogRecord) -> None:
        """Observer thread: forward (queued) to the GUI thread; never raises."""
        try:
            if OVERFLOW_MESSAGE in record.getMessage():
                self._bridge.overflow_detected.emit()
        except RuntimeError:  # the bridge is gone (application exit)
            pass


class FileWatcher(QObject):
    """watchdog → GUI-thread bridge → debounce → ``changed`` (create on the GUI thread).

    Signals:
        raw_event(list): emitted on the observer thread, delivered queued to the GUI thread
        overflow_detected(): the kernel dropped events (observer thread, queued)
        changed(object): a debounced :class:`ChangeSet` of areas that changed on disk
        overflowed(): events were lost and everything is being re-read (say so)
    """

    raw_event = Signal(list)
    overflow_detected = Signal()
    changed = Signal(object)
    overflowed = Signal()

    def __init__(self, targets: WatchTargets, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._targets = targets
        self._areas: set[str] = set()
        self._paths: set[str] = set()
        self._rescan = False
        self._window_start = 0.0
        self._observer: BaseObserver | None = None
        self._handler = _Handler(self)
        self._scheduled: set[Path] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._on_quiet)
        self.raw_event.connect(self._on_raw_event)
        self.overflow_detected.connect(self.overflow)
        self._log_handler = _OverflowLog(self)

    @property
    def running(self) -> bool:
        """Whether the observer thread is running."""
        return self._observer is not None

    def start(self) -> None:
        """Start the observer on every existing watch root."""
        if self._observer is not None:
            return
        quiet_rewatch_warning()
        observer = Observer()
        handler = self._handler
        for folder, recursive in self._targets.roots():
            try:
                _schedule(observer, handler, folder, recursive)
                self._scheduled.add(folder)
            except OSError:
                continue  # a folder that vanished or exhausted inotify watches: F5 still works
        observer.daemon = True
        logging.getLogger(WATCHDOG_LOGGER).addHandler(self._log_handler)
        observer.start()
        self._observer = observer

    def stop(self) -> None:
        """Stop the observer thread and drop pending events."""
        self._timer.stop()
        logging.getLogger(WATCHDOG_LOGGER).removeHandler(self._log_handler)
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
                _schedule(self._observer, handler, folder, False)
            except OSError:
                continue

    def restart(self) -> None:
        """Re-schedule roots (a watched folder was created after start)."""
        self.stop()
        self.start()

    @Slot(list)
    def _on_raw_event(self, paths: list[str]) -> None:
        for path in paths:
            area = self._targets.classify(path)
            if area is not None:
                self._areas.add(area)
                if area == "facts" and not self._rescan:
                    self._paths.add(path)
                    if len(self._paths) > MAX_TRACKED_PATHS:
                        self._rescan = True
                        self._paths.clear()
        if not self._areas:
            return
        now = time.monotonic()
        if not self._timer.isActive():
            self._window_start = now
        # Restart (fire once the burst is quiet), but never hold a change back past MAX_WAIT.
        if now - self._window_start < MAX_WAIT_S or not self._timer.isActive():
            self._timer.start()

    @Slot()
    def overflow(self) -> None:
        """The event queue overflowed (or events were dropped): rescan everything, say so."""
        self._areas.update(AREAS)
        self._rescan = True
        self._paths.clear()
        self.overflowed.emit()
        self._timer.start()

    @Slot()
    def _on_quiet(self) -> None:
        areas, self._areas = frozenset(self._areas), set()
        paths, self._paths = frozenset(self._paths), set()
        rescan, self._rescan = self._rescan, False
        if areas:
            self.changed.emit(ChangeSet(areas, "disk", paths=frozenset() if rescan else paths))
