"""Unified diffs rendered as coloured HTML."""

from __future__ import annotations

import difflib
import html

_ADDED = "color:#1a7f37;background:rgba(46,160,67,0.15)"
_REMOVED = "color:#cf222e;background:rgba(248,81,73,0.15)"


def unified(old: str, new: str, old_label: str, new_label: str) -> str:
    """Plain unified diff text of two bodies (empty when equal)."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=old_label,
        tofile=new_label,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def diff_html(old: str, new: str, old_label: str, new_label: str) -> str:
    """A unified diff as HTML: additions green, removals red, hunks dimmed."""
    return diff_lines_html(unified(old, new, old_label, new_label))


def diff_lines_html(text: str) -> str:
    """An existing unified diff text as coloured HTML."""
    if not text:
        return "<p><i>No differences.</i></p>"
    out = []
    for line in text.splitlines():
        escaped = html.escape(line) or "&nbsp;"
        if line.startswith("+++") or line.startswith("---"):
            out.append(f"<b>{escaped}</b>")
        elif line.startswith("@@"):
            out.append(f"<span style='color:#6f42c1'>{escaped}</span>")
        elif line.startswith("+"):
            out.append(f"<span style='{_ADDED}'>{escaped}</span>")
        elif line.startswith("-"):
            out.append(f"<span style='{_REMOVED}'>{escaped}</span>")
        else:
            out.append(escaped)
    return "<pre style='white-space: pre-wrap'>" + "<br>".join(out) + "</pre>"


FIELDS = ("title", "description", "type", "scope")


def record_text(record: object) -> str:
    """A fact or draft as diffable text: every field the person can change, then the body."""
    lines = [f"{name}: {getattr(record, name, '')}" for name in FIELDS]
    return "\n".join(lines) + "\n\n" + str(getattr(record, "body", ""))


def changed_fields(old: object, new: object) -> list[str]:
    """Names of the fields (and "body") that differ between two revisions."""
    names = [n for n in FIELDS if getattr(old, n, None) != getattr(new, n, None)]
    if getattr(old, "body", None) != getattr(new, "body", None):
        names.append("body")
    return names
