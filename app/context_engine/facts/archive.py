"""The ``.archive/`` of a store: forget by rename (S4.7), listing (S4.10), safe lookup (S4.8)."""

from __future__ import annotations

import os
import re
import stat
from datetime import UTC, datetime
from pathlib import Path

from ..errors import ArchiveNotFound
from ..paths import bound_slug
from ..records import record
from .fs import FS, READ_FLAGS, fsync_dir
from .model import Diagnostic, Fact
from .store import ARCHIVE_DIR, INDEX_NAME

_PREFIX = re.compile(r"^(\d{8})-(\d{6})\.(\d{3})-(.+)\.md$")
_NOT_FOUND = "archived memory not found"
# 255-byte file names minus the time prefix (20), ``.md`` (3) and room for a ``-NNN`` counter.
_ARCHIVE_NAME_BYTES = 255 - 20 - 3 - 4


@record
class ArchivedEntry:
    """One forgotten fact: archive path, archive time, and its parse (or a diagnostic)."""

    path: Path
    archived_at: datetime
    fact: Fact | None
    diagnostic: Diagnostic | None = None


def archive_stamp(now: datetime) -> str:
    """``YYYYMMDD-HHMMSS.mmm`` in UTC."""
    now = now.astimezone(UTC)
    return now.strftime("%Y%m%d-%H%M%S") + f".{now.microsecond // 1000:03d}"


def archived_time(name: str, mtime: datetime) -> datetime:
    """Archive time from the file-name prefix, else the file's mtime (S4.10)."""
    match = _PREFIX.match(name)
    if match:
        day, clock, millis = match.group(1), match.group(2), match.group(3)
        try:
            parsed = datetime.strptime(day + clock, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
            return parsed.replace(microsecond=int(millis) * 1000)
        except ValueError:
            return mtime
    return mtime


def original_name(archive_name: str) -> str:
    """The fact-file name an archive entry came from (prefix removed)."""
    match = _PREFIX.match(archive_name)
    return f"{match.group(4)}.md" if match else archive_name


def archive_target(store_root: Path, name: str, now: datetime) -> Path:
    """A free ``.archive/<stamp>-<name>.md`` path (clash: ``-1``, ``-2`` … before ``.md``)."""
    directory = store_root / ARCHIVE_DIR
    # A 252-byte name plus the 20-byte time prefix would pass the 255-byte file-name limit:
    # such names are bounded like slugs (prefix + FNV suffix); the file keeps the full name.
    base = f"{archive_stamp(now)}-{bound_slug(name, _ARCHIVE_NAME_BYTES)}"
    candidate = directory / f"{base}.md"
    counter = 0
    while os.path.lexists(candidate):
        counter += 1
        candidate = directory / f"{base}-{counter}.md"
    return candidate


def move_to_archive(fs: FS, store_root: Path, source: Path, name: str, now: datetime) -> Path:
    """Archive one fact file by a rename inside the store (call under the store lock).

    A rename needs no write permission on the file itself, so a read-only fact is archived too.
    """
    directory = store_root / ARCHIVE_DIR
    if directory.is_symlink():
        raise ArchiveNotFound(f"{directory} is a symlink; refusing to archive into it")
    fs.mkdir(directory)
    target = archive_target(store_root, name, now)
    fs.rename(source, target)
    fsync_dir(fs, directory)
    fsync_dir(fs, store_root)
    return target


def list_entries(store_root: Path) -> list[tuple[Path, os.stat_result]]:
    """Regular, non-symlink ``.md`` files directly in ``.archive/`` (none if it is a symlink)."""
    directory = store_root / ARCHIVE_DIR
    if directory.is_symlink():
        return []
    return regular_md_files(directory)


def regular_md_files(directory: Path) -> list[tuple[Path, os.stat_result]]:
    """Regular, non-symlink, non-dot ``.md`` files directly in ``directory``, unsorted."""
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for entry in entries:
        if not entry.name.endswith(".md") or entry.name.startswith("."):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found.append((Path(entry.path), st))
    return found


def owning_store(path: str | Path, store_roots: list[Path]) -> tuple[Path, str]:
    """The store whose ``.archive/`` directly holds ``path``, and the entry's file name.

    Lexical only (``..`` folded, nothing resolved); the entry itself is opened later with
    ``open_entry``. Anything else raises ``archived memory not found``.
    """
    text = os.fspath(path)
    if not text or "\x00" in text:
        raise ArchiveNotFound(_NOT_FOUND)
    candidate = os.path.abspath(text)
    parent, entry = os.path.split(candidate)
    if not entry.endswith(".md") or entry.startswith(".") or entry == INDEX_NAME:
        raise ArchiveNotFound(_NOT_FOUND)
    for root in store_roots:
        for form in {os.path.abspath(root), os.path.realpath(root)}:
            if parent == os.path.join(form, ARCHIVE_DIR):
                return root, entry
    raise ArchiveNotFound(_NOT_FOUND)


def open_entry(fs: FS, store_root: Path, entry: str) -> tuple[int, bytes, os.stat_result]:
    """Open ``.archive/<entry>`` component by component without following symlinks.

    Returns the ``.archive`` directory fd (the caller closes it), the bytes and the entry's
    fstat. A symlinked ``.archive``, a symlinked entry, a directory, a FIFO or a hard link to a
    file elsewhere all raise ``archived memory not found``.
    """
    dir_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        root_fd = fs.open(store_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise ArchiveNotFound(_NOT_FOUND) from exc
    try:
        archive_fd = fs.open(ARCHIVE_DIR, dir_flags, dir_fd=root_fd)
    except OSError as exc:
        raise ArchiveNotFound(_NOT_FOUND) from exc
    finally:
        fs.close(root_fd)
    try:
        data, st = _read_entry(fs, archive_fd, entry)
    except BaseException:
        fs.close(archive_fd)
        raise
    return archive_fd, data, st


def _read_entry(fs: FS, archive_fd: int, entry: str) -> tuple[bytes, os.stat_result]:
    try:
        fd = fs.open(entry, READ_FLAGS, dir_fd=archive_fd)
    except OSError as exc:
        raise ArchiveNotFound(_NOT_FOUND) from exc
    try:
        st = fs.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            raise ArchiveNotFound(_NOT_FOUND)
        chunks = []
        while True:
            chunk = fs.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), st
    finally:
        fs.close(fd)
