"""The derived, seekable index of one store: SQLite (stdlib, WAL) in the state root (S2.4, S2.6).

The fact files stay the truth. The index keeps, per fact file, its lstat identity (device,
inode, size, mtime, ctime, mode), the moment that identity was checked, and the parse result
(every field of the fact, or the diagnostic), so a cold process rebuilds its view of a store
from one query instead of reading and parsing every file.

A row is trusted only when the file's identity now equals the recorded one *and* that identity
had settled (mtime and ctime older than ``checked_ns - RACY_NS``) when it was recorded — git's
racy-timestamp rule: an edit inside one timestamp tick of the recording could otherwise hide
behind an equal stamp. ctime cannot be set back, so an in-place, same-size edit with the mtime
restored still shows. Every other file is read and parsed, and its row replaced.

Anything wrong with the index file (missing, truncated, garbage, another schema or codec, a
foreign owner, a writable-by-others mode, a busy writer) only costs a rebuild: the caller parses
the files as it would without an index. ``create=False`` never makes the file (a read-only
command on a home without an index writes nothing); an existing one is kept up to date. On a
read-only medium the index is read as it is, or not at all.

The store monitor (``monitor/``) can vouch for the rows without a walk: a one-row ``watch``
table holds a generation that SQL triggers bump on every row written or removed, and the
monitor token the rows were last validated at, with the generation of that validation. The
rows are vouched for only while both generations are equal (``Watch.valid``); see
``facts/watched.py`` and ``update``'s ``seen``/``token``.
"""

from __future__ import annotations

import contextlib
import functools
import marshal
import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..digests import blake2b
from ..records import record
from . import rendered
from .model import Diagnostic, Fact, FileStamp, ParsedFact, Scope
from .stat_listing import RACY_NS as RACY_NS  # one rule for every reader

if TYPE_CHECKING:
    from ..paths import EnginePaths
    from .watched import Look

SCHEMA = 2  # 2: the ``watch`` table and its triggers; ``files_table``, the app's table rows
# A row's printed form is most of a fact (bodies run to 1,500 characters): on 4 KiB pages most
# rows of the listing index spill to overflow pages, one read each (28,000 ``pread`` calls for
# ``list --json`` at 100k); on 16 KiB pages the same listing costs ~15 % less CPU
# (docs/decisions.md, "The derived index's page size").
PAGE_SIZE = 16_384
# The file keeps its name across schema versions: an existing index of another schema (``meta``)
# is emptied and refilled by the next command, a read-only one included — under a new name,
# read-only commands would parse every file until a writer or a hook made the new file.
FILE_VERSION = 1
# (dev, ino, size, mtime_ns, ctime_ns, mode): what a row is validated against.
Identity = tuple[int, int, int, int, int, int]
Item = ParsedFact | Diagnostic
# Above this many names, one full scan of the table beats a lookup per name.
_BULK = 64
# Rows written through one connection from which its close repacks the listing's indexes.
_PACK_FROM = 4096

