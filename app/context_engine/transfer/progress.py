"""Progress reports and cancellation for long imports and exports (no Qt, no terminal)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import ContextEngineError

# ``report(done, total, what)``: called between units of work, from the working thread.
ProgressFn = Callable[[int, int, str], None]


class Cancelled(ContextEngineError):
    """The person cancelled; whatever was half done has been undone."""

    code = "cancelled"


def no_progress(_done: int, _total: int, _what: str) -> None:
    """The default reporter: says nothing."""


@dataclass
class CancelToken:
    """Set from any thread (a Cancel button, a signal handler); checked between units."""

    _event: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        """Ask the running operation to stop at its next check."""
        self._event.set()

    @property
    def cancelled(self) -> bool:
        """True once ``cancel`` was called."""
        return self._event.is_set()

    def check(self) -> None:
        """Raise ``Cancelled`` when cancellation was requested."""
        if self._event.is_set():
            raise Cancelled("cancelled; nothing was changed")
