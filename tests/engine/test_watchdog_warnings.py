"""Watchdog's harmless re-watch warning is silenced; its other warnings are not."""

from __future__ import annotations

import warnings

from context_engine.watchdog_warnings import quiet_rewatch_warning

REWATCH = ("Callback with id '1407' already exists for watch <Watch wd=7>. "
           "It will be Overwritten.")


def _seen(message: str, module: str) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_rewatch_warning()
        warnings.warn_explicit(message, RuntimeWarning, "inotify_c.py", 449, module=module)
    return [str(w.message) for w in caught]


def test_the_rewatch_warning_of_watchdog_is_silenced() -> None:
    assert _seen(REWATCH, "watchdog.observers.inotify_c") == []


def test_other_warnings_still_show() -> None:
    assert _seen("Inotify queue overflowed", "watchdog.observers.inotify_c") != []
    assert _seen(REWATCH, "ours.module") != []  # the same words from elsewhere are not hidden