RENDER_KEY = (
    "kind, fact_name, scope, id, name, stamp_us, type, revision, description, json_head"
)
TABLE_KEY = (
    "kind, fact_name, scope, id, name, revision, title, description, type, created_at,"
    " updated_at, checked_ns"
)
# The body and the extra keys come last: a listing's query never reads their overflow pages.
_DDL = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS files ("
    " name TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, size INTEGER, mtime_ns INTEGER,"
    " ctime_ns INTEGER, mode INTEGER, checked_ns INTEGER, kind INTEGER, id TEXT,"
    " revision INTEGER, fact_name TEXT, title TEXT, description TEXT, type TEXT, scope TEXT,"
    " created_at TEXT, updated_at TEXT, encoding TEXT, diag_line INTEGER, legacy INTEGER,"
    " extra BLOB, body TEXT, json_head TEXT, stamp_us INTEGER) WITHOUT ROWID",
    # ``read`` by id or by a frontmatter name looks up its candidates, not every row.
    "CREATE INDEX IF NOT EXISTS files_id ON files (id)",
    "CREATE INDEX IF NOT EXISTS files_fact_name ON files (fact_name)",
    # A listing's rows in its order with what it prints (``facts/rendered.py``): read from
    # this index alone, in order, without a sort or a visit of the table.
    f"CREATE INDEX IF NOT EXISTS files_render ON files ({RENDER_KEY})",
    # Every row's identity without a visit of the table (bodies make it ~30 times larger).
    "CREATE INDEX IF NOT EXISTS files_identity ON files"
    " (name, dev, ino, size, mtime_ns, ctime_ns, mode, checked_ns)",
    # A fact whose declared scope is the other store's (the listing order then needs Python).
    "CREATE INDEX IF NOT EXISTS files_scope ON files (scope, kind)",
    # The monitor's vouch (``Watch``): one row. Every row written or removed bumps the
    # generation in the same transaction, whoever writes it, so a vouch recorded at another
    # generation is never taken for the rows now.
    "CREATE TABLE IF NOT EXISTS watch"
    " (generation INTEGER NOT NULL, token TEXT, vouched INTEGER NOT NULL)",
    *(
        f"CREATE TRIGGER IF NOT EXISTS files_{event.lower()} AFTER {event} ON files"
        " BEGIN UPDATE watch SET generation = generation + 1; END"
        for event in ("INSERT", "UPDATE", "DELETE")
    ),
    # The app's table: every fact's shown fields in listing order, from this index alone
    # (~30 MB at 100,000 facts against ~100 MB of table pages with the bodies' heads).
    f"CREATE INDEX IF NOT EXISTS files_table ON files ({TABLE_KEY})",
)
# What a listing needs (no body, no extra keys); ``_COLUMNS`` is a whole row.
_LISTED = (
    "name, dev, ino, size, mtime_ns, ctime_ns, mode, checked_ns, kind, id, revision, fact_name,"
    " title, description, type, scope, created_at, updated_at, encoding, diag_line"
)
_COLUMNS = f"{_LISTED}, legacy, extra, body"
_IDENTITY = "name, dev, ino, size, mtime_ns, ctime_ns, mode, checked_ns"  # what validates a row
_STORED = f"{_COLUMNS}, json_head, stamp_us"  # what a recorded row writes
_FACT, _DIAGNOSTIC = 0, 1
FACT_KIND = _FACT  # ``writer_rows``' kind of a fact (else a diagnostic)
_WIDTH = 25  # columns of a recorded row


