"""Opening instruction files and imports without ever reading outside a boundary.

Policy B of RELIABILITY §2: symlinks inside the boundary are followed; the path is opened
relative to a directory fd held open for the whole resolution, and the *opened* fd's real path
(``/proc/self/fd/N`` on Linux, ``F_GETPATH`` on macOS) must lie inside the boundary before a
single byte is read. The check is made on the object actually opened, so a directory swapped for
a symlink between any check and the open cannot leak (no TOCTOU). Where no fd path is
available, Policy A is used instead: components are opened one by one with ``O_NOFOLLOW`` and
any symlink is refused.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from typing import Literal, NamedTuple

from ..digests import blake2b
from .model import WatchStamp

READ_LIMIT = 1 << 20  # bytes; instruction files are small, a huge one is a mistake or an attack

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
FILE_FLAGS = os.O_RDONLY | _O_CLOEXEC | _O_NOCTTY | _O_NONBLOCK
DIR_FLAGS = os.O_RDONLY | _O_CLOEXEC | _O_DIRECTORY | _O_NONBLOCK

FailureKind = Literal["missing", "escape", "unreadable", "empty"]


class FileSystem:
    """The resolver's only door to the disk: a seam tests replace to inject failures."""

    def open(self, path: str, flags: int, dir_fd: int | None = None) -> int:
        """``os.open`` relative to ``dir_fd``."""
        return os.open(path, flags, dir_fd=dir_fd)

    def fstat(self, fd: int) -> os.stat_result:
        """``os.fstat``."""
        return os.fstat(fd)

    def lstat_at(self, name: str, dir_fd: int) -> os.stat_result:
        """``lstat`` of one name inside ``dir_fd``."""
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)

    def read(self, fd: int, size: int) -> bytes:
        """``os.read``."""
        return os.read(fd, size)

    def close(self, fd: int) -> None:
        """``os.close``."""
        os.close(fd)

    def fd_path(self, fd: int) -> str | None:
        """The kernel's current path of an open fd, or None where the OS cannot tell."""
        try:
            if sys.platform.startswith("linux"):
                return os.readlink(f"/proc/self/fd/{fd}")
            if sys.platform == "darwin":
                import fcntl

                raw = fcntl.fcntl(fd, fcntl.F_GETPATH, b"\0" * 1024)
                return bytes(raw).split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        except OSError:
            return None
        return None


class Opened(NamedTuple):
    """A file read in full: its text (decoded, BOM stripped) and the stamp of what was opened."""

    text: str
    stamp: WatchStamp


class Failure(NamedTuple):
    """Why a file was not read; the caller turns ``kind`` into an S6.5 code."""

    kind: FailureKind
    message: str


def decode_instruction_bytes(data: bytes) -> str | None:
    """Text of an instruction file or import, decoded like fact files (S3.4) and as Reasonix
    reads them: UTF-8 with or without BOM, UTF-16 with BOM (LE/BE), else GB18030; ``None``
    when none fits. Unlike fact files, a NUL byte does not refuse the file: the resolver
    checks import paths for controls, and a document is text for a prompt, not a record."""
    if data.startswith(b"\xef\xbb\xbf"):
        encodings: tuple[tuple[int, str], ...] = ((3, "utf-8"),)
    elif data.startswith(b"\xff\xfe") and not data.startswith(b"\xff\xfe\x00\x00"):
        encodings = ((2, "utf-16-le"),)
    elif data.startswith(b"\xfe\xff"):
        encodings = ((2, "utf-16-be"),)
    else:
        encodings = ((0, "utf-8"), (0, "gb18030"))
    for start, encoding in encodings:
        try:
            return data[start:].decode(encoding)
        except UnicodeDecodeError:
            continue
    return None


def content_digest(data: bytes) -> bytes:
    """A short digest of a file's bytes, to compare a racy read with the file now."""
    return blake2b(data, digest_size=16).digest()


def is_within(path: str, base: str, *, strict: bool = True) -> bool:
    """Whether ``path`` is ``base`` itself (unless strict) or lies below it."""
    if path == base:
        return not strict
    prefix = base if base.endswith("/") else base + "/"
    return path.startswith(prefix)


def _errno_failure(exc: OSError, what: str) -> Failure:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return Failure("missing", f"{what} does not exist")
    if exc.errno == errno.ELOOP:
        return Failure("unreadable", f"{what} is a symlink loop")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return Failure("unreadable", f"{what} is not readable (permission denied)")
    if exc.errno == errno.ENXIO:
        return Failure("unreadable", f"{what} is not a regular file (socket or device)")
    return Failure("unreadable", f"{what} cannot be opened: {exc.strerror or exc}")


