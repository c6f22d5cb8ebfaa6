"""Server-side watcher: watchdog events on the workspace's files → debounced area changes.

The remote's disk is watched where it lives (the client never watches or reads it): both
stores, the session folder, the trace folder and the instruction directories. A burst of
events (one atomic save is several) becomes one call of ``notify(areas)`` after a quiet
``debounce`` seconds, never later than ``max_wait`` after the first event.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from ..areas import AREAS, WatchTargets, event_paths
from ..paths import EnginePaths
from ..watchdog_warnings import quiet_rewatch_warning

__all__ = ["AREAS", "ServerWatcher"]

class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: ServerWatcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = event_paths(event)
        if paths:
            self._watcher.saw(Path(p) for p in paths)


class ServerWatcher:
    """watchdog observer + a debounce thread calling ``notify(sorted areas)``."""

    def __init__(
        self,
        paths: EnginePaths,
        notify: Callable[[list[str]], None],
        *,
        debounce: float = 0.25,
        max_wait: float = 1.0,
    ) -> None:
        self.areas = WatchTargets.of(paths)  # the classifier the app uses too (areas.py)
        self._notify = notify
        self._debounce = debounce
        self._max_wait = max_wait
        self._pending: set[str] = set()
        self._first = 0.0
        self._last = 0.0
        self._cond = threading.Condition()
        self._stopped = False
        self._observer: BaseObserver | None = None
        self._thread: threading.Thread | None = None

    def saw(self, paths: Iterable[Path]) -> None:
        """Record changed paths (observer thread)."""
        found = {a for a in (self.areas.classify(p) for p in paths) if a is not None}
        if not found:
            return
        with self._cond:
            now = time.monotonic()
            if not self._pending:
                self._first = now
            self._pending |= found
            self._last = now
            self._cond.notify()

    def start(self) -> None:
        """Schedule every existing root and start the observer and debounce threads."""
        quiet_rewatch_warning()
        observer = Observer()
        handler = _Handler(self)
        for folder, recursive in self.areas.roots():
            try:
                observer.schedule(handler, str(folder), recursive=recursive)
            except OSError:
                continue  # vanished, or out of inotify watches: clients can still refresh
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._thread = threading.Thread(target=self._run, name="watch-debounce", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop both threads; pending changes are dropped."""
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                now = time.monotonic()
                due = min(self._last + self._debounce, self._first + self._max_wait)
                if now < due:
                    self._cond.wait(due - now)
                    continue
                areas, self._pending = sorted(self._pending), set()
            self._notify(areas)
