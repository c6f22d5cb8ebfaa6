"""Cheap edit detection for a resolution: which watched instruction files changed since."""

from __future__ import annotations

import os
from pathlib import Path

from ..facts.model import FileStamp
from .model import Resolution


def _current(path: Path) -> FileStamp | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return FileStamp(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def changed_paths(resolution: Resolution) -> tuple[Path, ...]:
    """Watched files edited, replaced, created or removed since ``resolution`` was made.

    One ``stat`` per watched path; a file that was absent and still is, or present with the
    same device, inode, size and mtime, counts as unchanged.
    """
    changed: list[Path] = []
    for path, stamp in resolution.watched:
        now = _current(path)
        if stamp is None:
            if now is not None:
                changed.append(path)
        elif now != stamp:
            changed.append(path)
    return tuple(dict.fromkeys(changed))


def path_label(resolution: Resolution, path: Path) -> str | None:
    """The provider-safe label of a watched path: ``workspace/<rel>`` or ``user/<rel>``."""
    for prefix, base in (("workspace", resolution.root), ("user", resolution.home)):
        if base is None:
            continue
        try:
            rel = path.relative_to(base)
        except ValueError:
            continue
        return "/".join((prefix, *rel.parts))
    return None


def changed_labels(resolution: Resolution) -> tuple[str, ...]:
    """Labels of :func:`changed_paths`, safe for a turn-tail note (S7.3, S7.4)."""
    labels = (path_label(resolution, path) for path in changed_paths(resolution))
    return tuple(label for label in labels if label is not None)
