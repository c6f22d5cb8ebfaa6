"""The persisted recall state of a workspace: one SQLite file a cold process reads in pieces.

``recall/persist.py`` decides *what* is kept (the built index, the pool tables, per fact its
lstat identity and a record of its fields); this module keeps it so that nothing has to be
read whole. A hook turn on unchanged stores — the common case — reads the listing the state was
saved under and compares it with one ``lstat`` per file, then reads only the postings of the
query's terms and the records of the facts it shows (issue 14). Nothing here imports NumPy,
the codec or YAML.

Tables: ``meta`` (version, code digest, store roots, the listing, settled flag, session marks,
masked ids, diagnostics, failed facts, pool tables — each a ``marshal`` blob), ``records``
(reference → identity, fact record), ``indexes`` (one row per pool: slot keys, free slots,
per-slot arrays, total length), ``postings`` (pool, term → interleaved ``(slot, tf)``
int32 pairs) and ``holders`` (equivalence key → the facts holding it). Anything wrong with the
file (missing, foreign owner, writable by others, corrupt, another version or code) reads as
"no state", and a failed write only costs the next process a rebuild.

Two files, both only ever replaced by a rename, so a reader opens them immutable (no lock, no
``-wal``): the *base* (``recall.v2.sqlite``, written whole, named by a random token) and a
*delta* beside it (``….delta``) holding the rows changed since, with the token of the base it
applies to. A change rewrites only the delta (a copy of it plus the changed rows): its cost is
the rows changed since the last whole write, never the base's size. A reader takes a delta's
row over the base's (a ``NULL`` value: deleted); a delta naming another token is ignored, so a
base and a delta from two writers never mix (docs/decisions.md).
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..filemodes import open_private_temp

if TYPE_CHECKING:
    from ..facts.stat_listing import Identity, Listing
    from .saved_listing import SavedListing

SCHEMA = 5
# Tables holding large values (the packed listing in ``meta``, a pool's slot keys, postings,
# fact records, holder lists) are rowid tables: SQLite reads an overflowing cell of a WITHOUT
# ROWID table whole whenever a key lookup compares against it, so at 10^5 facts reading a few
# small ``meta`` values cost ~25 ms (the 8 MB listing, read past each time). The small-row
# tables below keep WITHOUT ROWID.
_DDL = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB)",
    "CREATE TABLE records (reference TEXT PRIMARY KEY, identity BLOB, record BLOB)",
    "CREATE TABLE indexes (name TEXT PRIMARY KEY, keys BLOB, free BLOB, arrays BLOB,"
    " total INTEGER)",
    "CREATE TABLE postings (name TEXT, term TEXT, pairs BLOB, PRIMARY KEY (name, term))",
    "CREATE TABLE holders (key TEXT PRIMARY KEY, ids BLOB)",
    # The pool tables (recall/pool.py), one row per entry: kind ``m`` membership, ``k`` a
    # fact's keys, ``p``/``g`` a key's project/global holders. A change writes its few rows.
    "CREATE TABLE tracker (kind TEXT, key TEXT, value BLOB, PRIMARY KEY (kind, key))"
    " WITHOUT ROWID",
    # The session marks (session/notes.py): what a provider is told of each fact.
    "CREATE TABLE marks (id TEXT PRIMARY KEY, revision INTEGER, reference TEXT) WITHOUT ROWID",
    # Delta only (empty in a base): what a change did to a term's posting of the base — slots
    # taken out, then (slot, tf) pairs put in (int32 each) — so a change costs the changed
    # facts' terms, not their postings' length.
    "CREATE TABLE patches (name TEXT, term TEXT, removed BLOB, added BLOB,"
    " PRIMARY KEY (name, term)) WITHOUT ROWID",
    # Delta only: a pool's free slots, total length and slot count, and each changed slot's
    # key (``NULL``: free) and per-slot values, over the base's (or a whole delta row's) arrays.
    "CREATE TABLE pools (name TEXT PRIMARY KEY, free BLOB, total INTEGER, size INTEGER)"
    " WITHOUT ROWID",
    "CREATE TABLE slots (name TEXT, slot INTEGER, key TEXT, vals BLOB,"
    " PRIMARY KEY (name, slot)) WITHOUT ROWID",
    # Delta only: listing rows (scope index 0 project / 1 global, file name → identity,
    # ``NULL``: gone) over the ``meta`` listing, and ``meta`` ``listing_sum`` the digest of the
    # whole listing's bytes then.
    "CREATE TABLE listing (scope INTEGER, name TEXT, identity BLOB, PRIMARY KEY (scope, name))"
    " WITHOUT ROWID",
)
# ``meta`` key of the keyed tables besides records and postings (``holders``: equivalence key
# → the facts holding it), passed in and read back with the meta values.
TABLES = "@tables"
# ``meta`` key: a random token of one whole state; a delta names the token it applies to.
TOKEN = "token"
# The pool tables' kinds in the ``tracker`` table, in ``PoolTracker.export()`` order.
TRACKER_KINDS = ("m", "k", "p", "g")
BASE = "base"


# ``meta`` key: the digest of the listing's bytes (``listing_digest``), what a quiet turn
# compares (a delta changes the listing by rows, so the saved bytes are the base's).
LISTING_SUM = "listing_sum"


def listing_digest(listing: bytes) -> str:
    """The digest a quiet turn compares its listing's bytes by."""
    from ..digests import blake2b

    return blake2b(listing, digest_size=16).hexdigest()


