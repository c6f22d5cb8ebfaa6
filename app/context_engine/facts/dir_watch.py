"""Changes to a few directories, told by the kernel (Linux inotify), read without blocking.

A long-lived host asks at the start of each turn what happened in the store directories since
the last turn. The kernel queues each event when the write happens, so a non-blocking read of
that queue sees every change another process finished before the turn began — unlike an
observer thread, which may deliver it a moment too late. No thread, no polling, no ``lstat``.

``DirWatch.open()`` is ``None`` where inotify is missing or refuses (another platform, no
libc symbol, the per-user instance limit): the caller keeps its scan per turn.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import struct
import sys
from dataclasses import dataclass, field
from typing import Any

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000

# Every way an entry's content, identity or presence can change, and the directory itself
# going away (then the caller rescans and watches again).
WATCH_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
# The store lock (``fs.LOCK_NAME``): every write opens it read-write and closes it, which
# raises IN_CLOSE_WRITE, and it is never read as a fact. Named, it would make every write
# look like a change to the other store and to every reader after it.
IGNORED_NAMES = frozenset({".lock"})
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)
_READ_SIZE = 64 * 1024  # many events per read(2); at least one event with a NAME_MAX name


@dataclass(slots=True)
class Drained:
    """What the queue held: entry names per watch, or why only a full rescan is safe."""

    names: dict[int, set[str]] = field(default_factory=dict)
    selves: set[int] = field(default_factory=set)  # watches whose directory itself changed
    rescan: str | None = None  # the queue overflowed or could not be read


# Filesystems whose every change is made through this kernel, so inotify sees them all. On a
# network or FUSE filesystem another machine's (or daemon's) writes raise no event: there the
# caller keeps its scan per turn.
LOCAL_FILESYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "f2fs", "jfs", "reiserfs",
     "bcachefs", "zfs", "overlay", "hfsplus", "vfat", "exfat", "ntfs3"}
)


def filesystem_of(path: str | os.PathLike[str]) -> str | None:
    """The type of the filesystem ``path`` is on (``/proc/self/mountinfo``), ``None`` unknown."""
    try:
        target = os.path.realpath(path)
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    best, kind = -1, None
    for line in lines:
        fields = line.split(" ")
        try:
            mount = _unescape(fields[4])
            fstype = fields[fields.index("-", 6) + 1]
        except (IndexError, ValueError):
            continue
        inside = target == mount or target.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= best:  # the last of equal mount points is the visible one
            best, kind = len(mount), fstype
    return kind


def _unescape(field: str) -> str:
    """A mountinfo path: the kernel writes space, tab, newline and backslash as octal."""
    for code, char in ((r"\040", " "), (r"\011", "\t"), (r"\012", "\n"), (r"\134", "\\")):
        field = field.replace(code, char)
    return field


def sees_every_change(path: str | os.PathLike[str]) -> bool:
    """Whether inotify reports every change under ``path`` (a local filesystem)."""
    return filesystem_of(path) in LOCAL_FILESYSTEMS


class DirWatch:
    """One inotify descriptor (non-blocking, close-on-exec) watching a few directories."""

    def __init__(self, fd: int, add_watch: Any, rm_watch: Any = None) -> None:
        self._fd = fd
        self._add_watch = add_watch
        self._rm_watch = rm_watch

    @classmethod
    def open(cls) -> DirWatch | None:
        """A new descriptor, or ``None`` where inotify cannot be used here."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            init1 = libc.inotify_init1
            add_watch = libc.inotify_add_watch
            rm_watch = libc.inotify_rm_watch
        except (OSError, AttributeError):
            return None
        init1.argtypes, init1.restype = [ctypes.c_int], ctypes.c_int
        add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        add_watch.restype = ctypes.c_int
        rm_watch.argtypes, rm_watch.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
        fd = init1(os.O_NONBLOCK | os.O_CLOEXEC)  # IN_NONBLOCK | IN_CLOEXEC share these values
        if fd < 0:
            return None
        return cls(fd, add_watch, rm_watch)

    def fileno(self) -> int:
        """The descriptor (readable when events are queued), for ``select``."""
        return self._fd

    def add(self, directory: str | os.PathLike[str]) -> int | None:
        """Watch ``directory`` (followed if a symlink); its watch descriptor, ``None`` if not."""
        if self._fd < 0:
            return None
        wd = int(self._add_watch(self._fd, os.fsencode(directory), WATCH_MASK))
        return None if wd < 0 else wd

    def remove(self, wd: int) -> None:
        """Stop watching one directory (its pending events stay queued; an ``IN_IGNORED``
        follows)."""
        if self._fd >= 0 and self._rm_watch is not None:
            self._rm_watch(self._fd, wd)

    def drain(self) -> Drained:
        """Every event queued so far, without waiting (an empty result: nothing happened)."""
        out = Drained()
        while True:
            try:
                data = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                return out
            except OSError as exc:
                out.rescan = f"watch unreadable: {exc.strerror or exc}"
                return out
            if not data:
                return out
            self._parse(data, out)

    @staticmethod
    def _parse(data: bytes, out: Drained) -> None:
        offset, size = 0, len(data)
        while offset + _HEADER.size <= size:
            wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
            start = offset + _HEADER.size
            offset = start + length
            if mask & IN_Q_OVERFLOW:
                out.rescan = "queue overflow"
            elif length and not mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT):
                name = os.fsdecode(data[start:offset].rstrip(b"\0"))
                if name not in IGNORED_NAMES:
                    out.names.setdefault(wd, set()).add(name)
            else:
                # The directory itself: moved, removed, unmounted, its watch dropped, or its
                # own mode or owner changed (IN_ATTRIB with no name).
                out.selves.add(wd)

    def close(self) -> None:
        """Release the descriptor (every watch goes with it)."""
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            self.close()
