"""Texts of Help → Keyboard shortcuts and Help → About (built from the live actions)."""

from __future__ import annotations

import html

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

# Keys handled by widgets rather than window actions, listed so the help is complete.
EXTRA_KEYS = (
    ("Return", "Edit the selected fact (Facts tab)"),
    ("Ctrl+S", "Save in the fact editor"),
    ("Esc", "Close a dialog; an editor with changes asks first"),
)


def shortcuts_html(window: QWidget) -> str:
    """A table of every action with a shortcut on ``window``, plus the widget keys."""
    rows: list[tuple[str, str]] = []
    for action in window.actions():
        if not isinstance(action, QAction) or not action.shortcuts():
            continue
        keys = ", ".join(s.toString(QKeySequence.SequenceFormat.NativeText)
                         for s in action.shortcuts())
        rows.append((keys, action.text().replace("&", "").rstrip("…")))
    rows.extend(EXTRA_KEYS)
    cells = "".join(f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(v)}</td></tr>"
                    for k, v in rows)
    return f"<table cellpadding='3'>{cells}</table>"


def about_text() -> str:
    """Name, version and what the app is for."""
    from importlib import metadata  # ~0.1 s of imports: not before the first paint

    try:
        version = metadata.version("context-center")
    except metadata.PackageNotFoundError:
        version = "development"
    return (f"<h3>Context Center {html.escape(version)}</h3><p>See and edit what your coding "
            "agent remembers: standing instructions, facts of both scopes, their revisions "
            "and archive, suggestions from recent sessions, and recall traces.</p>"
            "<p>Files stay the truth; every write goes through the same engine calls as "
            "the <code>context-engine</code> command.</p>")
