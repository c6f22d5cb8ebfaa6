"""The file-system seam of the store: every open/write/fsync/link/replace/unlink uses ``FS``.

Tests monkeypatch an ``FS`` instance (or subclass it) to inject ENOSPC, short writes and crashes
at any step (RELIABILITY §1); ``os`` itself is never patched because buffered I/O bypasses it.
"""

from __future__ import annotations

import errno
import fcntl
import mmap
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ..errors import AlreadyExists, DurabilityUnknown, LockTimeout, StoreIOError
from ..filemodes import PRIVATE_FILE, fix_new_file_mode, kept_mode, make_private_dirs

TEMP_PREFIX = ".tmp-"
TEMP_SUFFIX = ".partial"
LOCK_NAME = ".lock"
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_CHUNK = 1 << 20
# At most this many buffers per ``writev`` (POSIX guarantees 16; Linux and macOS take 1024).
_IOV_MAX = 1024
# ``copy_file_range`` refusals that mean "not here" (another file system, an old kernel, a
# file system without it): the bytes are then read and written.
_NO_KERNEL_COPY = frozenset(
    getattr(errno, name) for name in ("EXDEV", "ENOSYS", "EINVAL", "EOPNOTSUPP", "ENOTSUP",
                                      "EPERM") if hasattr(errno, name)
)


class FS:
    """Thin, patchable wrappers over the OS calls the store makes."""

    def open(
        self, path: str | Path, flags: int, mode: int = 0o644, *, dir_fd: int | None = None
    ) -> int:
        """``os.open``."""
        return os.open(path, flags, mode, dir_fd=dir_fd)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        """``os.write``: may write fewer bytes than given."""
        return os.write(fd, data)

    def read(self, fd: int, size: int) -> bytes:
        """``os.read``."""
        return os.read(fd, size)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        """``os.pread``."""
        return os.pread(fd, size, offset)

    def copy_range(self, src: int, dst: int, count: int, offset: int) -> int:
        """Up to ``count`` bytes of ``src`` from ``offset`` to ``dst``'s position, copied by
        the kernel (``os.copy_file_range``), else read and written; how many (0: end of file)."""
        copy = getattr(os, "copy_file_range", None)
        if copy is not None:
            try:
                copied: int = copy(src, dst, count, offset)
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    raise
            else:
                if copied > 0:
                    return copied
                # 0: the end of the file, or a file system that copies nothing: read to see.
        data = os.pread(src, min(count, _CHUNK), offset)
        return self.write(dst, data) if data else 0

    def map(self, fd: int, size: int) -> mmap.mmap:
        """The first ``size`` bytes of ``fd`` mapped read-only, its pages faulted in at once."""
        populate = getattr(mmap, "MAP_POPULATE", 0)  # Linux: one call, not a fault per page
        return mmap.mmap(fd, size, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ)

    def writev(self, fd: int, buffers: list[memoryview]) -> int:
        """``os.writev``: may write fewer bytes than given."""
        return os.writev(fd, buffers)

    def fstat(self, fd: int) -> os.stat_result:
        """``os.fstat``."""
        return os.fstat(fd)

    def fsync(self, fd: int) -> None:
        """``os.fsync``."""
        os.fsync(fd)

    def close(self, fd: int) -> None:
        """``os.close``."""
        os.close(fd)

    def replace(self, src: str | Path, dst: str | Path) -> None:
        """``os.replace``: the commit point of an update."""
        os.replace(src, dst)

    def rename(self, src: str | Path, dst: str | Path) -> None:
        """``os.rename`` (archiving inside one store)."""
        os.rename(src, dst)

    def link(self, src: str | Path, dst: str | Path) -> None:
        """``os.link``: the no-clobber commit point of a create."""
        os.link(src, dst)

    def unlink(self, path: str | Path, *, dir_fd: int | None = None) -> None:
        """``os.unlink``."""
        os.unlink(path, dir_fd=dir_fd)

    def rmdir(self, path: str | Path) -> None:
        """``os.rmdir`` (only ever of an empty directory this operation created)."""
        os.rmdir(path)

    def mkdir(self, path: str | Path) -> None:
        """``os.mkdir`` with parents, each new one 0700 (S2.6); an existing directory is fine."""
        make_private_dirs(path)

    def flock(self, fd: int, operation: int) -> None:
        """``fcntl.flock``."""
        fcntl.flock(fd, operation)


