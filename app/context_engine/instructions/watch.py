"""Cheap edit detection for a resolution: which watched instruction files changed since."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..facts.stat_listing import RACY_NS
from .model import Resolution, WatchStamp
from .opener import FILE_FLAGS, READ_LIMIT, content_digest


def _bytes_now(path: Path, stamp: WatchStamp) -> bytes | None:
    """The bytes of ``path`` when it is still the regular file ``stamp`` names, else None."""
    try:
        fd = os.open(path, FILE_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != stamp[:2]:
            return None
        chunks: list[bytes] = []
        total = 0
        while total <= READ_LIMIT:
            chunk = os.read(fd, READ_LIMIT + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _unchanged(path: Path, stamp: WatchStamp) -> bool:
    """Same device, inode, size, mtime and ctime; and, when that identity was recorded within
    ``RACY_NS`` of the read (a change then may keep every field), the same bytes."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return False
    identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    if identity != stamp[:5]:
        return False
    if max(stamp.mtime_ns, stamp.ctime_ns) < stamp.read_ns - RACY_NS:
        return True  # settled when read: the identity is proof enough (no read)
    data = _bytes_now(path, stamp)
    return data is not None and content_digest(data) == stamp.digest


def changed_paths(resolution: Resolution) -> tuple[Path, ...]:
    """Watched files edited, replaced, created or removed since ``resolution`` was made.

    One ``stat`` per watched path; a file that was absent and still is, or present with the
    same device, inode, size, mtime and ctime, counts as unchanged — except a file changed
    within ``RACY_NS`` of its read, which is also compared by content (git's racy rule).
    """
    changed: list[Path] = []
    for path, stamp in resolution.watched:
        if stamp is None:
            if _exists(path):
                changed.append(path)
        elif not _unchanged(path, stamp):
            changed.append(path)
    return tuple(dict.fromkeys(changed))


def _exists(path: Path) -> bool:
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


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