@functools.cache
def code_tag() -> str:
    """Digest of the code whose output the rows hold: rows of another codec are never read."""
    here = Path(__file__).resolve().parent
    digest = blake2b(f"schema {SCHEMA}".encode(), digest_size=12)
    for name in (
        "codec.py", "fastpath.py", "yaml_strict.py", "yaml_text.py", "decoding.py", "fields.py",
        "model.py", "timestamps.py", "derived_index.py", "rendered.py", "freshness.py",
    ):
        digest.update(name.encode())
        try:
            digest.update((here / name).read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


def _repaged(db: sqlite3.Connection) -> None:
    """An emptied index of another page size (an earlier version's) takes ``PAGE_SIZE``.

    Only a file no other connection has open can leave WAL mode for the ``VACUUM`` (cheap on
    emptied tables): otherwise it keeps its page size, as it would have anyway, and stays in
    WAL mode.
    """
    if db.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE:
        return
    try:
        if db.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete":
            db.execute(f"PRAGMA page_size={PAGE_SIZE}")
            db.execute("VACUUM")
    except sqlite3.OperationalError:
        pass  # busy: another process has it open
    finally:
        with contextlib.suppress(sqlite3.OperationalError):  # then the next opener sets it
            db.execute("PRAGMA journal_mode=WAL")


def index_path(paths: EnginePaths, scope: Scope) -> Path:
    """Where a store's index lives: our own data dirs, never inside a store (S2.4).

    The project store's in ``<state>/projects/<slug>/context-center/index/``, the global
    store's (shared by every workspace) in ``<state>/context-center/index/``.
    """
    data = paths.global_data if scope == "global" else paths.workspace_data
    return data / "index" / f"{scope}-facts.v{FILE_VERSION}.sqlite"


def store_index(paths: EnginePaths, scope: Scope, *, create: bool = False) -> FactIndex:
    """The derived index of ``paths``' store of ``scope`` (opened lazily, on first use)."""
    return FactIndex(
        index_path(paths, scope), paths.store_dir(scope), scope, create=create,
        state=str(paths.state),
    )


@record
class Row:
    """One file as the index recorded it."""

    identity: Identity
    checked_ns: int
    item: Item

    def trusted(self, identity: Identity) -> bool:
        """Same identity now, and settled before it was recorded (the racy rule)."""
        return identity == self.identity and max(identity[3], identity[4]) < (
            self.checked_ns - RACY_NS
        )


class Watch(NamedTuple):
    """The index's write generation and the monitor's vouch for its rows, read at one moment.

    ``token``: the monitor token (JSON text) taken before the last full validation of every
    row against the files; ``vouched``: the generation right after it was recorded. While
    ``generation == vouched``, no row changed since, and every file the monitor does not name
    since ``token`` is as its row says (``facts/watched.py``).
    """

    generation: int
    token: str | None
    vouched: int

    @property
    def valid(self) -> bool:
        """Whether the rows are the ones the token vouched for."""
        return self.token is not None and self.vouched == self.generation


class Summary(NamedTuple):
    """The list fields of one indexed fact (no body), for a table's first paint."""

    file: str
    identity: Identity
    checked_ns: int
    id: str
    revision: int
    name: str
    title: str
    description: str
    type: str
    scope: str
    updated_at: str | None

    def trusted(self, identity: Identity) -> bool:
        """The racy rule of ``Row.trusted``."""
        return identity == self.identity and max(identity[3], identity[4]) < (
            self.checked_ns - RACY_NS
        )


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _extra_blob(fact: Fact) -> bytes | None:
    """The preserved extra keys as marshal bytes; ``b""`` when none, ``None`` if not exact."""
    if not fact.extra:
        return b""
    try:
        blob = marshal.dumps(fact.extra)  # type: ignore[arg-type]  # reason: checked below
        if marshal.loads(blob) != fact.extra:
            return None
    except ValueError:
        return None
    return blob


def _record(name: str, identity: Identity, checked_ns: int, item: Item) -> tuple[Any, ...] | None:
    """The row for one file (``_STORED`` order), or ``None`` when the parse cannot be kept."""
    head = (name, *identity, checked_ns)
    if isinstance(item, Diagnostic):
        return (*head, _DIAGNOSTIC, None, None, None, None, item.message, None, None, None,
                None, item.code, item.line, 0, None, None, None, None)
    fact = item.fact
    extra = _extra_blob(fact)
    if extra is None:
        return None
    created, updated = _iso(fact.created_at), _iso(fact.updated_at)
    printed = rendered.json_head(fact.id, fact.revision, fact.name, fact.title,
                                 fact.description, fact.type, fact.scope, created, updated)
    return (*head, _FACT, fact.id, fact.revision, fact.name, fact.title, fact.description,
            fact.type, fact.scope, created, updated, item.encoding, None,
            int(item.needs_upgrade), extra, fact.body, printed,
            rendered.stamp_us(created, updated))


def recordable(item: Item) -> bool:
    """Whether ``FactIndex.update`` records this parse (its extra keys survive marshal)."""
    return isinstance(item, Diagnostic) or _extra_blob(item.fact) is not None


def _item(root: Path, row: tuple[Any, ...]) -> Item:
    """The fact (or diagnostic) a whole row (``_COLUMNS``) holds, with its path and stamp."""
    make = getattr(root, "_make_child_relpath", None)
    path: Path = make(row[0]) if make is not None else root / row[0]
    if row[8] == _DIAGNOSTIC:
        return Diagnostic(row[18], path, row[13], row[19])
    when = datetime.fromisoformat
    created, updated, extra = row[16], row[17], row[21]
    fact = Fact(
        row[9], row[10], row[11], row[12], row[13], row[14], row[15], row[22],
        None if created is None else when(created), None if updated is None else when(updated),
        path, FileStamp(row[1], row[2], row[3], row[4]),
        marshal.loads(extra) if extra else (),
    )
    return ParsedFact(fact, bool(row[20]), row[18])


class FactIndex:
    """The derived index of one store directory; every failure degrades to "no rows"."""

    def __init__(
        self, path: Path, root: Path, scope: Scope, *, create: bool = False,
        state: str | None = None,
    ) -> None:
        self.path = path
        self.root = root
        self.scope = scope
        self.create = create
        self.state = state  # the state root: whose store monitor may vouch for the rows
        self._db: sqlite3.Connection | None = None
        self._writable = False
        self._broken = False
        # Re-entrant: a rebuild inside ``_using`` closes the connection, and ``close`` takes the
        # lock so a writer's close never frees a connection another thread is reading from.
        self._lock = threading.RLock()
        self._inserted = 0  # rows this connection wrote (``close`` may pack after a build)

    # -- opening ---------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection | None:
        """The connection (opened once), ``None`` when the index cannot be used now."""
        if self._db is not None or self._broken:
            return self._db
        exists = self._safe_existing()
        if exists is False:
            return None
        if exists is None and not self.create:
            return None  # reads never create our files (S2.4)
        try:
            self._db = self._connect(exists is None)
        except sqlite3.DatabaseError:
            self._db = self._rebuilt()
        return self._db

    def _safe_existing(self) -> bool | None:
        """True: a file we may use; None: no file; False: one we must not trust or touch."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return None
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022:
            return False
        return not (hasattr(os, "getuid") and st.st_uid != os.getuid())

    def _connect(self, new: bool) -> sqlite3.Connection | None:
        """Open read-write (creating when ``new``), else read-only, else immutable."""
        if new:
            from ..filemodes import create_private_file

            create_private_file(self.path)
        db: sqlite3.Connection | None = None
        # Even a read-only connection creates the -wal and -shm files beside a WAL database:
        # a file, directory or medium that is not writable is read as an immutable file.
        modes = ("rw", "ro&immutable=1") if self._may_write() else ("ro&immutable=1",)
        for mode in modes:
            try:
                db = sqlite3.connect(
                    f"file:{_uri_path(self.path)}?mode={mode}", uri=True, timeout=2.0,
                    check_same_thread=False, isolation_level=None,
                )
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
                self._writable = mode == "rw"
                break
            except sqlite3.OperationalError:
                if db is not None:
                    db.close()
                db = None
        if db is None:
            return None
        if self._writable:
            # Decides the page size of a file not yet written (an existing file keeps its own).
            db.execute(f"PRAGMA page_size={PAGE_SIZE}")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            # A checkpointed WAL is cut back to 4 MB: a hook that exits without closing (os._exit)
            # would otherwise leave one as large as the biggest transaction (33 MB at 10k facts).
            db.execute("PRAGMA journal_size_limit=4194304")
        if not self._valid_meta(db):
            if not self._writable:
                db.close()
                return None
            self._reset(db)
        return db

    def _valid_meta(self, db: sqlite3.Connection) -> bool:
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError:
            return False
        return meta == self._meta()

    def _meta(self) -> dict[str, str]:
        return {"schema": str(SCHEMA), "code": code_tag(), "root": str(self.root),
                "scope": self.scope}

    def _reset(self, db: sqlite3.Connection) -> None:
        """Empty tables with this version's meta (another schema, codec or store)."""
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DROP TABLE IF EXISTS files")  # its indexes and triggers with it
            db.execute("DROP TABLE IF EXISTS meta")
            db.execute("DROP TABLE IF EXISTS watch")
            for statement in _DDL:
                db.execute(statement)
            db.executemany("INSERT INTO meta VALUES (?, ?)", self._meta().items())
            db.execute("INSERT INTO watch VALUES (0, NULL, -1)")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        _repaged(db)


    def _rebuilt(self) -> sqlite3.Connection | None:
        """A corrupt file (garbage, truncated) is ours and derived: remove it and start over."""
        self._inserted = 0  # nothing to pack in a file about to go
        self.close()
        if not self.create and not self._may_replace():
            self._broken = True
            return None
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass
            except OSError:
                self._broken = True
                return None
        try:
            return self._connect(True)
        except (sqlite3.DatabaseError, OSError):
            self._broken = True
            return None

    def _may_replace(self) -> bool:
        """An existing index may be replaced by a reader when its directory is writable."""
        return self._may_write()

    def _may_write(self) -> bool:
        """The index and its directory are writable by their mode bits, on a writable medium.

        Mode bits, not ``os.access``: a person who made the files read-only meant it, even
        for root, whom ``access`` always allows.
        """
        try:
            if os.statvfs(self.path.parent).f_flag & os.ST_RDONLY:
                return False
            for target in (self.path, self.path.parent):
                if target.exists() and not os.stat(target).st_mode & stat.S_IWUSR:
                    return False
        except OSError:
            return False
        return True

    def close(self) -> None:
        """Close the connection (it reopens on next use); waits for a read in another thread.

        After a bulk build (``_PACK_FROM`` rows or more, at least half the table, written
        through this connection) the listing's covering indexes are first rewritten in key
        order: rows recorded in file order leave their pages ~75 % full and scattered, and a
        listing reads every one of them (docs/decisions.md, "list --json in chunks").
        """
        with self._lock:
            if self._db is not None:
                if self._inserted >= _PACK_FROM and self._writable:
                    _pack(self._db, self._inserted)
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None
            self._inserted = 0

    @contextmanager
    def _using(self) -> Iterator[sqlite3.Connection | None]:
        """The connection under the lock; a database error marks the file for a rebuild."""
        with self._lock:
            try:
                db = self._open()
            except OSError:
                db = None
            try:
                yield db
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError) and _busy(exc):
                    return  # another process is writing: our update is simply skipped
                self._db = self._rebuilt()

    # -- reading and writing ---------------------------------------------------------------

    def rows(self, names: Collection[str] | None = None) -> dict[str, Row]:
        """Recorded rows for ``names`` (all when ``None``); ``{}`` when the index is unusable."""
        fetched: list[tuple[Any, ...]] = []
        wanted: set[str] | None = None
        with self._using() as db:
            if db is None:
                return {}
            if names is None or len(names) > _BULK:
                wanted = None if names is None else set(names)
                fetched = db.execute(f"SELECT {_COLUMNS} FROM files").fetchall()
            else:
                query = f"SELECT {_COLUMNS} FROM files WHERE name = ?"
                fetched = [r for name in names for r in db.execute(query, (name,))]
        found: dict[str, Row] = {}
        root = self.root
        for row in fetched:
            if wanted is not None and row[0] not in wanted:
                continue
            found[row[0]] = Row(tuple(row[1:7]), row[7], _item(root, row))
        return found

    def listed(self) -> list[tuple[Any, ...]]:
        """Every row's list columns (``_LISTED``: no body, no extra keys), unvalidated.

        One query for a listing; ``Store.listing`` keeps the rows its files still vouch for.
        """
        with self._using() as db:
            if db is None:
                return []
            return db.execute(f"SELECT {_LISTED} FROM files").fetchall()
        return []  # the index broke while reading

    def listed_at(self) -> tuple[int | None, list[tuple[Any, ...]]]:
        """``listed()`` and the index's generation, read in one transaction (``None``, ``[]``:
        the index is unusable)."""
        with self._using() as db:
            if db is None:
                return None, []
            db.execute("BEGIN")
            try:
                generation = _watch(db).generation
                return generation, db.execute(f"SELECT {_LISTED} FROM files").fetchall()
            finally:
                db.execute("COMMIT")
        return None, []  # the index broke while reading

    def writer_rows(self) -> list[tuple[Any, ...]]:
        """Every row's (name, dev, ino, size, mtime_ns, ctime_ns, mode, checked_ns, kind, id,
        fact_name, title, description, type, scope, legacy), unvalidated, no body: what a
        store's writer state is rebuilt from (``write_state``), in one query."""
        query = (
            "SELECT name, dev, ino, size, mtime_ns, ctime_ns, mode, checked_ns, kind, id,"
            " fact_name, title, description, type, scope, legacy FROM files"
        )
        with self._using() as db:
            if db is None:
                return []
            return db.execute(query).fetchall()
        return []  # the index broke while reading

    def survey(
        self, fact_id: str | None, names: Collection[str], named: Collection[str] | None = None
    ) -> tuple[int | None, dict[str, tuple[Identity, int]], dict[str, Row]]:
        """(generation, identities, matching rows), read in one transaction.

        Identities: file name → (recorded identity, checked_ns) of every row (of the rows of
        ``named`` only, when given: a look the monitor vouched for). Matching rows: the whole
        rows of the facts carrying ``fact_id`` or one of ``names`` (indexed lookups, no other
        row is read in full). ``None``, ``{}``, ``{}``: the index is unusable.
        """
        clauses, args = [], []
        if fact_id is not None:
            clauses.append("id = ?")
            args.append(fact_id)
        if names:
            clauses.append(f"fact_name IN ({', '.join('?' * len(names))})")
            args.extend(names)
        query = f"SELECT {_IDENTITY} FROM files"
        with self._using() as db:
            if db is None:
                return None, {}, {}
            db.execute("BEGIN")
            try:
                generation = _watch(db).generation
                if named is None:
                    found = db.execute(query).fetchall()
                else:
                    wanted = list(named)
                    found = [
                        row
                        for start in range(0, len(wanted), 500)
                        for row in db.execute(
                            f"{query} WHERE name IN"
                            f" ({', '.join('?' * len(wanted[start:start + 500]))})",
                            wanted[start:start + 500],
                        )
                    ]
                identities = {r[0]: (r[1:7], r[7]) for r in found}
                fetched = (
                    db.execute(
                        f"SELECT {_COLUMNS} FROM files WHERE kind = 0 AND"
                        f" ({' OR '.join(clauses)})",
                        args,
                    ).fetchall()
                    if clauses
                    else []
                )
            finally:
                db.execute("COMMIT")
            root = self.root
            rows = {r[0]: Row(tuple(r[1:7]), r[7], _item(root, r)) for r in fetched}
            return generation, identities, rows
        return None, {}, {}

    def update(
        self,
        changed: Iterable[tuple[str, Identity, int, Item]],
        removed: Iterable[str] = (),
        *,
        seen: Watch | None = None,
        token: object = None,
    ) -> bool:
        """Replace the rows of changed files and drop removed ones; False when not recorded.

        ``seen``: the index's ``watch()`` read before any lstat of these files. If the index is
        still exactly as seen, a valid vouch survives these rows (every change the monitor
        did not name since its token happened before ``seen`` was read, and these files were
        looked at after). ``token`` (with ``seen``): the monitor token taken before the caller
        validated *every* row against the files — it becomes the vouch.
        """
        changed, removed = list(changed), list(removed)
        if not changed and not removed and (seen is None or token is None):
            return True
        return self.record(changed, removed, seen=seen, token=token) is not None

    def record(
        self,
        changed: Iterable[tuple[str, Identity, int, Item]],
        removed: Iterable[str] = (),
        *,
        seen: Watch | None = None,
        token: object = None,
    ) -> Watch | None:
        """``update``, returning the index's watch state right after (``None``: not recorded)."""
        changed = list(changed)
        records = [r for r in (_record(*entry) for entry in changed) if r is not None]
        if len(records) < len(changed):
            token = None  # a file without its row: no vouch may cover it (it is read each time)
        gone = [(name,) for name in removed]
        if not records and not gone and token is None and seen is not None:
            return seen  # nothing to write: the index is as it was seen, or moved on
        with self._using() as db:
            if db is None or not self._writable:
                return None
            db.execute("BEGIN IMMEDIATE")
            try:
                before = _watch(db)
                if records:
                    placeholders = ", ".join("?" * _WIDTH)
                    db.executemany(
                        f"INSERT OR REPLACE INTO files ({_STORED}) VALUES ({placeholders})",
                        records,
                    )
                if gone:
                    db.executemany("DELETE FROM files WHERE name = ?", gone)
                after = _watch(db)
                vouch = None
                if seen is not None and before == seen:
                    if token is not None:
                        vouch = _token_text(token)
                    elif seen.valid:
                        vouch = seen.token
                if vouch is not None:
                    db.execute("UPDATE watch SET token = ?, vouched = generation", (vouch,))
                    after = Watch(after.generation, vouch, after.generation)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            self._inserted += len(records)
            return after
        return None

    def watch(self) -> Watch | None:
        """The generation and the monitor's vouch now; ``None`` when the index is unusable."""
        with self._using() as db:
            if db is None:
                return None
            return _watch(db)
        return None  # the index broke while reading

    def summaries(self) -> list[Summary]:
        """Every row's list fields without the body: a cheap first page for a table.

        Not validated here: ``Store.summaries`` keeps only rows the files still vouch for.
        """
        query = (
            "SELECT name, dev, ino, size, mtime_ns, ctime_ns, mode, checked_ns, id, revision,"
            " fact_name, title, description, type, scope, updated_at FROM files WHERE kind = 0"
            " ORDER BY fact_name, id"
        )
        with self._using() as db:
            if db is None:
                return []
            return [
                Summary(row[0], tuple(row[1:7]), row[7], *row[8:])
                for row in db.execute(query).fetchall()
            ]
        return []  # the index broke while reading

    def each_listed(
        self, visit: Callable[[tuple[Any, ...]], object], limit: int | None = None
    ) -> bool:
        """Call ``visit`` with every row's list fields and body, streamed (never all at once).

        Each row: ``(name, dev, ino, size, mtime_ns, ctime_ns, mode, checked_ns, kind, id,
        revision, fact_name, title, description, type, scope, created_at, updated_at, body,
        encoding, diag_line)`` (a diagnostic's code is in ``encoding``, its message in
        ``description``); the first ``limit`` by file name when given. Not validated here
        (``facts/table_listing.py`` checks each against its file). False when the index is unusable.
        """
        query = (
            "SELECT name, dev, ino, size, mtime_ns, ctime_ns, mode, checked_ns, kind, id,"
            " revision, fact_name, title, description, type, scope, created_at, updated_at,"
            " body, encoding, diag_line FROM files"
        )
        with self._using() as db:
            if db is None:
                return False
            if limit is None:
                cursor = db.execute(query)
            else:
                cursor = db.execute(f"{query} ORDER BY name LIMIT ?", (limit,))
            while batch := cursor.fetchmany(1000):
                for row in batch:
                    visit(row)
            return True
        return False  # the index broke while reading

    def names(self) -> set[str]:
        """Every file name with a row."""
        with self._using() as db:
            if db is None:
                return set()
            return {row[0] for row in db.execute("SELECT name FROM files")}
        return set()  # the index broke while reading: no names


