"""Progress reports and cancellation for long imports and exports (no Qt, no terminal)."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ContextEngineError

# ``report(done, total, what)``: called between units of work, from the working thread.
ProgressFn = Callable[[int, int, str], None]


class Cancelled(ContextEngineError):
    """The person cancelled; whatever was half done has been undone."""

    code = "cancelled"


def no_progress(_done: int, _total: int, _what: str) -> None:
    """The default reporter: says nothing."""
