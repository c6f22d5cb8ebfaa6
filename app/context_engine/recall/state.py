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
per-slot arrays, total length) and ``postings`` (pool, term → interleaved ``(slot, tf)``
int32 pairs). Anything wrong with the file (missing, foreign owner, writable by others,
corrupt, another version or code) reads as "no state"; a write replaces it whole in one
transaction, and a failed write only costs the next process a rebuild.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..filemodes import open_private_temp

SCHEMA = 2
_DDL = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID",
    "CREATE TABLE records (reference TEXT PRIMARY KEY, identity BLOB, record BLOB)"
    " WITHOUT ROWID",
    "CREATE TABLE indexes (name TEXT PRIMARY KEY, keys BLOB, free BLOB, arrays BLOB,"
    " total INTEGER) WITHOUT ROWID",
    "CREATE TABLE postings (name TEXT, term TEXT, pairs BLOB, PRIMARY KEY (name, term))"
    " WITHOUT ROWID",
)


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


def _uri(path: Path, mode: str) -> str:
    from urllib.parse import quote

    return f"file:{quote(str(path), safe='/')}?mode={mode}"


class StateFile:
    """Read and replace one workspace's saved recall state."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def open(self) -> StateReader | None:
        """A reader over the saved state (open until closed), or ``None`` when none to trust."""
        if not _usable(self.path):
            return None
        try:
            before = _file_identity(os.stat(self.path))
            # Immutable: a reader never creates -wal/-shm files or takes a lock; a writer
            # replaces the whole file (rename), so an open reader keeps its own old copy.
            db = sqlite3.connect(_uri(self.path, "ro&immutable=1"), uri=True,
                                 check_same_thread=False)
            db.execute("SELECT count(*) FROM meta").fetchone()
            if _file_identity(os.stat(self.path)) != before:
                db.close()  # replaced while opening: which one is open is unknown
                return None
        except (OSError, sqlite3.Error):
            return None
        return StateReader(db, before)

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

        ``indexes`` maps a pool's name to ``SparseIndex.export()``'s tuple.
        """
        from ..filemodes import make_private_dirs

        try:
            make_private_dirs(self.path.parent)
        except OSError:
            return False

        def fill(db: sqlite3.Connection) -> None:
            for statement in _DDL:
                db.execute(statement)
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [(key, marshal.dumps(value)) for key, value in meta.items()],
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

        return self._replace(None, fill)

    def write_changes(
        self,
        base: Mapping[str, Any],
        meta: Mapping[str, Any],
        records: Mapping[str, tuple[Any, bytes]],
        indexes: Mapping[str, tuple[Any, ...]],
    ) -> bool:
        """``write``, as the rows that differ from ``base`` (the document read from this file).

        A copy of the file gets only the changed records and postings (and the small per-pool
        rows and ``meta``) and is renamed over it: after one changed fact, a few rows instead
        of every posting and record.
        """
        old_records = base.get("facts")
        old_indexes = base.get("indexes")
        if not isinstance(old_records, dict) or not isinstance(old_indexes, dict):
            return self.write(meta, records, indexes)

        def changes(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [(key, marshal.dumps(value)) for key, value in meta.items()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO records VALUES (?, ?, ?)",
                [(ref, marshal.dumps(identity), blob)
                 for ref, (identity, blob) in records.items()
                 if old_records.get(ref) != (identity, blob)],
            )
            db.executemany(
                "DELETE FROM records WHERE reference = ?",
                [(ref,) for ref in old_records if ref not in records],
            )
            for name, (keys, free, terms, blobs, arrays, total) in indexes.items():
                db.execute(
                    "INSERT OR REPLACE INTO indexes VALUES (?, ?, ?, ?, ?)",
                    (name, marshal.dumps(keys), marshal.dumps(free), marshal.dumps(arrays),
                     total),
                )
                old = old_indexes.get(name)
                before = dict(zip(old[2], old[3], strict=True)) if old else {}
                now = dict(zip(terms, blobs, strict=True))
                db.executemany(
                    "INSERT OR REPLACE INTO postings VALUES (?, ?, ?)",
                    [(name, term, blob) for term, blob in now.items()
                     if before.get(term) != blob],
                )
                db.executemany(
                    "DELETE FROM postings WHERE name = ? AND term = ?",
                    [(name, term) for term in before if term not in now],
                )

        if not self._edit_copy(changes, tuple(base.get("file", ()))):
            return self.write(meta, records, indexes)  # replaced meanwhile: write it whole
        return True

    def _edit_copy(
        self, edit: Callable[[sqlite3.Connection], None], expected: tuple[int, ...] | None = None
    ) -> bool:
        """Apply ``edit`` to a copy of the file in one transaction, then rename it over.

        ``expected``: the identity the file had when read; a file replaced since (another
        process saved its state) is not edited (``False``), so no state mixes two writers.
        """
        if not _usable(self.path):
            return False
        return self._replace(expected or (), edit)

    def _replace(
        self, copy_of: tuple[int, ...] | None, edit: Callable[[sqlite3.Connection], None]
    ) -> bool:
        """Build a temp file — empty (``copy_of`` None) or a copy of the file, when it still
        has the identity ``copy_of`` (``()``: any) — run ``edit`` in one transaction, rename."""
        import shutil

        tmp = ""
        try:
            if copy_of is None:
                fd, tmp = open_private_temp(self.path)
                os.close(fd)
            else:
                with open(self.path, "rb") as source:
                    if copy_of and _file_identity(os.fstat(source.fileno())) != copy_of:
                        return False
                    fd, tmp = open_private_temp(self.path)
                    with os.fdopen(fd, "wb") as target:
                        shutil.copyfileobj(source, target, 1 << 20)
            db = sqlite3.connect(tmp, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=OFF")
                db.execute("PRAGMA synchronous=OFF")  # a derived file: a torn one is rebuilt
                db.execute("BEGIN")
                edit(db)
                db.execute("COMMIT")
            finally:
                db.close()
            os.replace(tmp, self.path)
            return True
        except (OSError, sqlite3.Error, ValueError, TypeError):
            if tmp:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            return False

    def update_meta(
        self, values: Mapping[str, Any], expected: tuple[int, ...] | None = None
    ) -> bool:
        """Replace some ``meta`` values: a copy of the file changed and renamed over it.

        Readers hold the old file open as immutable, so it is never changed in place; a copy
        costs a fraction of writing every posting again. ``expected``: see ``_edit_copy``.
        """
        def changes(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [(key, marshal.dumps(value)) for key, value in values.items()],
            )

        return self._edit_copy(changes, expected)


class StateReader:
    """One open saved state; every method raises ``sqlite3.Error`` or ``ValueError`` on bad data."""

    def __init__(self, db: sqlite3.Connection, identity: tuple[int, ...] = ()) -> None:
        self.db = db
        self.identity = identity  # (dev, ino, size, mtime_ns) of the file opened

    def close(self) -> None:
        """Close the file (lazy views over it stop working)."""
        self.db.close()

    def meta(self, *keys: str) -> dict[str, Any]:
        """The ``meta`` values of ``keys`` that exist (decoded)."""
        marks = ", ".join("?" * len(keys))
        rows = self.db.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", keys)
        return {key: marshal.loads(value) for key, value in rows}

    def index(self, name: str) -> tuple[list[str | None], list[int], list[bytes], int]:
        """Slot keys, free slots, per-slot array bytes and total length of one pool."""
        row = self.db.execute(
            "SELECT keys, free, arrays, total FROM indexes WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            raise ValueError(f"no index {name}")
        keys, free, arrays = (marshal.loads(blob) for blob in row[:3])
        if not (isinstance(keys, list) and isinstance(free, list) and isinstance(arrays, list)):
            raise TypeError("malformed index state")
        return keys, free, arrays, int(row[3])

    def postings(self, name: str) -> PostingsView:
        """A read-only mapping term → posting bytes of one pool, fetched per term."""
        return PostingsView(self.db, name)

    def record(self, reference: str) -> bytes | None:
        """The saved record of one fact."""
        row = self.db.execute(
            "SELECT record FROM records WHERE reference = ?", (reference,)
        ).fetchone()
        return None if row is None else bytes(row[0])

    def records(self) -> list[tuple[str, bytes]]:
        """Every saved (reference, record)."""
        rows = self.db.execute("SELECT reference, record FROM records").fetchall()
        return [(str(ref), bytes(blob)) for ref, blob in rows]

    def document(self) -> dict[str, Any]:
        """Everything, in the shape ``recall/persist.py`` saves (for a full restore)."""
        meta = dict(self.meta("version", "code", "tracker", "failed", "listing"))
        records = {
            ref: (marshal.loads(identity), bytes(blob))
            for ref, identity, blob in self.db.execute("SELECT * FROM records")
        }
        indexes: dict[str, tuple[object, ...]] = {}
        for (name,) in self.db.execute("SELECT name FROM indexes").fetchall():
            keys, free, arrays, total = self.index(name)
            rows = self.db.execute(
                "SELECT term, pairs FROM postings WHERE name = ?", (name,)
            ).fetchall()
            indexes[name] = (keys, free, [t for t, _ in rows], [bytes(b) for _, b in rows],
                             arrays, total)
        return {**meta, "facts": records, "indexes": indexes, "file": self.identity}


class PostingsView(Mapping[str, bytes]):
    """Term → posting bytes of one pool, straight from the saved state (looked up per term)."""

    def __init__(self, db: sqlite3.Connection, name: str) -> None:
        self._db = db
        self._name = name

    def __getitem__(self, term: str) -> bytes:
        row = self._db.execute(
            "SELECT pairs FROM postings WHERE name = ? AND term = ?", (self._name, term)
        ).fetchone()
        if row is None:
            raise KeyError(term)
        blob = bytes(row[0])
        if len(blob) % 4:
            raise ValueError("malformed posting")
        return blob

    def __iter__(self) -> Iterator[str]:
        rows = self._db.execute("SELECT term FROM postings WHERE name = ?", (self._name,))
        return iter([term for (term,) in rows])

    def __len__(self) -> int:
        row = self._db.execute(
            "SELECT count(*) FROM postings WHERE name = ?", (self._name,)
        ).fetchone()
        return int(row[0])

    def __bool__(self) -> bool:
        return True  # "still frozen": every change first copies the postings out (_thaw)
