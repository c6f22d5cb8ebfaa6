"""One store directory: read every active fact into an immutable snapshot (S2.3, S3.4).

Reads never take the lock and never write. A file that cannot be read or parsed becomes a
``Diagnostic`` and is left exactly as it is. Parse results are cached by (inode, size, mtime,
ctime, device) from the directory scan: an atomic replace changes the inode, and an in-place
edit changes the ctime even when the size and a restored mtime match (ctime cannot be set back).
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import stat
import threading
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..digests import sha256
from ..errors import FactFormatError
from ..paths import safe_join, slugify
from ..records import record
from .decoding import MAX_FACT_BYTES
from .fs import FS, read_file, read_sized
from .model import Diagnostic, Fact, FileStamp, ParsedFact, Scope
from .stat_listing import INDEX_NAME as INDEX_NAME  # re-exported from their former home here
from .stat_listing import RACY_NS as RACY_NS
from .stat_listing import identity_of as identity_of
from .stat_listing import is_fact_file_name as is_fact_file_name

# The codec (and YAML) load on the first parse (``Store.parse``): a read the derived index
# answers needs neither (~40-60 ms of imports per process).

if TYPE_CHECKING:
    from .derived_index import FactIndex, Summary
    from .write_state import WriteState


ARCHIVE_DIR = ".archive"
# A first build commits its parses to the derived index in batches of this many files.
_BATCH = 1000
_SHOWN_FROM = 2000  # files to parse before a command's build shows progress at all
REVISIONS_DIR = ".revisions"


@record
class StoreSnapshot:
    """Every active fact of one store (sorted by name) and the files that could not be read."""

    scope: Scope
    root: Path
    facts: tuple[Fact, ...]
    diagnostics: tuple[Diagnostic, ...]


@record
class LoadedFile:
    """One fact file as read: its exact bytes (for snapshots and digests) and the parse."""

    path: Path
    data: bytes
    parsed: ParsedFact

    @property
    def fact(self) -> Fact:
        """The parsed fact."""
        return self.parsed.fact

    @property
    def digest(self) -> str:
        """sha256 (hex) of the exact bytes read: the full-value check of RELIABILITY C6."""
        return sha256(self.data).hexdigest()


def fact_slug(name: str) -> str:
    """The file-name slug of a fact name: NFC first, so NFC/NFD twins are one name (S3.7)."""
    return slugify(unicodedata.normalize("NFC", name))


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC around bulk work that only creates acyclic objects.

    Parsing or indexing 10k-100k facts allocates millions of small objects; the collector would
    re-scan every live object many times over (15-30% of a listing, measured; far more when the
    process already holds large snapshots). Refcounting still frees everything, and the
    collector resumes right after — only if this call paused it.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def stamp_of(st: os.stat_result) -> FileStamp:
    """The identity of a file as read."""
    return FileStamp(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def mtime_of(st: os.stat_result) -> datetime:
    """The file's mtime as an aware UTC datetime."""
    return datetime.fromtimestamp(st.st_mtime_ns / 1e9, UTC)