class Printed(NamedTuple):
    """What the printer made of both stores' facts (``print_facts``)."""

    total: int  # active facts
    chunks: list[bytes]  # the facts' printed forms in listing order (UTF-8), to be joined
    # Per store, its diagnostic rows: (file name, code, message, line).
    diagnostics: list[list[tuple[str, str, str, int | None]]]


class Untrusted(NamedTuple):
    """Files of each store no row vouches for, and rows whose file is gone."""

    changed: list[list[str]]
    removed: list[list[str]]
    stale: list[int]  # stores whose monitor vouch no longer holds: to be walked


# Prints every active row of the attached schemas (``main``, ``s0``, …) in listing order, in
# the caller's read transaction: (active facts, printed chunks), or ``None`` (not this way).
Printer = Callable[[sqlite3.Connection, list[str]], "tuple[int, list[bytes]] | None"]


def print_facts(
    indexes: list[FactIndex],
    looks: list[Look],
    fresh: list[set[str]],
    printer: Printer,
) -> Printed | Untrusted | None:
    """Every active fact of the stores' indexes printed by ``printer``, in listing order.

    ``looks``: each store's files now (``watched.look``); a row prints only when its file's
    identity equals the look's lstat and had settled when recorded (the racy rule), or the row
    was just recorded from that very identity by this listing (``fresh``, per store), or the
    look is vouched for by the monitor at this index generation and does not name the file.
    All rows are validated and printed in one read transaction (``printed_listing`` prints
    them, in the order (name, scope, id, file name), as ``list_memory``). ``Untrusted``: files
    to read first (or stores to walk). ``None``: the index cannot print this (missing, not
    printable, odd scopes).
    """
    main, others = indexes[0], indexes[1:]
    for other in others:  # opened (and its meta checked or reset) as any reader opens it
        with other._lock:
            if other._open() is None:
                return None
    with main._using() as db:
        if db is None:
            return None
        schemas = ["main"]
        # Any error here only means "not printed this way": the caller lists as before (and
        # ``_using`` must not take it for a damaged main index).
        try:
            for n, other in enumerate(others):
                mode = "rw" if other._writable else "ro&immutable=1"
                uri = f"file:{_uri_path(other.path)}?mode={mode}"
                db.execute(f"ATTACH DATABASE ? AS s{n}", (uri,))
                schemas.append(f"s{n}")
            db.execute("BEGIN")
            try:
                return _printed(db, schemas, indexes, looks, fresh, printer)
            finally:
                db.execute("COMMIT")
        except sqlite3.Error:
            return None
        finally:
            for schema in schemas[1:]:
                with contextlib.suppress(sqlite3.Error):
                    db.execute(f"DETACH DATABASE {schema}")
    return None  # the index could not be opened