def patched(blob: bytes | None, removed: bytes, added: bytes) -> bytes:
    """A base posting with a patch applied: ``removed`` slots out, ``added`` pairs in."""
    from array import array

    from .index import _find_slot

    posting = array("i")
    if blob:
        posting.frombytes(blob)
    out = array("i")
    out.frombytes(removed)
    if len(out) > 64:  # many: one pass (posting order carries no meaning)
        gone = set(out)
        kept = array("i")
        for i in range(0, len(posting), 2):
            if posting[i] not in gone:
                kept.append(posting[i])
                kept.append(posting[i + 1])
        posting = kept
    else:
        for slot in out:
            at = _find_slot(posting, slot)
            if at >= 0:
                del posting[at : at + 2]
    posting.frombytes(added)
    return posting.tobytes()


def with_slots(
    keys: list[str | None],
    arrays: list[bytes],
    size: int,
    rows: Iterable[tuple[int, str | None, bytes]],
) -> tuple[list[str | None], list[bytes]]:
    """Slot keys and per-slot arrays of ``size`` slots with changed slots' rows applied."""
    from .index import _PER_SLOT

    sizes = [array_itemsize(code) for _, code in _PER_SLOT]
    keys = list(keys) + [None] * (size - len(keys))
    buffers = [bytearray(blob) for blob in arrays]
    for buffer, width in zip(buffers, sizes, strict=True):
        if len(buffer) < size * width:
            buffer.extend(bytes(size * width - len(buffer)))
    for slot, key, vals in rows:
        if not 0 <= slot < size or len(vals) != sum(sizes):
            raise ValueError("malformed slot row")
        keys[slot] = key
        at = 0
        for buffer, width in zip(buffers, sizes, strict=True):
            buffer[slot * width : (slot + 1) * width] = vals[at : at + width]
            at += width
    return keys, [bytes(buffer) for buffer in buffers]


def array_itemsize(code: str) -> int:
    """Bytes per item of an ``array`` typecode."""
    from array import array

    return array(code).itemsize