class Opener:
    """Opens paths below a held directory fd under Policy B (or A where B is impossible)."""

    def __init__(self, fs: FileSystem | None = None, *, policy: Literal["auto", "A", "B"] = "auto"):
        self.fs = fs or FileSystem()
        self._policy = policy

    def real_path(self, fd: int) -> str | None:
        """The real path of an open directory fd (None under Policy A)."""
        if self._policy == "A":
            return None
        return self.fs.fd_path(fd)

    def open_root(self, path: str) -> int | Failure:
        """Open a directory we were told to trust (workspace root, home) by its path."""
        try:
            return self.fs.open(path, DIR_FLAGS)
        except (OSError, NotImplementedError, ValueError) as exc:
            if isinstance(exc, OSError):
                return _errno_failure(exc, "directory")
            return Failure("unreadable", f"directory cannot be opened: {exc}")

    def open_dir(self, dir_fd: int, base_real: str | None, name: str) -> int | Failure:
        """Open one child directory of ``dir_fd`` that must stay inside ``base_real``."""
        return self._open_parts(dir_fd, base_real, (name,), DIR_FLAGS, "directory")

    def read_file(
        self, dir_fd: int, base_real: str | None, parts: tuple[str, ...]
    ) -> Opened | Failure:
        """Read the regular file at ``parts`` below ``dir_fd``, confined to ``base_real``."""
        if not parts:
            return Failure("unreadable", "target is a directory")
        fd = self._open_parts(dir_fd, base_real, parts, FILE_FLAGS, "target")
        if isinstance(fd, Failure):
            return fd
        try:
            return self._read_open(fd)
        except (OSError, ValueError) as exc:
            return Failure("unreadable", f"target cannot be read: {exc}")
        finally:
            self.fs.close(fd)

    def is_file(self, dir_fd: int, base_real: str | None, parts: tuple[str, ...]) -> bool:
        """Whether ``parts`` below ``dir_fd`` is a regular file inside ``base_real`` (nothing
        is read)."""
        if not parts:
            return False
        fd = self._open_parts(dir_fd, base_real, parts, FILE_FLAGS, "target")
        if isinstance(fd, Failure):
            return False
        try:
            return stat.S_ISREG(self.fs.fstat(fd).st_mode)
        except OSError:
            return False
        finally:
            self.fs.close(fd)

    def _open_parts(
        self, dir_fd: int, base_real: str | None, parts: tuple[str, ...], flags: int, what: str
    ) -> int | Failure:
        if self._policy != "A" and base_real is not None:
            return self._open_checked(dir_fd, base_real, parts, flags, what)
        return self._open_nofollow(dir_fd, parts, flags, what)

    def _open_checked(
        self, dir_fd: int, base_real: str, parts: tuple[str, ...], flags: int, what: str
    ) -> int | Failure:
        try:
            fd = self.fs.open("/".join(parts), flags, dir_fd=dir_fd)
        except OSError as exc:
            return _errno_failure(exc, what)
        except (NotImplementedError, ValueError) as exc:
            return Failure("unreadable", f"{what} cannot be opened: {exc}")
        real = self.fs.fd_path(fd)
        if real is None or not is_within(real, base_real):
            self.fs.close(fd)
            return Failure("escape", f"{what} resolves outside the boundary through a symlink")
        return fd

    def _open_nofollow(
        self, dir_fd: int, parts: tuple[str, ...], flags: int, what: str
    ) -> int | Failure:
        current = dir_fd
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            step_flags = (flags if last else DIR_FLAGS) | _O_NOFOLLOW
            try:
                fd: int | Failure = self.fs.open(part, step_flags, dir_fd=current)
            except OSError as exc:
                fd = _errno_failure(exc, what)
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) and self._is_link(
                    current, part
                ):
                    fd = Failure("escape", f"{what} goes through a symlink (not followed)")
            except (NotImplementedError, ValueError) as exc:
                fd = Failure("unreadable", f"{what} cannot be opened: {exc}")
            if current != dir_fd:
                self.fs.close(current)
            if isinstance(fd, Failure):
                return fd
            current = fd
        return current

    def _is_link(self, dir_fd: int, name: str) -> bool:
        try:
            return stat.S_ISLNK(self.fs.lstat_at(name, dir_fd).st_mode)
        except OSError:
            return False

    def _read_open(self, fd: int) -> Opened | Failure:
        read_ns = time.time_ns()
        info = self.fs.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return Failure("unreadable", "target is a directory")
        if not stat.S_ISREG(info.st_mode):
            return Failure("unreadable", "target is not a regular file (FIFO, device or socket)")
        if info.st_size > READ_LIMIT:
            return Failure("unreadable", f"target is larger than {READ_LIMIT} bytes")
        chunks: list[bytes] = []
        total = 0
        while total <= READ_LIMIT:
            chunk = self.fs.read(fd, READ_LIMIT + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > READ_LIMIT:
            return Failure("unreadable", f"target is larger than {READ_LIMIT} bytes")
        data = b"".join(chunks)
        text = decode_instruction_bytes(data)
        if text is None:
            return Failure("unreadable", "target is not UTF-8, UTF-16 (with BOM) or GB18030 text")
        if text.startswith("\ufeff"):
            text = text[1:]
        if not text.strip():
            return Failure("empty", "target is empty")
        stamp = WatchStamp(
            info.st_dev,
            info.st_ino,
            info.st_size,
            info.st_mtime_ns,
            info.st_ctime_ns,
            read_ns,
            content_digest(data),
        )
        return Opened(text, stamp)