def _printed(
    db: sqlite3.Connection,
    schemas: list[str],
    indexes: list[FactIndex],
    looks: list[Look],
    fresh: list[set[str]],
    printer: Printer,
) -> Printed | Untrusted | None:
    racy = RACY_NS
    untrusted = Untrusted([], [], [])
    for number, (schema, index, view, recorded) in enumerate(
        zip(schemas, indexes, looks, fresh, strict=True)
    ):
        meta = dict(db.execute(f"SELECT key, value FROM {schema}.meta").fetchall())
        if meta != index._meta():
            return None
        rest = dict(view.files)
        take = rest.pop
        removed: list[str] = []
        changed: list[str] = []
        if view.vouches(_watch(db, schema).generation):
            # Only the files the monitor named: every other row is the file it describes.
            named = [*rest, *view.gone]
            rows: Iterable[tuple[Any, ...]] = [
                row
                for start in range(0, len(named), 500)
                for row in db.execute(
                    f"SELECT {_IDENTITY} FROM {schema}.files WHERE name IN"
                    f" ({', '.join('?' * len(named[start:start + 500]))})",
                    named[start:start + 500],
                )
            ]
        elif view.vouched:
            untrusted.stale.append(number)  # the rows moved on since the monitor was asked
            rows = ()
        else:
            rows = db.execute(f"SELECT {_IDENTITY} FROM {schema}.files INDEXED BY files_identity")
        for row in rows:
            name = row[0]
            st = take(name, None)
            if st is None:
                removed.append(name)
            elif not (
                st.st_mtime_ns == row[4]
                and st.st_ctime_ns == row[5]
                and st.st_ino == row[2]
                and st.st_size == row[3]
                and st.st_dev == row[1]
                and st.st_mode == row[6]
                and (max(row[4], row[5]) < row[7] - racy or name in recorded)
            ):
                changed.append(name)
        changed += rest
        untrusted.changed.append(changed)
        untrusted.removed.append(removed)
    if untrusted.stale or any(untrusted.changed) or any(untrusted.removed):
        return untrusted  # rows to bring up to date first (a gone row may be the odd one below)
    for schema, index in zip(schemas, indexes, strict=True):
        # A declared scope of the other store: its ties across stores need the stable sort.
        odd = (
            f"SELECT 1 FROM {schema}.files INDEXED BY files_scope"
            " WHERE (scope < ? OR scope > ?) AND kind = 0 LIMIT 1"
        )
        if db.execute(odd, (index.scope, index.scope)).fetchone() is not None:
            return None
    printed = printer(db, schemas)
    if printed is None:
        return None  # a row the template could not write (the generic encoder decides)
    diagnostics = [
        db.execute(
            f"SELECT name, encoding, description, diag_line FROM {schema}.files WHERE kind = 1"
        ).fetchall()
        for schema in schemas
    ]
    return Printed(printed[0], printed[1], diagnostics)


def _pack(db: sqlite3.Connection, inserted: int) -> None:
    """``REINDEX`` the listing's covering indexes when ``inserted`` rows are half the table or
    more; skipped when another process holds the index (``timeout``) or anything fails."""
    with contextlib.suppress(sqlite3.Error):
        (rows,) = db.execute("SELECT count(*) FROM files").fetchone()
        if inserted * 2 >= rows:
            db.execute("REINDEX files_render")
            db.execute("REINDEX files_table")


def _watch(db: sqlite3.Connection, schema: str = "main") -> Watch:
    row = db.execute(f"SELECT generation, token, vouched FROM {schema}.watch").fetchone()
    if row is None:
        raise sqlite3.DatabaseError("the watch row is missing")  # damaged: rebuilt
    return Watch(*row)


def _token_text(token: object) -> str:
    import json

    return json.dumps(token, separators=(",", ":"))


def _busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _uri_path(path: Path) -> str:
    from urllib.parse import quote

    return quote(str(path), safe="/")