def write_all(fs: FS, fd: int, data: bytes) -> None:
    """Write every byte, looping over short writes."""
    view = memoryview(data)
    while view:
        written = fs.write(fd, view[:_CHUNK])
        if written <= 0:
            raise OSError(errno.EIO, "write returned no progress")
        view = view[written:]


def copy_all(fs: FS, src: int, dst: int, offset: int, length: int) -> None:
    """Copy ``length`` bytes of ``src`` from ``offset`` to ``dst``; a file that ends early
    (changed since it was checked) raises."""
    while length > 0:
        copied = fs.copy_range(src, dst, min(length, 1 << 30), offset)
        if copied <= 0:
            raise OSError(errno.EIO, "the file ended before the range being copied")
        offset, length = offset + copied, length - copied


def writev_all(fs: FS, fd: int, buffers: list[memoryview]) -> None:
    """Write every byte of ``buffers`` in order, looping over short writes."""
    pending = [b for b in buffers if b.nbytes]
    rest: memoryview | None = None  # the unwritten end of a buffer written in part
    try:
        while pending:
            written = fs.writev(fd, pending[:_IOV_MAX])
            if written <= 0:
                raise OSError(errno.EIO, "write returned no progress")
            while pending and written >= pending[0].nbytes:
                written -= pending.pop(0).nbytes
            if written:
                cut = pending[0][written:]
                if rest is not None:
                    rest.release()
                rest = pending[0] = cut
    finally:
        if rest is not None:
            rest.release()  # a view of a mapping must be gone before the mapping closes


Part = tuple[int, int] | bytes


def write_parts(fs: FS, src: int, dst: int, parts: list[Part]) -> None:
    """Write ``parts`` to ``dst`` in order: ranges ``(start, end)`` of ``src`` and new bytes.

    The old bytes come from ``src`` mapped and go out in one ``writev``: one copy, in the
    kernel, into pages the size of the write (a ``copy_file_range`` of a 19 MB MEMORY.md moves
    it in 64 KB steps and costs a third more). Where ``src`` cannot be mapped or ``writev`` is
    missing, the ranges are copied as before. A ``src`` cut short while it is mapped makes the
    write fail (``EFAULT``, or a check below) rather than copy what is not there.
    """
    ranges = [part for part in parts if isinstance(part, tuple)]
    size = max((end for _, end in ranges), default=0)
    mapped = None
    if size and hasattr(os, "writev"):
        try:
            mapped = fs.map(src, size)
        except (OSError, ValueError):
            mapped = None  # not mappable here (a pipe, a file system without mmap)
    if mapped is None:
        for part in parts:
            if isinstance(part, tuple):
                copy_all(fs, src, dst, part[0], part[1] - part[0])
            else:
                write_all(fs, dst, part)
        return
    whole = memoryview(mapped)
    views = [whole[part[0]:part[1]] if isinstance(part, tuple) else memoryview(part)
             for part in parts]
    try:
        if fs.fstat(src).st_size < size:
            raise OSError(errno.EIO, "the file ended before the range being copied")
        writev_all(fs, dst, views)
    finally:
        for view in views:
            view.release()
        whole.release()
        mapped.close()


def read_file(
    fs: FS, path: str | Path, *, dir_fd: int | None = None
) -> tuple[bytes, os.stat_result]:
    """Read a regular file without following a final symlink; returns bytes and its fstat."""
    fd = fs.open(path, READ_FLAGS, dir_fd=dir_fd)
    try:
        st = fs.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        chunks: list[bytes] = []
        remaining = st.st_size + 1
        while True:
            chunk = fs.read(fd, max(remaining, 65536))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks), st
    finally:
        fs.close(fd)


def read_sized(fs: FS, path: str | Path, size: int) -> bytes:
    """Read a file whose lstat size is known: one read in the common case (listing hot path).

    A file that grew since the lstat falls back to ``read_file`` (with its regular-file check).
    """
    fd = fs.open(path, READ_FLAGS)
    try:
        data = fs.read(fd, size + 1)
    finally:
        fs.close(fd)
    if len(data) <= size:
        return data
    return read_file(fs, path)[0]


def fsync_dir(fs: FS, directory: Path) -> None:
    """fsync a directory so a rename/link inside it survives a power loss."""
    fd = fs.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fs.fsync(fd)
    finally:
        fs.close(fd)


def _temp_path(directory: Path) -> Path:
    return directory / f"{TEMP_PREFIX}{os.urandom(8).hex()}{TEMP_SUFFIX}"