def _usable(path: Path) -> bool:
    """A regular file of ours that nobody else may write (else: no state)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022:
        return False
    return not (hasattr(os, "getuid") and st.st_uid != os.getuid())


def _file_identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _identity_now(path: Path) -> tuple[int, int, int, int] | None:
    try:
        return _file_identity(os.stat(path))
    except OSError:
        return None


def _uri(path: Path, mode: str) -> str:
    from urllib.parse import quote

    return f"file:{quote(str(path), safe='/')}?mode={mode}"


def delta_path(path: Path) -> Path:
    """The delta beside a base state file."""
    return path.with_name(path.name + ".delta")


class Seen(NamedTuple):
    """What a reader opened: the base's identity and token, the delta file's identity (``None``:
    there was none) and whether that delta applied to this base."""

    base: tuple[int, ...]
    token: str | None
    delta: tuple[int, ...] | None
    applied: bool


# A delta larger than this share of its base (and than DELTA_FLOOR bytes) is folded into a
# whole write: each change copies the delta, so it must stay small beside the base.
DELTA_SHARE = 4
DELTA_FLOOR = 16 << 20
# A process that read every fact (``write_changes``) folds a delta past this share of its base
# (and this many bytes) at once: it paid O(store) already, and each later change copies it.
FOLD_AFTER_READ_SHARE = 64
FOLD_AFTER_READ_FLOOR = 1 << 20


def _open_immutable(path: Path) -> tuple[sqlite3.Connection, tuple[int, int, int, int]] | None:
    before = _identity_now(path)
    if before is None:
        return None
    # Immutable: a reader never creates -wal/-shm files or takes a lock; a writer replaces
    # the whole file (rename), so an open reader keeps its own old copy.
    db = sqlite3.connect(_uri(path, "ro&immutable=1"), uri=True, check_same_thread=False)
    try:
        db.execute("SELECT count(*) FROM meta").fetchone()
        if _identity_now(path) != before:
            raise sqlite3.OperationalError("replaced while opening")
    except sqlite3.Error:
        db.close()
        raise
    return db, before


class StateFile:
    """Read and replace one workspace's saved recall state (base and delta)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.delta = delta_path(path)

    def open(self) -> StateReader | None:
        """A reader over the saved state (open until closed), or ``None`` when none to trust."""
        if not _usable(self.path):
            return None
        try:
            opened = _open_immutable(self.path)
            if opened is None:
                return None
            db, identity = opened
        except (OSError, sqlite3.Error):
            return None
        token = None
        delta: sqlite3.Connection | None = None
        delta_identity: tuple[int, ...] | None = None
        try:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (TOKEN,)).fetchone()
            token = None if row is None else marshal.loads(row[0])
            if _usable(self.delta):
                try:
                    found = _open_immutable(self.delta)
                except (OSError, sqlite3.Error):
                    found = None
                if found is not None:
                    delta, delta_identity = found
                    row = delta.execute("SELECT value FROM meta WHERE key = ?", (BASE,)).fetchone()
                    if token is None or row is None or marshal.loads(row[0]) != token:
                        delta.close()  # for another base: ignored (a later write replaces it)
                        delta = None
            elif self.delta.exists() or self.delta.is_symlink():
                delta_identity = (-1,)  # present but not ours: never replaced as if absent
        except (OSError, sqlite3.Error, EOFError, ValueError, TypeError):
            db.close()
            if delta is not None:
                delta.close()
            return None
        seen = Seen(identity, token if isinstance(token, str) else None, delta_identity,
                    delta is not None)
        return StateReader(db, identity, delta, seen)

    @contextlib.contextmanager
    def reading(self) -> Iterator[StateReader | None]:
        """``open`` for the length of a ``with`` block."""
        reader = self.open()
        try:
            yield reader
        finally:
            if reader is not None:
                reader.close()

    def write(
        self,
        meta: Mapping[str, Any],
        records: Mapping[str, tuple[Any, bytes]],
        indexes: Mapping[str, tuple[Any, ...]],
    ) -> bool:
        """Replace the saved state (temp file + rename); ``False`` when it could not be written.

        ``indexes`` maps a pool's name to ``SparseIndex.export()``'s tuple; ``meta[TABLES]``
        (optional) holds the keyed tables (``holders``).
        """
        from ..filemodes import make_private_dirs

        try:
            make_private_dirs(self.path.parent)
        except OSError:
            return False
        tables = dict(meta.get(TABLES) or {})
        values = {key: value for key, value in meta.items() if key != TABLES}
        values[TOKEN] = os.urandom(16).hex()

        def fill(db: sqlite3.Connection) -> None:
            for statement in _DDL:
                db.execute(statement)
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [(key, marshal.dumps(value)) for key, value in values.items()],
            )
            db.executemany(
                "INSERT INTO records VALUES (?, ?, ?)",
                [(ref, marshal.dumps(identity), blob) for ref, (identity, blob) in records.items()],
            )
            for name, (keys, free, terms, blobs, arrays, total) in indexes.items():
                db.execute(
                    "INSERT INTO indexes VALUES (?, ?, ?, ?, ?)",
                    (name, marshal.dumps(keys), marshal.dumps(free), marshal.dumps(arrays),
                     total),
                )
                db.executemany(
                    "INSERT INTO postings VALUES (?, ?, ?)",
                    [(name, term, blob) for term, blob in zip(terms, blobs, strict=True)],
                )
            db.executemany(
                "INSERT INTO holders VALUES (?, ?)", list(dict(tables.get("holders", {})).items())
            )
            db.executemany(
                "INSERT INTO tracker VALUES (?, ?, ?)",
                [(kind, key, value) for (kind, key), value in tables.get("tracker", {}).items()],
            )
            db.executemany(
                "INSERT INTO marks VALUES (?, ?, ?)",
                [(key, rev, ref) for key, (rev, ref) in tables.get("marks", {}).items()],
            )
            _listing_rows(db, "main", values.get("listing"))

        # The old delta names the old token: unlinked first, it never meets the new base.
        with contextlib.suppress(OSError):
            os.unlink(self.delta)
        return self._replace(self.path, None, fill)

    def write_changes(
        self,
        base: Mapping[str, Any],
        meta: Mapping[str, Any],
        records: Mapping[str, tuple[Any, bytes]],
        indexes: Mapping[str, tuple[Any, ...]],
    ) -> bool:
        """``write``, as the rows that differ from ``base`` (the document read from this file).

        Only the changed records, postings and keyed rows (and the small per-pool rows and
        ``meta``) go into the delta: after one changed fact, a few rows instead of every
        posting and record. A state replaced since ``base`` was read is written whole.
        """
        old_records = base.get("facts")
        old_indexes = base.get("indexes")
        seen = base.get("file")
        if (
            not isinstance(old_records, dict)
            or not isinstance(old_indexes, dict)
            or not isinstance(seen, Seen)
        ):
            return self.write(meta, records, indexes)
        changes = Changes()
        changes.meta.update((key, value) for key, value in meta.items() if key != TABLES)
        for ref, (identity, blob) in records.items():
            if old_records.get(ref) != (identity, blob):
                changes.records[ref] = (identity, blob)
        for ref in old_records:
            if ref not in records:
                changes.records[ref] = None
        for name, (keys, free, terms, blobs, arrays, total) in indexes.items():
            changes.indexes[name] = (keys, free, arrays, total)
            old = old_indexes.get(name)
            before = dict(zip(old[2], old[3], strict=True)) if old else {}
            now = dict(zip(terms, blobs, strict=True))
            for term, blob in now.items():
                if before.get(term) != blob:
                    changes.postings[(name, term)] = blob
            for term in before:
                if term not in now:
                    changes.postings[(name, term)] = None
        old_tables = base.get(TABLES) or {}
        for table, rows in dict(meta.get(TABLES) or {}).items():
            previous = dict(old_tables.get(table, {}))
            targets: dict[str, dict[Any, Any]] = {
                "holders": changes.holders, "tracker": changes.tracker, "marks": changes.marks
            }
            out = targets[table]
            for key, value in rows.items():
                was: Any = previous.get(key)
                if was != value and not (
                    # Rows of marshal bytes: equal values may differ in bytes (back-references
                    # follow reference counts, sets their hash order): compared decoded.
                    isinstance(was, bytes) and isinstance(value, bytes)
                    and marshal.loads(was) == marshal.loads(value)
                ):
                    out[key] = value
            for key in previous:
                if key not in rows:
                    out[key] = None
        if changes.size() > self._delta_room(seen):
            return self.write(meta, records, indexes)  # a large share changed: whole
        # This process read every fact already: a delta grown past a small share of the base
        # is folded now, so the cold turns after it copy a small delta, not this one's rows.
        written = self.write_delta(seen, changes, fold_past=self._read_room(seen))
        if written is None:
            return self.write(meta, records, indexes)  # replaced meanwhile, or too big: whole
        return written

    def write_delta(
        self, seen: Seen, changes: Changes, fold_past: int | None = None
    ) -> bool | None:
        """Add ``changes`` to the delta of the base ``seen`` was read from (copy + rename).

        ``None`` when the base or the delta is no longer the one read (another process saved
        its state: nothing is mixed) or the base had no token: the caller writes the state
        whole or leaves it to the next process. ``False``: the write failed. A delta grown past
        its room (``fold_past`` bytes when given) is then folded into a new base (``_fold``).
        """
        if seen.token is None or _identity_now(self.path) != tuple(seen.base):
            return None
        # The delta must still be the file read (or still absent); a stale one (for another
        # base) is replaced, not built on.
        if _identity_now(self.delta) != (None if seen.delta is None else tuple(seen.delta)):
            return None
        current = int(seen.delta[2]) if seen.applied and seen.delta else 0
        room = self._delta_room(seen) if fold_past is None else fold_past
        fold = current + changes.size() > room
        token = seen.token

        def edit(db: sqlite3.Connection) -> None:
            if not seen.applied:
                for statement in _DDL:
                    db.execute(statement)
            db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [(key, marshal.dumps(value)) for key, value in
                 {**changes.meta, BASE: token}.items()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO records VALUES (?, ?, ?)",
                [(ref, None, None) if row is None else (ref, marshal.dumps(row[0]), row[1])
                 for ref, row in changes.records.items()],
            )
            # A whole row supersedes the delta's finer rows of the same thing.
            db.executemany(
                "INSERT OR REPLACE INTO indexes VALUES (?, ?, ?, ?, ?)",
                [(name, marshal.dumps(keys), marshal.dumps(free), marshal.dumps(arrays), total)
                 for name, (keys, free, arrays, total) in changes.indexes.items()],
            )
            for name in changes.indexes:
                db.execute("DELETE FROM pools WHERE name = ?", (name,))
                db.execute("DELETE FROM slots WHERE name = ?", (name,))
            db.executemany(
                "INSERT OR REPLACE INTO pools VALUES (?, ?, ?, ?)",
                [(name, marshal.dumps(free), total, size)
                 for name, (free, total, size) in changes.pools.items()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO slots VALUES (?, ?, ?, ?)",
                [(name, slot, key, vals) for (name, slot), (key, vals) in changes.slots.items()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO postings VALUES (?, ?, ?)",
                [(name, term, blob) for (name, term), blob in changes.postings.items()],
            )
            if seen.applied:
                db.executemany(
                    "DELETE FROM patches WHERE name = ? AND term = ?", list(changes.postings)
                )
            db.executemany(
                "INSERT OR REPLACE INTO patches VALUES (?, ?, ?, ?)",
                [(name, term, removed, added)
                 for (name, term), (removed, added) in changes.patches.items()],
            )
            if "listing" in changes.meta:
                db.execute("DELETE FROM listing")  # a whole listing: rows over it start anew
            db.executemany(
                "INSERT OR REPLACE INTO listing VALUES (?, ?, ?)",
                [(scope, name, None if identity is None else marshal.dumps(identity))
                 for (scope, name), identity in changes.listing.items()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO holders VALUES (?, ?)", list(changes.holders.items())
            )
            db.executemany(
                "INSERT OR REPLACE INTO tracker VALUES (?, ?, ?)",
                [(kind, key, value) for (kind, key), value in changes.tracker.items()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO marks VALUES (?, ?, ?)",
                [(key, None, None) if row is None else (key, row[0], row[1])
                 for key, row in changes.marks.items()],
            )

        def still() -> bool:
            return _identity_now(self.path) == tuple(seen.base)

        copy_of = tuple(seen.delta) if seen.applied and seen.delta else None
        if not self._replace(self.delta, copy_of, edit, still):
            return False
        if fold:
            # Then the delta into a new base, once per many changes. After the changes went in:
            # a patch is over the base it was made against. A fold that fails leaves the delta.
            written = _identity_now(self.delta)
            if written is not None:
                self._fold(Seen(tuple(seen.base), token, written, True))
        return True

    @staticmethod
    def _delta_room(seen: Seen) -> int:
        """How many bytes the delta of the base ``seen`` may grow to before it is folded."""
        size = int(seen.base[2]) if len(seen.base) > 2 else 0
        return max(DELTA_FLOOR, size // DELTA_SHARE)

    def _fold(self, seen: Seen) -> Seen | None:
        """A copy of the base with the delta's rows applied, under a new token, renamed over
        the base; the delta is then removed. ``None`` when either file moved meanwhile."""
        assert seen.delta is not None
        token = os.urandom(16).hex()
        tmp = ""
        try:
            with open(self.path, "rb") as source:
                if _file_identity(os.fstat(source.fileno())) != tuple(seen.base):
                    return None
                fd, tmp = open_private_temp(self.path)
                _copy(source.fileno(), fd)
            db = sqlite3.connect(tmp, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=OFF")
                db.execute("PRAGMA synchronous=OFF")
                db.execute("ATTACH DATABASE ? AS d", (str(self.delta),))
                if _identity_now(self.delta) != tuple(seen.delta):
                    raise OSError("delta replaced meanwhile")
                db.execute("BEGIN")
                for table, key, value in (("records", "reference", "record"),
                                          ("postings", "(name, term)", "pairs"),
                                          ("holders", "key", "ids"),
                                          ("tracker", "(kind, key)", "value"),
                                          ("marks", "id", "reference")):
                    db.execute(
                        f"DELETE FROM main.{table} WHERE {key} IN"
                        f" (SELECT {key.strip('()')} FROM d.{table} WHERE {value} IS NULL)"
                    )
                    db.execute(
                        f"INSERT OR REPLACE INTO main.{table}"
                        f" SELECT * FROM d.{table} WHERE {value} IS NOT NULL"
                    )
                _fold_patches(db)
                db.execute("INSERT OR REPLACE INTO main.meta SELECT * FROM d.meta WHERE key != ?",
                           (BASE,))
                _fold_listing(db)
                db.execute("INSERT OR REPLACE INTO main.meta VALUES (?, ?)",
                           (TOKEN, marshal.dumps(token)))
                db.execute("COMMIT")
                db.execute("DETACH DATABASE d")
            finally:
                db.close()
            if _identity_now(self.path) != tuple(seen.base):
                raise OSError("replaced meanwhile")
            os.replace(tmp, self.path)
            tmp = ""
            with contextlib.suppress(OSError):
                os.unlink(self.delta)
            base = _identity_now(self.path)
            if base is None:
                return None
            return Seen(base, token, None, False)
        except (OSError, sqlite3.Error, ValueError, TypeError):
            if tmp:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            return None

    def _replace(
        self,
        target: Path,
        copy_of: tuple[int, ...] | None,
        edit: Callable[[sqlite3.Connection], None],
        still: Callable[[], bool] = lambda: True,
    ) -> bool:
        """Build a temp file — empty (``copy_of`` None) or a copy of ``target`` when it still
        has the identity ``copy_of`` — run ``edit`` in one transaction, rename it over
        ``target`` (when ``still()`` holds just before)."""
        tmp = ""
        try:
            if copy_of is None:
                fd, tmp = open_private_temp(target)
                os.close(fd)
            else:
                with open(target, "rb") as source:
                    if _file_identity(os.fstat(source.fileno())) != copy_of:
                        return False
                    fd, tmp = open_private_temp(target)
                    _copy(source.fileno(), fd)
            db = sqlite3.connect(tmp, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=OFF")
                db.execute("PRAGMA synchronous=OFF")  # a derived file: a torn one is rebuilt
                db.execute("BEGIN")
                edit(db)
                db.execute("COMMIT")
            finally:
                db.close()
            if not still():
                raise OSError("replaced meanwhile")
            os.replace(tmp, target)
            return True
        except (OSError, sqlite3.Error, ValueError, TypeError):
            if tmp:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            return False

    def update_meta(self, values: Mapping[str, Any], seen: Seen | None) -> bool:
        """Replace some ``meta`` values, in the delta (readers hold both files open as
        immutable, so neither is changed in place). ``seen``: what the values were read from;
        a state replaced since is left alone (``False``)."""
        if not isinstance(seen, Seen):
            return False
        changes = Changes()
        changes.meta.update(values)
        # A whole listing comes from a process that read every fact (recall/persist.py): it
        # folds a delta grown past a small share at once, as ``write_changes`` does.
        small = self._read_room(seen) if "listing" in values else None
        return bool(self.write_delta(seen, changes, fold_past=small))

    @staticmethod
    def _read_room(seen: Seen) -> int:
        """How large a delta a process that read every fact leaves unfolded."""
        size = int(seen.base[2]) if len(seen.base) > 2 else 0
        return max(FOLD_AFTER_READ_FLOOR, size // FOLD_AFTER_READ_SHARE)


def _copy(source: int, fd: int) -> None:
    """The whole of file ``source`` into the new file ``fd`` (then closed): in the kernel
    where it can (``copy_file_range``), with no ``shutil`` (bz2, lzma) to import."""
    in_kernel = getattr(os, "copy_file_range", None)  # Linux only
    try:
        if in_kernel is not None:
            # Offsets move with each copy: whatever is left (a refusal, or a file system
            # answering 0 before the end) is read and written below (facts/fs.py's rule).
            with contextlib.suppress(OSError):
                while in_kernel(source, fd, 1 << 30):
                    pass
        while chunk := os.read(source, 1 << 20):
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _fold_patches(db: sqlite3.Connection) -> None:
    """Into ``main`` (a base being folded, the delta attached as ``d``): the pools' slot rows
    and the postings' patches, applied to the base's values (whole delta postings are in)."""
    names = {name for (name,) in db.execute("SELECT name FROM d.indexes")}
    names.update(name for (name,) in db.execute("SELECT name FROM d.pools"))
    for name in sorted(names):
        keys, free, arrays, total = _index_of(_Schema(db, "main"), _Schema(db, "d"), name)
        db.execute(
            "INSERT OR REPLACE INTO main.indexes VALUES (?, ?, ?, ?, ?)",
            (name, marshal.dumps(keys), marshal.dumps(free), marshal.dumps(arrays), total),
        )
    for name, term, removed, added in db.execute(
        "SELECT name, term, removed, added FROM d.patches"
    ).fetchall():
        row = db.execute(
            "SELECT pairs FROM main.postings WHERE name = ? AND term = ?", (name, term)
        ).fetchone()
        blob = patched(None if row is None else row[0], bytes(removed), bytes(added))
        if blob:
            db.execute("INSERT OR REPLACE INTO main.postings VALUES (?, ?, ?)", (name, term, blob))
        else:
            db.execute("DELETE FROM main.postings WHERE name = ? AND term = ?", (name, term))


def _fold_listing(db: sqlite3.Connection) -> None:
    """The delta's listing rows into ``main``'s ``meta`` listing (its digest came with meta),
    and ``main``'s listing rows made that listing's again."""
    from .saved_listing import folded

    rows = db.execute("SELECT scope, name, identity FROM d.listing").fetchall()
    whole = db.execute("SELECT 1 FROM d.meta WHERE key = 'listing'").fetchone() is not None
    if not rows and not whole:
        return
    found = db.execute("SELECT value FROM main.meta WHERE key = 'listing'").fetchone()
    packed = None if found is None else marshal.loads(found[0])
    if packed is not None and rows:
        packed = folded(packed, [
            (int(scope), str(name), None if identity is None else marshal.loads(identity))
            for scope, name, identity in rows
        ])
        db.execute("INSERT OR REPLACE INTO main.meta VALUES ('listing', ?)",
                   (marshal.dumps(packed),))
    db.execute("DELETE FROM main.listing")
    _listing_rows(db, "main", packed)


def _listing_rows(db: sqlite3.Connection, schema: str, packed: object) -> None:
    """One ``listing`` row per file of a packed listing (a base's, beside its ``meta`` blob):
    a cold turn after a change looks its few names up instead of decoding every entry."""
    from .saved_listing import SavedListing

    try:
        listings = SavedListing(packed).dicts()  # type: ignore[arg-type]  # reason: checked there
    except (TypeError, ValueError):
        return  # none kept, or not a listing: ``listed`` then reads the packed one (or fails)
    db.executemany(
        f"INSERT INTO {schema}.listing VALUES (?, ?, ?)",
        [(si, name, marshal.dumps(identity))
         for si, files in enumerate(listings) for name, identity in files.items()],
    )


class _Schema:
    """One attached database of a connection, answering ``execute`` as its own connection
    would (table names qualified): ``_index_of`` over a base and delta being folded."""

    def __init__(self, db: sqlite3.Connection, schema: str) -> None:
        self._db = db
        self._schema = schema

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """``sql`` with its ``FROM <table>`` read from this schema."""
        return self._db.execute(sql.replace(" FROM ", f" FROM {self._schema}."), args)


class Changes:
    """Rows to put into a delta: ``None`` deletes a record, posting or keyed row."""

    def __init__(self) -> None:
        self.meta: dict[str, Any] = {}
        self.records: dict[str, tuple[Any, bytes] | None] = {}
        self.indexes: dict[str, tuple[Any, Any, Any, int]] = {}
        self.postings: dict[tuple[str, str], bytes | None] = {}
        self.holders: dict[str, bytes | None] = {}
        self.tracker: dict[tuple[str, str], bytes | None] = {}
        self.marks: dict[str, tuple[int, str] | None] = {}
        # (pool, term) → (removed slots, added pairs) as int32 bytes, over the base's posting.
        self.patches: dict[tuple[str, str], tuple[bytes, bytes]] = {}
        # pool → (free slots, total length, slot count); (pool, slot) → (key, per-slot values).
        self.pools: dict[str, tuple[list[int], int, int]] = {}
        self.slots: dict[tuple[str, int], tuple[str | None, bytes]] = {}
        # (scope index, file name) → identity (``None``: gone), over the ``meta`` listing.
        self.listing: dict[tuple[int, str], tuple[int, ...] | None] = {}

    def size(self) -> int:
        """About how many bytes these rows take."""
        total = sum(len(row[1]) for row in self.records.values() if row is not None)
        total += sum(len(r) + len(a) + 16 for r, a in self.patches.values())
        total += sum(8 * len(free) for free, _, _ in self.pools.values())
        total += sum(48 + len(vals) for _, vals in self.slots.values())
        total += 96 * len(self.listing)
        total += sum(len(marshal.dumps(value)) for value in self.meta.values())
        total += sum(len(blob) for blob in self.postings.values() if blob is not None)
        total += sum(len(blob) for blob in self.holders.values() if blob is not None)
        total += sum(len(blob) for blob in self.tracker.values() if blob is not None)
        total += 48 * len(self.marks)
        for keys, _, arrays, _ in self.indexes.values():
            total += 16 * len(keys) + sum(len(a) for a in arrays)
        return total


class StateReader:
    """One open saved state; every method raises ``sqlite3.Error`` or ``ValueError`` on bad data.

    Each lookup takes the delta's row when it has one (``NULL``: deleted), else the base's.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        identity: tuple[int, ...] = (),
        delta: sqlite3.Connection | None = None,
        seen: Seen | None = None,
    ) -> None:
        self.db = db
        self.delta = delta
        self.identity = identity  # (dev, ino, size, mtime_ns) of the base file opened
        self.seen = seen if seen is not None else Seen(tuple(identity), None, None, False)
        self._rows: bool | None = None  # whether ``listed`` may read the listing rows
        self._saved: SavedListing | None = None

    def close(self) -> None:
        """Close the files (lazy views over them stop working)."""
        self.db.close()
        if self.delta is not None:
            self.delta.close()

    def _one(self, sql: str, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """The delta's row for ``sql`` if it has one, else the base's."""
        if self.delta is not None:
            row = self.delta.execute(sql, args).fetchone()
            if row is not None:
                return tuple(row)
        row = self.db.execute(sql, args).fetchone()
        return None if row is None else tuple(row)

    def meta(self, *keys: str) -> dict[str, Any]:
        """The ``meta`` values of ``keys`` that exist (decoded)."""
        marks = ", ".join("?" * len(keys))
        sql = f"SELECT key, value FROM meta WHERE key IN ({marks})"
        found = {key: value for key, value in self.db.execute(sql, keys)}
        if self.delta is not None:
            found.update(self.delta.execute(sql, keys))
        return {key: marshal.loads(value) for key, value in found.items()}

    def index(self, name: str) -> tuple[list[str | None], list[int], list[bytes], int]:
        """Slot keys, free slots, per-slot array bytes and total length of one pool."""
        return _index_of(self.db, self.delta, name)

    def postings(self, name: str) -> PostingsView:
        """A read-only mapping term → posting bytes of one pool, fetched per term."""
        return PostingsView(self, name)

    def posting(self, name: str, term: str) -> tuple[bytes | None, tuple[bytes, bytes] | None]:
        """One term's posting (``None``: none) and, when it is the base's with the delta's
        patch applied, that patch (``(b"", b"")``: the base's as is; ``None``: a whole row)."""
        args = (name, term)
        patch: tuple[bytes, bytes] = (b"", b"")
        if self.delta is not None:
            row = self.delta.execute(
                "SELECT pairs FROM postings WHERE name = ? AND term = ?", args
            ).fetchone()
            if row is not None:
                return (None if row[0] is None else bytes(row[0])), None
            found = self.delta.execute(
                "SELECT removed, added FROM patches WHERE name = ? AND term = ?", args
            ).fetchone()
            if found is not None:
                patch = (bytes(found[0]), bytes(found[1]))
        row = self.db.execute(
            "SELECT pairs FROM postings WHERE name = ? AND term = ?", args
        ).fetchone()
        blob = None if row is None or row[0] is None else bytes(row[0])
        if patch != (b"", b""):
            blob = patched(blob, *patch) or None
        elif blob is None:
            return None, None  # absent: whatever it gets is a whole row
        return blob, patch

    def saved_listing(self) -> SavedListing | None:
        """The listing the state was saved under (the packed ``meta`` listing with the
        delta's rows over it), or ``None`` when it kept none."""
        from .saved_listing import SavedListing

        packed = self.meta("listing").get("listing")
        if packed is None:
            return None
        rows: list[Any] = []
        if self.delta is not None:
            rows = [
                (int(scope), str(name), None if identity is None else marshal.loads(identity))
                for scope, name, identity in self.delta.execute(
                    "SELECT scope, name, identity FROM listing"
                )
            ]
        return SavedListing(packed, rows)

    def listed(self, si: int, name: str) -> Identity | None:
        """The saved identity of one file (``None``: not listed then), from the listing rows:
        no decoding of the whole listing (``saved_listing``) unless the delta holds a whole
        listing of its own, or the base kept no rows (an empty store, or an older file)."""
        args = (si, name)
        sql = "SELECT identity FROM listing WHERE scope = ? AND name = ?"
        if self._rows is None:
            whole = self.delta is not None and self.delta.execute(
                "SELECT 1 FROM meta WHERE key = 'listing'").fetchone() is not None
            self._rows = not whole and self.db.execute("SELECT 1 FROM listing LIMIT 1").fetchone(
            ) is not None
        if not self._rows:
            if self._saved is None:
                self._saved = self.saved_listing()
                if self._saved is None:
                    raise ValueError("no saved listing")
            return self._saved.identity(si, name)
        row = None if self.delta is None else self.delta.execute(sql, args).fetchone()
        if row is None:
            row = self.db.execute(sql, args).fetchone()
            if row is None:
                return None
        identity = None if row[0] is None else marshal.loads(row[0])
        if identity is not None and not isinstance(identity, tuple):
            raise TypeError("malformed listing row")
        return identity

    def saved_listings(self) -> tuple[Listing, Listing] | None:
        """``saved_listing()`` as two dicts (decodes every entry)."""
        saved = self.saved_listing()
        return None if saved is None else saved.dicts()

    def record(self, reference: str) -> bytes | None:
        """The saved record of one fact."""
        row = self._one("SELECT record FROM records WHERE reference = ?", (reference,))
        return None if row is None or row[0] is None else bytes(row[0])

    def holders(self, key: str) -> bytes | None:
        """The saved holders of one equivalence key."""
        row = self._one("SELECT ids FROM holders WHERE key = ?", (key,))
        return None if row is None or row[0] is None else bytes(row[0])

    def tracker_row(self, kind: str, key: str) -> bytes | None:
        """One saved pool-table entry (``None``: none)."""
        row = self._one("SELECT value FROM tracker WHERE kind = ? AND key = ?", (kind, key))
        return None if row is None or row[0] is None else bytes(row[0])

    def mark(self, fact_id: str) -> tuple[int, str] | None:
        """The saved (revision, reference) of one fact id."""
        row = self._one("SELECT revision, reference FROM marks WHERE id = ?", (fact_id,))
        return None if row is None or row[1] is None else (int(row[0]), str(row[1]))

    def marks(self) -> list[tuple[str, int, str]]:
        """Every saved (id, revision, reference)."""
        rows = self._merged("SELECT id, revision, reference FROM marks")
        return [(str(i), int(rev), str(ref)) for i, (rev, ref) in rows.items()]

    def tracker_rows(self, kind: str) -> dict[str, bytes]:
        """Every saved entry of one pool table."""
        rows = self._merged("SELECT key, value FROM tracker WHERE kind = ?", (kind,))
        return {str(key): bytes(row[0]) for key, row in rows.items()}

    def _merged(self, sql: str, args: tuple[Any, ...] = ()) -> dict[Any, tuple[Any, ...]]:
        """Rows keyed by their first column, the delta's over the base's; deleted ones out."""
        rows = {row[0]: tuple(row[1:]) for row in self.db.execute(sql, args)}
        if self.delta is not None:
            for row in self.delta.execute(sql, args):
                if row[-1] is None:
                    rows.pop(row[0], None)
                else:
                    rows[row[0]] = tuple(row[1:])
        return rows

    def posting_rows(self, name: str) -> dict[str, bytes]:
        """Every posting of one pool (the delta's whole rows and patches applied)."""
        rows = {
            str(term): bytes(row[0])
            for term, row in self._merged(
                "SELECT term, pairs FROM postings WHERE name = ? ORDER BY term", (name,)
            ).items()
        }
        if self.delta is not None:
            for term, removed, added in self.delta.execute(
                "SELECT term, removed, added FROM patches WHERE name = ?", (name,)
            ).fetchall():
                blob = patched(rows.get(term), bytes(removed), bytes(added))
                if blob:
                    rows[term] = blob
                else:
                    rows.pop(term, None)
        return rows

    def records(self) -> list[tuple[str, bytes]]:
        """Every saved (reference, record)."""
        rows = self._merged("SELECT reference, record FROM records ORDER BY reference")
        return [(str(ref), bytes(row[0])) for ref, row in rows.items()]

    def document(self) -> dict[str, Any]:
        """Everything, in the shape ``recall/persist.py`` saves (for a full restore)."""
        meta = dict(self.meta("version", "code", "tracker", "failed", LISTING_SUM))
        records = {
            ref: (marshal.loads(identity), bytes(blob))
            for ref, (identity, blob) in self._merged(
                "SELECT reference, identity, record FROM records ORDER BY reference"
            ).items()
        }
        indexes: dict[str, tuple[object, ...]] = {}
        names = {name for (name,) in self.db.execute("SELECT name FROM indexes")}
        if self.delta is not None:
            names.update(name for (name,) in self.delta.execute("SELECT name FROM indexes"))
        for name in sorted(names):
            keys, free, arrays, total = self.index(name)
            posting = self.posting_rows(name)
            terms = sorted(posting)
            indexes[name] = (keys, free, terms, [posting[t] for t in terms], arrays, total)
        holders = {
            str(key): bytes(row[0])
            for key, row in self._merged("SELECT key, ids FROM holders ORDER BY key").items()
        }
        tracker = {
            (kind, key): value for kind in TRACKER_KINDS
            for key, value in self.tracker_rows(kind).items()
        }
        marks = {i: (rev, ref) for i, rev, ref in self.marks()}
        return {**meta, "facts": records, "indexes": indexes,
                TABLES: {"holders": holders, "tracker": tracker, "marks": marks},
                "file": self.seen}


class _Executes(Protocol):
    def execute(self, sql: str, args: tuple[Any, ...] = ..., /) -> sqlite3.Cursor: ...


def _index_of(
    base: _Executes, delta: _Executes | None, name: str
) -> tuple[list[str | None], list[int], list[bytes], int]:
    """One pool's slot keys, free slots, per-slot array bytes and total length: the delta's
    whole row or the base's, then the delta's pool row and changed slots over it."""
    sql = "SELECT keys, free, arrays, total FROM indexes WHERE name = ?"
    row = None if delta is None else delta.execute(sql, (name,)).fetchone()
    if row is None:
        row = base.execute(sql, (name,)).fetchone()
    if row is None:
        raise ValueError(f"no index {name}")
    keys, free, arrays = (marshal.loads(blob) for blob in row[:3])
    if not (isinstance(keys, list) and isinstance(free, list) and isinstance(arrays, list)):
        raise TypeError("malformed index state")
    total = int(row[3])
    pool = None
    if delta is not None:
        pool = delta.execute(
            "SELECT free, total, size FROM pools WHERE name = ?", (name,)
        ).fetchone()
    if pool is not None:
        free, total, size = marshal.loads(pool[0]), int(pool[1]), int(pool[2])
        if not isinstance(free, list) or size < len(keys):
            raise TypeError("malformed pool row")
        assert delta is not None
        rows = delta.execute("SELECT slot, key, vals FROM slots WHERE name = ?", (name,))
        keys, arrays = with_slots(keys, arrays, size, ((int(a), b, bytes(c)) for a, b, c in rows))
    return keys, free, arrays, total


class PostingsView(Mapping[str, bytes]):
    """Term → posting bytes of one pool, straight from the saved state (looked up per term)."""

    def __init__(self, reader: StateReader, name: str) -> None:
        self._reader = reader
        self._name = name
        # Per term looked up: the delta's patch over the base's posting it was served with,
        # ``None`` when it came whole (or not at all): what a later patch builds on.
        self.origin: dict[str, tuple[bytes, bytes] | None] = {}

    def __getitem__(self, term: str) -> bytes:
        blob, patch = self._reader.posting(self._name, term)
        self.origin[term] = patch
        if blob is None:
            raise KeyError(term)
        if len(blob) % 4:
            raise ValueError("malformed posting")
        return blob

    def delta_rows(
        self, terms: Iterable[str]
    ) -> dict[str, tuple[bytes | None, tuple[bytes, bytes] | None]]:
        """What the delta holds for each of ``terms`` that it has a row of: (its whole posting
        — ``None``: deleted —, ``None``) or (``None``, its patch over the base's posting).
        One query per table for all of them (a change's terms, never their base postings)."""
        delta = self._reader.delta
        wanted = list(terms)
        out: dict[str, tuple[bytes | None, tuple[bytes, bytes] | None]] = {}
        if delta is None or not wanted:
            return out
        for at in range(0, len(wanted), 500):  # SQLite's host-parameter limit
            part = wanted[at : at + 500]
            marks = ", ".join("?" * len(part))
            for term, removed, added in delta.execute(
                f"SELECT term, removed, added FROM patches WHERE name = ? AND term IN ({marks})",
                (self._name, *part),
            ):
                out[str(term)] = (None, (bytes(removed), bytes(added)))
            for term, pairs in delta.execute(
                f"SELECT term, pairs FROM postings WHERE name = ? AND term IN ({marks})",
                (self._name, *part),
            ):
                out[str(term)] = (None if pairs is None else bytes(pairs), None)  # whole wins
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._reader.posting_rows(self._name)))

    def __len__(self) -> int:
        if self._reader.delta is None:
            row = self._reader.db.execute(
                "SELECT count(*) FROM postings WHERE name = ?", (self._name,)
            ).fetchone()
            return int(row[0])
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return True  # "still frozen": every change first copies the postings out (_thaw)
