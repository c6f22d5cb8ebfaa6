"""A line on stderr while a command builds derived state in the foreground (after ~1 s).

The first use of a large store (no derived index, no recall state: a fresh install, an upgrade,
damage) parses and indexes every fact. A command run by a person (``recall``, ``list``,
``read``, ``memory``) turns this on (``enable``); hooks, hosts and the app never do. Work that
knows its size reports ``done/total``; work that does not is shown with the seconds it has
taken. Nothing is printed for work that ends within a second. Interrupting (Ctrl+C) is safe:
the derived index keeps every committed batch, the recall state is replaced whole or not at
all.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time

# Set once by the command-line entry (``cli/entry.py``) for the whole process, read by any
# thread that builds.
_ENABLED = threading.Event()
_SHOW_AFTER = 1.0


def enable() -> None:
    """Show progress in this process (a command a person runs)."""
    _ENABLED.set()


def enabled() -> bool:
    """Whether this process shows progress."""
    return _ENABLED.is_set()


class Phase:
    """One phase of a build: ``done(n)`` as it goes; shown from its second second on."""

    def __init__(self, label: str, total: int | None = None) -> None:
        self.label, self.total = label, total
        self.count = 0
        self.started = time.monotonic()
        self._shown = 0.0
        self._visible = False
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if enabled() and total is None:  # nothing counts: a ticker shows the time taken
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def __enter__(self) -> Phase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()

    def done(self, count: int) -> None:
        """``count`` items of ``total`` are done."""
        self.count = count
        if enabled():
            self._show(count == self.total)

    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            self._show(False)

    def _show(self, last: bool) -> None:
        now = time.monotonic()
        tty = _tty()
        every = 0.5 if tty else 5.0
        if now - self.started < _SHOW_AFTER or (
            self._visible and now - self._shown < every and not last
        ):
            return
        self._shown, self._visible = now, True
        if self.total is None:
            state = f"{now - self.started:.0f} s"
        else:
            state = f"{self.count:,}/{self.total:,}"
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"context-engine: {self.label}: {state}{chr(13) if tty else chr(10)}")
            sys.stderr.flush()

    def end(self) -> None:
        """Stop showing; finish the line on a terminal."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(1.0)
        if self._visible and _tty():
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write("\n")
                sys.stderr.flush()


def _tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (OSError, ValueError):
        return False