class Store:
    """One store directory (project or global) read through the ``FS`` seam."""

    def __init__(self, root: Path, scope: Scope, fs: FS, index: FactIndex | None = None) -> None:
        self.root = root
        self.scope = scope
        self.fs = fs
        # The derived on-disk index (facts/derived_index.py): rows for files a cold process
        # would otherwise read and parse; ``None`` reads every file.
        self.index = index
        # What writers keep between writes (facts/write_state.py); set by ``Memory``.
        self.writes: WriteState | None = None
        self._cache: dict[str, _CacheEntry] = {}
        self._ids: dict[str, str] = {}
        self._legacy: tuple[str, ...] = ()
        self._cache_lock = threading.Lock()

    def fact_path(self, name: str) -> Path:
        """``<root>/<fact_slug(name)>.md`` through the one safe-join (S2.5)."""
        return safe_join(self.root, f"{fact_slug(name)}.md")

    def parse(self, data: bytes, path: Path, st: os.stat_result) -> ParsedFact:
        """Parse bytes read from ``path`` in this store; raises ``FactFormatError``."""
        from .codec import parse_fact

        return parse_fact(
            data, path=path, store_scope=self.scope, mtime=mtime_of(st), stamp=stamp_of(st)
        )

    def load(self, path: Path) -> LoadedFile | None:
        """Read and parse one fact file; ``None`` when it does not exist.

        Raises ``FactFormatError`` when it exists but cannot be read or parsed.
        """
        try:
            data, st = read_file(self.fs, path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise _unreadable(path, exc) from exc
        return LoadedFile(path, data, self.parse(data, path, st))

    def load_name(self, name: str) -> LoadedFile | None:
        """The active fact file of a name in this store, if any."""
        return self.load(self.fact_path(name))

    def snapshot(self) -> StoreSnapshot:
        """Read every active fact of this store (a missing directory is an empty store)."""
        facts: list[Fact] = []
        diagnostics: list[Diagnostic] = []
        try:
            entries = list(os.scandir(self.root))
        except (FileNotFoundError, NotADirectoryError):
            entries = []
        with self._cache_lock:
            old = self._cache
        fresh: dict[str, _CacheEntry] = {}
        # Read before this instant, a file changed within one coarse timestamp tick of it could
        # change again without a new key: such entries are marked racy and never trusted.
        racy_from = time.time_ns() - RACY_NS
        with gc_paused():
            self._scan(entries, old, fresh, facts, diagnostics, racy_from)
            facts.sort(key=lambda f: (f.name, f.id))
        diagnostics.sort(key=lambda d: str(d.path))
        ids: dict[str, str] = {}
        for fact in facts:
            if fact.path is not None:
                ids.setdefault(fact.id, fact.path.name)
        legacy = tuple(
            sorted(
                n for n, (_, r, _) in fresh.items() if isinstance(r, ParsedFact) and r.needs_upgrade
            )
        )
        with self._cache_lock:
            self._cache = fresh
            self._ids = ids
            self._legacy = legacy
        return StoreSnapshot(self.scope, self.root, tuple(facts), tuple(diagnostics))

    def _child(self, name: str) -> Path:
        """``root / name`` without re-parsing the root: pathlib's own fast child constructor
        (what ``Path.iterdir`` uses) when present, ~4x cheaper per file on a 10k listing."""
        make = getattr(self.root, "_make_child_relpath", None)
        child: Path = make(name) if make is not None else self.root / name
        return child

    def _scan(
        self,
        entries: list[os.DirEntry[str]],
        old: dict[str, _CacheEntry],
        fresh: dict[str, _CacheEntry],
        facts: list[Fact],
        diagnostics: list[Diagnostic],
        racy_from: int,
    ) -> None:
        """One pass over the directory entries: reuse cached parses, read and parse the rest.

        What the in-process cache does not hold is taken from the derived index when its row
        is trusted (identity equal and settled), else read and parsed — and the index is told.
        """
        misses: list[tuple[str, os.stat_result, _Key]] = []
        for entry in entries:
            name = entry.name
            # Inlined ``is_fact_file_name``: this loop runs once per file on every listing.
            if name[-3:] != ".md" or name[0] == "." or name == INDEX_NAME:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            except OSError as exc:
                path = Path(entry.path)
                diagnostics.append(_diagnostic(_unreadable(path, exc), path))
                continue
            if not stat.S_ISREG(st.st_mode):
                if stat.S_ISLNK(st.st_mode):
                    msg = f"{name}: symlinks are not read"
                    diagnostics.append(Diagnostic("symlink", Path(entry.path), msg))
                continue
            key = identity_of(st)
            hit = old.get(name)
            if hit is None or hit[0] != key or hit[2]:
                misses.append((name, st, key))
                continue
            fresh[name] = hit
            if isinstance(hit[1], Diagnostic):
                diagnostics.append(hit[1])
            else:
                facts.append(hit[1].fact)
        if misses:
            self._resolve_misses(misses, not old, fresh, facts, diagnostics, racy_from)

    def _resolve_misses(
        self,
        misses: list[tuple[str, os.stat_result, _Key]],
        cold: bool,
        fresh: dict[str, _CacheEntry],
        facts: list[Fact],
        diagnostics: list[Diagnostic],
        racy_from: int,
    ) -> None:
        """Files the in-process cache could not vouch for: trusted index rows, else a parse."""
        index = self.index
        rows = {} if index is None else index.rows(None if cold else [m[0] for m in misses])
        checked_ns = racy_from + RACY_NS  # when this scan began: every lstat came after it
        changed: list[tuple[str, _Key, int, ParsedFact | Diagnostic]] = []
        progress = None
        if len(misses) - len(rows) > _SHOWN_FROM:
            from .build_progress import Phase

            progress = Phase(f"indexing the {self.scope} store", len(misses))
        for number, (name, st, key) in enumerate(misses, 1):
            row = rows.get(name)
            if row is not None and row.trusted(key):
                result: ParsedFact | Diagnostic | None = row.item
            else:
                # lstat came first, so the bytes read are at least as new as the key: a later
                # change shows up as a different key, unless it falls in the racy window.
                result = self._read_entry(self._child(name), st)
                if result is None:
                    continue
                changed.append((name, key, checked_ns, result))
                if len(changed) >= _BATCH and index is not None:
                    # Committed as it goes: a build killed (an agent's hook timeout, Ctrl+C)
                    # keeps every batch, and the next one parses only the rest.
                    index.update(changed)
                    changed.clear()
            if progress is not None and not number % 256:
                progress.done(number)
            assert result is not None
            fresh[name] = (
                key, result, st.st_ctime_ns >= racy_from or st.st_mtime_ns >= racy_from
            )
            if isinstance(result, Diagnostic):
                diagnostics.append(result)
            else:
                facts.append(result.fact)
        if progress is not None:
            progress.done(len(misses))
            progress.end()
        if index is not None:
            removed = [name for name in rows if name not in fresh] if cold else []
            if changed or removed:
                index.update(changed, removed)

    def scan_for_id(self, fact_id: str) -> LoadedFile | None:
        """Find ``fact_id`` by reading every fact file but parsing only those containing it.

        A fast path for a save by id in a fresh process (reading is ~4x cheaper than parsing);
        files without the id in ASCII bytes (UTF-16, legacy ids) need the full snapshot instead.
        """
        needle = fact_id.encode("ascii", errors="ignore")
        try:
            entries = list(os.scandir(self.root))
        except (FileNotFoundError, NotADirectoryError):
            return None
        for entry in sorted(entries, key=lambda e: e.name):
            name = entry.name
            if not is_fact_file_name(name) or not entry.is_file(follow_symlinks=False):
                continue
            path = self._child(name)
            try:
                data, st = read_file(self.fs, path)
                if needle not in data:
                    continue
                loaded = LoadedFile(path, data, self.parse(data, path, st))
            except (OSError, FactFormatError):
                continue
            if loaded.fact.id == fact_id:
                return loaded
        return None

    def summaries(self) -> list[Summary]:
        """Indexed list rows (no bodies) of the files that still match them, sorted by name.

        A cheap first page for a table of many facts (the app): one query and one directory
        scan, no file read. Files that changed or are not indexed are simply missing here;
        ``snapshot()`` has everything.
        """
        if self.index is None:
            return []
        listing: dict[str, _Key] = {}
        try:
            with os.scandir(self.root) as entries:
                for entry in entries:
                    if is_fact_file_name(entry.name):
                        with contextlib.suppress(OSError):
                            listing[entry.name] = identity_of(entry.stat(follow_symlinks=False))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [
            row
            for row in self.index.summaries()
            if (key := listing.get(row.file)) is not None and row.trusted(key)
        ]

    def identities(self) -> dict[int, _Key]:
        """``id(fact)`` → lstat identity for the facts of the last snapshot."""
        with self._cache_lock:
            entries = list(self._cache.values())
        return {
            id(result.fact): key
            for key, result, _ in entries
            if isinstance(result, ParsedFact)
        }

    def entries(self) -> list[tuple[str, _Key, ParsedFact | Diagnostic]]:
        """(file name, lstat identity, parse) of every regular fact file of the last snapshot."""
        with self._cache_lock:
            return [(name, key, result) for name, (key, result, _) in self._cache.items()]

    def legacy_files(self) -> list[Path]:
        """Fact files the last snapshot found in need of the S5.1 upgrade (sorted by name)."""
        with self._cache_lock:
            return [self.root / name for name in self._legacy]

    def id_hint(self, fact_id: str) -> Path | None:
        """Where the last snapshot saw ``fact_id`` (a hint: callers re-read and verify)."""
        with self._cache_lock:
            name = self._ids.get(fact_id)
        return None if name is None else self.root / name

    def read_entry(self, path: Path, st: os.stat_result) -> ParsedFact | Diagnostic | None:
        """Read and parse one listed file (lstat ``st``); ``None`` when it is gone."""
        return self._read_entry(path, st)

    def entry_now(self, name: str) -> Fact | Diagnostic | None:
        """One directory entry as ``snapshot()`` would see it now: its fact, its diagnostic,
        or ``None`` (gone, not a fact file, not a regular file). For a host told by the
        kernel which entries changed (``recall/live.py``); it lstats and reads that file only.
        """
        if not is_fact_file_name(name):
            return None
        path = self._child(name)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return _diagnostic(_unreadable(path, exc), path)
        if not stat.S_ISREG(st.st_mode):
            if stat.S_ISLNK(st.st_mode):
                return Diagnostic("symlink", path, f"{name}: symlinks are not read")
            return None
        result = self._read_entry(path, st)
        return result.fact if isinstance(result, ParsedFact) else result

    def _read_entry(self, path: Path, st: os.stat_result) -> ParsedFact | Diagnostic | None:
        if st.st_size > MAX_FACT_BYTES:
            # Never pull a huge file into memory just to have the codec refuse it.
            msg = f"fact file is larger than {MAX_FACT_BYTES} bytes ({st.st_size})"
            return Diagnostic("too_large", path, msg)
        try:
            data = read_sized(self.fs, path, st.st_size)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return _diagnostic(_unreadable(path, exc), path)
        try:
            return self.parse(data, path, st)
        except FactFormatError as exc:
            return _diagnostic(exc, path)


def load_fact_file(root: Path, scope: Scope, name: str) -> Fact | None:
    """One fact file of a store read and parsed now (``None``: gone); raises
    ``FactFormatError`` when it cannot be read or parsed. For a reader checking one file
    against what it saved (``recall/quiet.py``), without a ``Memory``."""
    from .fs import FS

    loaded = Store(root, scope, FS()).load(root / name)
    return None if loaded is None else loaded.fact


def read_store_entry(root: Path, scope: Scope, name: str) -> Fact | Diagnostic | None:
    """One directory entry of a store as ``Store.snapshot`` would take it now: its fact, its
    diagnostic, or ``None`` (gone, or not a regular file nor a symlink). For a reader bringing
    what it saved up to a few changed files (``recall/delta.py``), without a ``Memory``."""
    path = root / name
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return scan_diagnostic(path, exc)
    if not stat.S_ISREG(st.st_mode):
        if stat.S_ISLNK(st.st_mode):
            return Diagnostic("symlink", path, f"{name}: symlinks are not read")
        return None
    result = Store(root, scope, FS())._read_entry(path, st)
    return result if result is None or isinstance(result, Diagnostic) else result.fact


# lstat identity: (dev, ino, size, mtime_ns, ctime_ns, mode), as the derived index keeps it.
_Key = tuple[int, int, int, int, int, int]
Identity = _Key
# (lstat key, parse result, racy: changed too close to the read to trust the key alone).
_CacheEntry = tuple[_Key, "ParsedFact | Diagnostic", bool]


def _unreadable(path: Path, exc: OSError) -> FactFormatError:
    if exc.errno == errno.ELOOP:
        return FactFormatError("symlink", f"{path.name}: symlinks are not read")
    return FactFormatError("unreadable", f"{path.name}: {exc.strerror or exc}")


def unreadable(path: Path, exc: OSError) -> FactFormatError:
    """The format error of a fact file that exists but cannot be read."""
    return _unreadable(path, exc)


def scan_diagnostic(path: Path, exc: OSError) -> Diagnostic:
    """The diagnostic of a directory entry that could not be lstat'ed."""
    return _diagnostic(_unreadable(path, exc), path)


def _diagnostic(exc: FactFormatError, path: Path) -> Diagnostic:
    return Diagnostic(exc.reason, path, exc.message, exc.line)
