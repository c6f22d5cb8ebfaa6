"""Watch the stores, instruction files and session folders; deliver debounced area changes.

watchdog calls its handler on the observer thread; the handler only classifies the path and
emits a Qt signal, which is queued to the GUI thread. There a ~250 ms timer coalesces a burst
(one atomic save is several events) into one :class:`ChangeSet`. Nothing here reads a file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from .hub import AREAS, ChangeSet

DEBOUNCE_MS = 250
MAX_WAIT_S = 0.6  # a continuous stream still refreshes the views this often
OVERFLOW_EVENTS = 2000  # more raw events than this in one window → treat as overflow, rescan all
INSTRUCTION_NAMES = frozenset(
    {
        "REASONIX.md",
        "AGENTS.md",
        "CLAUDE.md",
        "REASONIX.local.md",
        "AGENTS.local.md",
        "CLAUDE.local.md",
    }
)


def is_ignored(name: str) -> bool:
    """Temp, partial and lock files of atomic writers are never loaded."""
    return (
        name.startswith(".tmp-")
        or name.endswith((".partial", ".lock", ".tmp", "~"))
        or name in {".lock", "MEMORY.md"}
    )


class WatchTargets:
    """Which directories to watch and which area a path under each belongs to."""

    def __init__(
        self,
        stores: Iterable[Path],
        instruction_dirs: Iterable[Path],
        session_dirs: Iterable[Path],
        trace_dirs: Iterable[Path] = (),
        boundaries: Iterable[Path] = (),
    ) -> None:
        self.stores = tuple(Path(p) for p in stores)
        self.instruction_dirs = tuple(Path(p) for p in instruction_dirs)
        self.session_dirs = tuple(Path(p) for p in session_dirs)
        self.trace_dirs = tuple(Path(p) for p in trace_dirs)
        # A missing folder is watched through its nearest existing ancestor, but never above
        # these (watching / recursively would flood the observer).
        self.boundaries = tuple(Path(p) for p in boundaries)
        self.files: dict[Path, str] = {}  # exact files of an area (imported instruction files)

    def classify(self, path: str) -> str | None:
        """The area of ``path``, or ``None`` when it is irrelevant or a temp/lock file."""
        p = Path(path)
        if is_ignored(p.name):
            return None
        for store in self.stores:
            if _under(p, store):
                rel = p.relative_to(store).parts
                if rel and rel[0] in (".archive", ".revisions"):
                    return "archive"
                if len(rel) == 1 and p.suffix == ".md":
                    return "facts"
                return None
        for folder in self.session_dirs:
            if _under(p, folder):
                return "sessions"
        for folder in self.trace_dirs:
            if _under(p, folder):
                return "traces"
        if p.name in INSTRUCTION_NAMES and p.parent in self.instruction_dirs:
            return "instructions"
        return self.files.get(p)

    def roots(self) -> list[tuple[Path, bool]]:
        """(directory, recursive) pairs for the observer, deduplicated."""
        wanted = [(p, True) for p in self.stores + self.session_dirs + self.trace_dirs]
        wanted += [(p, False) for p in self.instruction_dirs]
        out: dict[Path, bool] = {}
        for folder, recursive in wanted:
            existing = self._nearest_existing(folder)
            if existing is None:
                continue
            # An ancestor stands in for a folder that does not exist yet: watch it deeply.
            out[existing] = out.get(existing, False) or recursive or existing != folder
        return list(out.items())

    def _nearest_existing(self, folder: Path) -> Path | None:
        for candidate in (folder, *folder.parents):
            if self.boundaries and not any(_under(candidate, b) for b in self.boundaries):
                return None
            if candidate.is_dir():
                return candidate
        return None


def _under(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


class _Handler(FileSystemEventHandler):
    """Observer-thread side: classify and forward; no file reads, no widgets."""

    def __init__(self, bridge: FileWatcher) -> None:
        self._bridge = bridge

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [os.fsdecode(event.src_path)]
        dest = getattr(event, "dest_path", "")
        if dest:  # atomic replace arrives as moved(tmp → fact.md): the dest is what matters
            paths.append(os.fsdecode(dest))
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
