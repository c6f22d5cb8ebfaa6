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