def _write_temp(
    fs: FS, temp_dir: Path, data: bytes | Callable[[int], None], mode: int = PRIVATE_FILE
) -> Path:
    """Create, fill and fsync a fresh temp file with exactly ``mode``; removed on failure.

    ``data``: the bytes, or a function that writes them to the file descriptor it is given.
    """
    temp = _temp_path(temp_dir)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = fs.open(temp, flags, PRIVATE_FILE)
    try:
        fix_new_file_mode(fd, mode)
        if callable(data):
            data(fd)
        else:
            write_all(fs, fd, data)
        fs.fsync(fd)
    except BaseException:
        fs.close(fd)
        _discard(fs, temp)
        raise
    fs.close(fd)
    return temp


def _discard(fs: FS, path: Path) -> None:
    """Best-effort removal of our own temp file."""
    with suppress(OSError):
        fs.unlink(path)


def _io_error(action: str, path: Path, exc: OSError) -> StoreIOError:
    reason = exc.strerror or str(exc)
    return StoreIOError(f"could not {action} {path}: {reason}", exc.errno)


def atomic_write(
    fs: FS,
    target: Path,
    data: bytes | Callable[[int], None],
    *,
    create_only: bool = False,
    temp_dir: Path | None = None,
    revision: int = 0,
) -> None:
    """Write ``target`` atomically and durably (S4.4).

    Temp file in ``temp_dir`` (default: the target's directory; must be the same file system),
    short-write loop, fsync, then ``os.replace`` (update) or ``os.link`` (create-only: an existing
    target raises ``AlreadyExists`` and is never touched), then fsync the directory. Errors before
    the commit point raise ``StoreIOError`` with nothing changed; a failing directory fsync after
    it raises ``DurabilityUnknown(revision)``. A new file is 0600; a replaced one keeps its
    mode (S2.6). ``data`` may be a function writing the bytes to the temp file's descriptor.
    """
    directory = target.parent
    mode = PRIVATE_FILE if create_only else kept_mode(target)
    try:
        temp = _write_temp(fs, temp_dir or directory, data, mode)
    except OSError as exc:
        raise _io_error("write", target, exc) from exc
    try:
        if create_only:
            fs.link(temp, target)
        else:
            fs.replace(temp, target)
    except FileExistsError as exc:
        _discard(fs, temp)
        raise AlreadyExists(f"{target.name} already exists") from exc
    except OSError as exc:
        _discard(fs, temp)
        raise _io_error("write", target, exc) from exc
    if create_only:
        _discard(fs, temp)
    try:
        fsync_dir(fs, directory)
    except OSError as exc:
        raise DurabilityUnknown(
            f"{target} was written but its directory could not be synced: {exc.strerror or exc}",
            revision,
            exc.errno,
        ) from exc


def is_temp_name(name: str) -> bool:
    """True for our temp files (``.tmp-*.partial``)."""
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)


def sweep_temps(fs: FS, directory: Path) -> int:
    """Remove stale ``.tmp-*.partial`` files; only safe while holding the store lock."""
    removed = 0
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return 0
    for name in names:
        if is_temp_name(name):
            try:
                fs.unlink(directory / name)
                removed += 1
            except FileNotFoundError:
                continue
    return removed


@contextmanager
def store_lock(
    fs: FS, root: Path, *, timeout: float = 10.0, sweep: bool = True
) -> Iterator[None]:
    """Hold the OS lock of one store (S4.5); sweeps stale temp files once acquired.

    ``sweep=False``: the caller sweeps (``sweep_temps``) when it cannot tell the directory
    is unchanged since the last write (a listing costs time in proportion to the store).

    ``.lock`` is opened with O_NOFOLLOW (a planted symlink fails with ELOOP and its target is
    untouched) and is never unlinked: unlinking would let two holders lock different inodes.
    """
    try:
        fs.mkdir(root)
        fd = fs.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise _io_error("open the lock of", root, exc) from exc
    try:
        _acquire(fs, fd, root, timeout)
        if sweep:
            sweep_temps(fs, root)
        yield
    finally:
        fs.close(fd)


def _acquire(fs: FS, fd: int, root: Path, timeout: float) -> None:
    """flock with LOCK_NB in a loop so a stuck holder surfaces as ``LockTimeout``."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            fs.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout(f"memory store is locked by another writer: {root}") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
