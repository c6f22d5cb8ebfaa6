"""File and directory modes of everything we create (S2.6), whatever the umask.

Files of our own that hold user text (traces, caches, indexes, proposals, session notes) are
0600 in 0700 directories. A fact file we create is 0600; one we rewrite keeps its mode (Reasonix
writes 0644 and both read each other's files). ``os.open``/``os.mkdir`` modes are masked by the
umask, so every helper here sets the mode explicitly on the new file or directory.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700

_NEW_FLAGS = (
    os.O_RDWR
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def make_private_dirs(directory: str | Path) -> None:
    """Create ``directory`` and any missing parents as 0700; existing ones are left alone."""
    path = Path(directory)
    missing: list[Path] = []
    while not path.is_dir():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for new in reversed(missing):
        try:
            os.mkdir(new, PRIVATE_DIR)
        except FileExistsError:
            if not new.is_dir():
                raise
            continue  # another process made it first: its mode is theirs
        os.chmod(new, PRIVATE_DIR)


def fix_new_file_mode(fd: int, mode: int = PRIVATE_FILE) -> None:
    """Give a file we just created exactly ``mode`` (the umask only ever removes bits)."""
    os.fchmod(fd, mode)


def create_private_file(path: Path) -> None:
    """Create ``path`` (if missing) 0600 in 0700 directories, whatever the umask (S2.6);
    never through a symlink."""
    make_private_dirs(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, PRIVATE_FILE)
    try:
        fix_new_file_mode(fd)
    finally:
        os.close(fd)


def kept_mode(path: str | Path, default: int = PRIVATE_FILE) -> int:
    """The permission bits of an existing regular file, else ``default`` (rewrites keep modes)."""
    try:
        st = os.lstat(path)
    except OSError:
        return default
    if not stat.S_ISREG(st.st_mode):
        return default
    return stat.S_IMODE(st.st_mode)


def open_private_temp(beside: Path) -> tuple[int, str]:
    """A new 0600 temp file next to ``beside`` (O_EXCL, no symlink followed)."""
    for attempt in range(100):
        tmp = os.path.join(
            beside.parent, f".{beside.name}.{os.getpid()}-{time.time_ns()}-{attempt}.tmp"
        )
        try:
            fd = os.open(tmp, _NEW_FLAGS, PRIVATE_FILE)
        except FileExistsError:
            continue
        fix_new_file_mode(fd)
        return fd, tmp
    raise FileExistsError(f"no free temporary name next to {beside.name}")


def write_private(path: str | Path, data: bytes | str, *, durable: bool = True) -> None:
    """Atomically replace ``path`` with ``data`` as a 0600 file in a 0700 directory."""
    target = Path(path)
    make_private_dirs(target.parent)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = open_private_temp(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def append_private(path: str | Path, text: str) -> None:
    """Append ``text`` to ``path``; a new file is 0600 (an existing one is made 0600 too)."""
    target = Path(path)
    make_private_dirs(target.parent)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
    try:
        # Files of our own are always private, including ones an older version left 0644.
        if stat.S_IMODE(os.fstat(fd).st_mode) != PRIVATE_FILE:
            fix_new_file_mode(fd)
        view = memoryview(text.encode("utf-8"))
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def replace_keeping_mode(path: str | Path, data: bytes) -> None:
    """Atomically replace an existing file of the person's (an instruction or config file) with
    ``data``, durably, keeping its permission bits; its directory is left as it is."""
    target = Path(path)
    mode = stat.S_IMODE(target.stat().st_mode)
    fd, tmp = open_private_temp(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise

