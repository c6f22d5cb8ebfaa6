"""What a writer knows about one store between writes, so a write costs O(1) in its size (#14).

A small SQLite file in our state root (beside the derived index, never inside the store) holds a
row per fact file — its name, inode, id, frontmatter name, whether it still needs the S5.1
upgrade, and its MEMORY.md managed line — and a checkpoint: the store directory's identity and
the identity of MEMORY.md as the last write left them, and where the managed block sits in it.

Only a writer holding the store lock changes this file, in one transaction that commits after
MEMORY.md is written (a crash rolls it back: the next writer finds the directory changed). At
the start of a write (``begin``):

* the directory's identity equals the checkpoint's and had settled before it was recorded
  (the racy rule of ``derived_index``): nothing was created, removed, renamed or replaced since,
  so the rows stand and nothing is listed;
* it differs (another program wrote, a crash, or the checkpoint is too recent to trust): one
  ``scandir`` without ``lstat`` compares (name, inode) pairs with the rows, and only the files
  that differ are read — through the derived index's trusted rows, else parsed;
* no usable checkpoint (first write, another version, a lost or corrupt file): one snapshot of
  the store (the derived index again) rebuilds the rows.

A file edited in place by another program (same inode, directory untouched) is not seen by the
first two cases: its row, and so its MEMORY.md line, catch up with the next rebuild.

MEMORY.md is then written from the rows: when the file is the one the last write left, the
managed lines of the facts that changed are spliced into the recorded block at byte offsets
the rows give (the file is not split into lines, nor hashed); otherwise (edited
by hand, by Reasonix, deleted) it is rendered as ``index_file.render_index`` does, from every
row's line instead of every parsed fact. Either way the bytes are those of a full regeneration.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..digests import blake2b
from ..errors import ContextEngineError
from ..records import record
from . import derived_index
from .fs import (
    FS,
    READ_FLAGS,
    atomic_write,
    is_temp_name,
    read_file,
    sweep_temps,
    write_parts,
)
from .index_file import is_managed, line_of, managed_line, render_parts, write_index
from .model import Diagnostic, ParsedFact
from .store import INDEX_NAME, is_fact_file_name

if TYPE_CHECKING:
    from ..paths import EnginePaths
    from .model import Scope
    from .store import Store

SCHEMA = 2
_FACT, _UNREADABLE, _OTHER = 0, 1, 2
# Where a managed line starts, in O(log n): ``lines_base`` holds, for every fact row as it was
# at the last rebase, the bytes of the lines before it; ``lines_pending`` the net change of
# each key's line bytes since. The bytes before a key = the base offset of the first base key
# at or after it + the pending changes of the keys before it (at most ``_PENDING`` rows).
_LINES_DDL = (
    "CREATE TABLE lines_base (fact_name TEXT NOT NULL, fact_id TEXT NOT NULL, name TEXT NOT NULL,"
    " off INTEGER NOT NULL, PRIMARY KEY (fact_name, fact_id, name)) WITHOUT ROWID",
    "CREATE TABLE lines_pending (fact_name TEXT NOT NULL, fact_id TEXT NOT NULL,"
    " name TEXT NOT NULL, delta INTEGER NOT NULL, PRIMARY KEY (fact_name, fact_id, name))"
    " WITHOUT ROWID",
)
_LINES_DROP = ("DROP TABLE IF EXISTS lines_base", "DROP TABLE IF EXISTS lines_pending")
_PENDING = 2048  # keys changed since the rebase before the next one (O(n): 0.2–0.4 s at 100k)
_DDL = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE files (name TEXT PRIMARY KEY, ino INTEGER NOT NULL, kind INTEGER NOT NULL,"
    " fact_id TEXT, fact_name TEXT, line TEXT, legacy INTEGER NOT NULL,"
    " spliceable INTEGER NOT NULL, size INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE INDEX files_by_id ON files (fact_id)",
    # Covering: the listing compare after another program's change scans it, not the lines.
    "CREATE INDEX files_by_inode ON files (name, ino)",
    "CREATE INDEX files_in_order ON files (kind, fact_name, fact_id, name, size)",
    "CREATE INDEX files_legacy ON files (legacy) WHERE legacy = 1",
    "CREATE INDEX files_unspliceable ON files (spliceable) WHERE kind = 0 AND spliceable = 0",
    *_LINES_DDL,
)
_DROP = ("DROP TABLE IF EXISTS meta", "DROP TABLE IF EXISTS files", *_LINES_DROP)
# Beside the database: the token of the last session that left the store clean (JSON).
_QUIET_SUFFIX = ".quiet"
_SAVED = (
    "dir", "checked_ns", "memory", "memory_checked", "block_start", "block_end", "count", "synced",
    "base_total",
)


@functools.cache
def code_tag() -> str:
    """The codec's tag plus this module's and MEMORY.md's code: rows of other code are dropped."""
    here = Path(__file__).resolve().parent
    digest = blake2b(f"{SCHEMA} {derived_index.code_tag()}".encode(), digest_size=12)
    for name in ("index_file.py", "write_state.py", "store.py"):
        try:
            digest.update((here / name).read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


def state_path(paths: EnginePaths, scope: Scope) -> Path:
    """Beside the store's derived index, in our own data dirs (S2.4)."""
    return derived_index.index_path(paths, scope).with_name(f"{scope}-writes.v{SCHEMA}.sqlite")


@record
class _Row:
    name: str
    ino: int
    kind: int
    fact_id: str | None = None
    fact_name: str | None = None
    line: str | None = None
    legacy: bool = False
    spliceable: bool = True

    @property
    def size(self) -> int:
        """The bytes of its MEMORY.md line, newline included (0: no line)."""
        return len(f"{self.line}\n".encode("utf-8", errors="surrogateescape")) if self.line else 0

    def key(self) -> tuple[str, str, str]:
        """MEMORY.md order: (name, id) as ``render_index`` sorts, then the file name."""
        return (self.fact_name or "", self.fact_id or "", self.name)


def _row(name: str, ino: int, item: ParsedFact | Diagnostic | None) -> _Row:
    if item is None:
        return _Row(name, ino, _OTHER)
    if isinstance(item, Diagnostic):
        return _Row(name, ino, _UNREADABLE)
    fact = item.fact
    line = managed_line(fact)
    return _Row(name, ino, _FACT, fact.id, fact.name, line, item.needs_upgrade, _spliceable(line))


def _values(row: _Row) -> tuple[Any, ...]:
    """``row`` as the ``files`` table's columns."""
    return (row.name, row.ino, row.kind, row.fact_id, row.fact_name, row.line, int(row.legacy),
            int(row.spliceable), row.size)


def _size(line: str) -> int:
    """``_Row.size`` of a fact's line."""
    return len(f"{line}\n".encode("utf-8", errors="surrogateescape"))


_clock = time.monotonic


class _Progress:
    """A line on stderr while a rebuild reads many files (after a second: most never show)."""

    def __init__(self, scope: str, total: int) -> None:
        self.scope, self.total = scope, total
        self.started = self.shown = _clock()
        self.visible = False

    def report(self, done: int) -> None:
        """``done`` of the files read: from the second on, rewritten in place on a terminal
        (at most twice a second), else a line every five seconds and the last one."""
        import sys

        now = _clock()
        tty = sys.stderr.isatty()
        every = 0.5 if tty else 5.0
        last = done == self.total
        if now - self.started < 1.0 or (self.visible and now - self.shown < every and not last):
            return
        self.shown, self.visible = now, True
        end = "\r" if tty else "\n"
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(
                f"context-engine: reading the {self.scope} store for its first write:"
                f" {done:,}/{self.total:,} files{end}"
            )
            sys.stderr.flush()

    def end(self) -> None:
        """Finish the line, if one was shown on a terminal."""
        import sys

        if self.visible:
            with contextlib.suppress(OSError, ValueError):
                if sys.stderr.isatty():
                    sys.stderr.write("\n")
                    sys.stderr.flush()


def _spliceable(line: str) -> bool:
    """A line a later render finds again as exactly one managed line (else: render in full)."""
    if not is_managed(line) or len(f"{line}\n".splitlines()) != 1:
        return False
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return False  # lone surrogates: byte order and code point order may differ
    return True


def _dir_identity(root: Path) -> str:
    """The store directory's identity; ``stat``, not ``lstat``: a store reached through a
    symlink changes the directory it points to, never the link."""
    st = os.stat(root)
    return ",".join(
        str(v) for v in (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                         st.st_mode)
    )


def _listing(root: Path) -> dict[str, int]:
    """One ``scandir`` without ``lstat``: every entry's inode by name (a comprehension: the
    filtering is done on the few names that differ from the rows, not on every entry)."""
    try:
        with os.scandir(root) as entries:
            return {entry.name: entry.inode() for entry in entries}
    except FileNotFoundError:
        return {}


def _line_bytes(row: _Row) -> bytes:
    return f"{row.line}\n".encode("utf-8", errors="surrogateescape")


def _memory_identity(store: Store) -> str:
    """MEMORY.md's identity (dev, ino, size, mtime, ctime, mode); "" when it is missing."""
    try:
        return _identity(os.lstat(store.root / INDEX_NAME))
    except OSError:
        return ""


def _identity(st: os.stat_result) -> str:
    return ",".join(
        str(v) for v in (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                         st.st_mode)
    )


# An edit of MEMORY.md's managed block: at a byte offset, remove or insert one line's bytes.
_Op = tuple[str, int, bytes]


class _Pieces:
    """A file's new bytes as ranges of its old bytes and inserted bytes, edited by offset."""

    __slots__ = ("parts",)

    def __init__(self, size: int) -> None:
        self.parts: list[tuple[int, int] | bytes] = [(0, size)] if size else []

    def _cut(self, at: int) -> int:
        """The index of the part starting at ``at`` (the part holding it is split there)."""
        pos = 0
        for i, part in enumerate(self.parts):
            if pos == at:
                return i
            size = part[1] - part[0] if isinstance(part, tuple) else len(part)
            if at < pos + size:
                k = at - pos
                halves: list[tuple[int, int] | bytes] = (
                    [(part[0], part[0] + k), (part[0] + k, part[1])]
                    if isinstance(part, tuple) else [part[:k], part[k:]]
                )
                self.parts[i : i + 1] = halves
                return i + 1
            pos += size
        return len(self.parts)  # the end (or past it: what is taken there comes up short)

    def insert(self, at: int, data: bytes) -> None:
        """Insert ``data`` at byte ``at`` of the new bytes."""
        self.parts.insert(self._cut(at), data)

    def take(self, at: int, size: int) -> list[tuple[int, int] | bytes]:
        """Remove ``size`` bytes at ``at``; the parts removed."""
        i = self._cut(at)
        j = self._cut(at + size)
        removed = self.parts[i:j]
        del self.parts[i:j]
        return removed

    @staticmethod
    def read(fs: FS, fd: int, parts: list[tuple[int, int] | bytes]) -> bytes:
        """The bytes of ``parts`` (ranges read from ``fd``)."""
        return b"".join(
            fs.pread(fd, part[1] - part[0], part[0]) if isinstance(part, tuple) else part
            for part in parts
        )

    def write(self, fs: FS, src: int, dst: int) -> None:
        """Write the new bytes to ``dst``: the old ranges from ``src`` (``fs.write_parts``)."""
        write_parts(fs, src, dst, self.parts)


class WriteState:
    """The writer's rows and checkpoint of one store; every method runs under its lock."""

    def __init__(self, path: Path, store: Store, monitor_state: str | None = None) -> None:
        self.path = path
        self.store = store
        # The state root whose store monitor (``monitor/``) is asked what changed; None: never.
        self.monitor_state = monitor_state
        self.ready = False
        self._db: sqlite3.Connection | None = None
        self._meta: dict[str, str] = {}
        self._ops: list[_Op] = []
        self._ours: dict[str, str] = {}  # identities of the files this write made
        self._changed = False
        self._splice = True
        # A store this operation may never write (the other store of a save) is not opened
        # while the monitor vouches that nothing in it changed since a session that found it
        # clean (``_vouched``); its first real use opens it (``_ensure``).
        self._deferred = False
        self._token: str | None = None  # the monitor's token the rows were validated after
        self._used = False  # this session wrote to the store's files (or MEMORY.md)

    # -- the session of one write --------------------------------------------------------------

    def begin(self) -> bool:
        """Open a transaction and bring the rows up to date with the directory; False: unusable.

        When False, nothing is known here: the caller does what it did before this existed
        (sweep temp files, read every fact). A store the monitor vouches for since a clean
        session is not opened yet (``ready``, with no legacy file and no stale temp file).
        """
        self.ready = False
        self._ops, self._changed, self._splice = [], False, True
        self._ours = {}
        self._token, self._used, self._deferred = None, False, False
        if self._vouched():
            self._deferred = self.ready = True
            return True
        return self._begin_now()

    def _ensure(self) -> bool:
        """A deferred session opened now (the store is used after all); False: unusable."""
        if self._deferred:
            self._deferred = self.ready = False
            return self._begin_now()
        return self.ready and self._db is not None

    def _vouched(self) -> bool:
        """Whether the monitor names nothing changed in the store since the token of a session
        that found it clean and left it as it was (``_QUIET_SUFFIX``): nothing to migrate,
        sweep or re-read, so the database need not be opened for this operation."""
        if self.monitor_state is None or os.environ.get("CONTEXT_ENGINE_MONITOR") == "0":
            return False
        try:
            fd = os.open(self._quiet_path(), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                saved = json.loads(os.read(fd, 4096))
            finally:
                os.close(fd)
        except (OSError, ValueError):
            return False
        if not (isinstance(saved, dict) and saved.get("code") == code_tag()
                and saved.get("root") == str(self.store.root)):
            return False
        from ..monitor.client import changes_since

        got = changes_since(self.monitor_state, [str(self.store.root)], saved.get("token"),
                            start=False)
        return got is not None and got[1][0] is not None and not got[1][0]

    def _quiet_path(self) -> Path:
        return self.path.with_name(self.path.name + _QUIET_SUFFIX)

    def _begin_now(self) -> bool:
        db = self._open()
        if db is None:
            return False
        self._db = db
        try:
            db.execute("BEGIN IMMEDIATE")
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            # The identity first, then the monitor's token: each vouches only for what is
            # read after it (a change in between shows in the next answer or identity).
            checked = time.time_ns()
            current = _dir_identity(self.store.root)
            usable = (
                meta.get("code") == code_tag() and meta.get("root") == str(self.store.root)
                and all(k in meta for k in _SAVED)
            )
            quiet = usable and meta["dir"] == current and self._settled(meta)
            asked = self._ask(meta.get("monitor", "") if usable else "", start=not quiet)
            names = None if asked is None else asked[1]
            fresh = asked is not None  # may the token now replace the saved one?
            if not usable:
                self._rebuild(db, current, checked)
            elif names is not None:
                # The monitor's word: only what changed since the saved token (our own last
                # write's files too) is read; nothing is listed.
                self._meta = meta
                if names:
                    self._sweep([n for n in names if is_temp_name(n)])
                    self._diff(self._not_ours(names, meta.get("ours", "")))
                if names or meta["dir"] != current:
                    self._meta["dir"], self._meta["checked_ns"] = current, str(checked)
                    self._changed = True
                fresh = bool(names)  # else the saved token says the same, and costs no commit
            elif not quiet:
                known = dict(db.execute("SELECT name, ino FROM files").fetchall())
                # Dict item views compare as sets, in C: a name whose inode changed is on
                # both sides; our stale temp files and other non-fact entries show up too.
                differ = {name for name, _ in _listing(self.store.root).items() ^ known.items()}
                if self._sweep([n for n in differ if is_temp_name(n)]):
                    # Recorded before the listing that vouches for it, as on every path.
                    checked, current = time.time_ns(), _dir_identity(self.store.root)
                    differ = {name for name, _ in _listing(self.store.root).items() ^ known.items()}
                self._meta = meta
                self._diff(differ)
                # Saved even when no row changed, or the next writer would list it again.
                self._meta["dir"], self._meta["checked_ns"] = current, str(checked)
                self._changed = True
            else:
                self._meta = meta
                # The identity vouched up to ``current``; the token, taken after it, only if
                # no entry was created, removed or renamed in between.
                fresh = fresh and _dir_identity(self.store.root) == current
            if fresh and asked is not None and self._meta.get("monitor") != asked[0]:
                self._meta["monitor"] = asked[0]
                self._changed = True
            if asked is not None and (names is not None or not quiet or not usable or fresh):
                self._token = asked[0]  # the rows were brought up to date after it
        except (sqlite3.Error, OSError):
            self._drop()
            return False
        self.ready = True
        return True

    def _ask(self, since: str, *, start: bool) -> tuple[str, set[str] | None] | None:
        """The store monitor's token now (as saved) and the names changed in the store since
        the saved token ``since`` (``None``: it cannot say); ``None``: no monitor answered.

        ``start``: a monitor is started when none runs (this write is about to list).
        """
        if self.monitor_state is None or os.environ.get("CONTEXT_ENGINE_MONITOR") == "0":
            return None
        from ..monitor.client import changes_since

        try:
            saved = json.loads(since) if since else None
        except ValueError:
            saved = None
        got = changes_since(self.monitor_state, [str(self.store.root)], saved, start=start)
        if got is None:
            return None
        token, answer = got
        names = answer[0]
        if names is not None and any("/" in name for name in names):
            names = None  # not a name of this directory: walk
        return json.dumps(token), names

    def _not_ours(self, names: set[str], ours: str) -> set[str]:
        """``names`` but the files the last write left that are still as it left them.

        The monitor names our own last write's files too; one whose identity is the one that
        write recorded, with fine-grained stamps (the rule ``_settled`` trusts a directory's
        by), is that write's file: its row stands and it is not read again.
        """
        try:
            left = json.loads(ours) if ours else {}
        except ValueError:
            return names
        if not isinstance(left, dict):
            return names
        kept = set(names)
        for name, recorded in left.items():
            if name not in kept or not isinstance(recorded, str):
                continue
            try:
                st = os.lstat(self.store.root / name)
            except OSError:
                continue
            fine = st.st_mtime_ns % 1_000_000 != 0 and st.st_ctime_ns % 1_000_000 != 0
            if fine and _identity(st) == recorded:
                kept.discard(name)
        return kept

    def legacy_names(self) -> list[str]:
        """Fact files still in need of the S5.1 upgrade, by name."""
        if self._deferred:
            return []  # vouched: none since a session that found none
        db = self._db
        assert db is not None and self.ready
        return [r[0] for r in db.execute("SELECT name FROM files WHERE legacy = 1 ORDER BY name")]

    def names_with_id(self, fact_id: str) -> list[str]:
        """Fact files whose parsed id is ``fact_id``, by name (a hint: callers re-read)."""
        if not self._ensure():
            return []  # unusable now: the caller's other ways find it
        db = self._db
        assert db is not None
        query = "SELECT name FROM files WHERE fact_id = ? AND kind = 0 ORDER BY name"
        return [r[0] for r in db.execute(query, (fact_id,))]

    def touched(self, paths: Iterable[Path]) -> None:
        """Re-read the files this write created, replaced or removed (and tell the index)."""
        names = sorted({p.name for p in paths if p.parent == self.store.root})
        if not names or not self._ensure():
            return  # nothing of this store (a deferred one stays unopened), or unusable
        self._used = True
        try:
            self._resync([n for n in names if is_fact_file_name(n)], ours=True)
        except (sqlite3.Error, OSError):
            self._drop()  # not ready any more: MEMORY.md is rendered from a snapshot

    def reload(self) -> None:
        """Every row again from a snapshot (a rebuild of MEMORY.md from the fact files)."""
        if not self._ensure():
            return
        self._used = True
        db = self._db
        assert db is not None
        try:
            self._rebuild(db, _dir_identity(self.store.root), time.time_ns())
        except (sqlite3.Error, OSError):
            self._drop()

    def write_memory(self) -> bool:
        """Write MEMORY.md from the rows, then commit; False (nothing written) when unusable."""
        if not self._ensure():
            return False
        self._used = True
        db = self._db
        if db is None or not self.ready:
            return False
        try:
            try:
                done = self._write_spliced(db) or self._write_rendered(db)
            except sqlite3.Error:
                self._drop()
                return False
        except (OSError, ContextEngineError):
            self._meta["synced"] = "0"  # written or not, the next write renders in full
            with contextlib.suppress(sqlite3.Error):
                self._commit(db, observe=True)
            self._drop()
            raise
        start, end, count = done
        checked = time.time_ns()
        self._meta.update(
            memory=_memory_identity(self.store), memory_checked=str(checked),
            block_start=str(start), block_end=str(end), count=str(count), synced="1",
        )
        try:
            self._commit(db, observe=True)
        except sqlite3.Error:
            self._drop()
        return True

    def finish(self) -> None:
        """End the session: keep what ``begin`` learned (MEMORY.md marked stale if it matters).

        A session that wrote nothing of the store, found no legacy file and knows the token
        its rows were validated after leaves that token beside the database, so the next
        operation that does not write here need not open it (``_vouched``)."""
        self._deferred = False
        db = self._db
        if db is None:
            return
        clean = False
        try:
            if self._ops or self._changed:
                if self._ops:
                    self._meta["synced"] = "0"
                self._commit(db)
            clean = (
                self._token is not None and not self._used and not self._ops
                and db.execute("SELECT 1 FROM files WHERE legacy = 1 LIMIT 1").fetchone() is None
            )
        except sqlite3.Error:
            pass
        self._drop()
        if clean and self._token is not None:
            self._leave_quiet(self._token)

    def _leave_quiet(self, token: str) -> None:
        """Write the token of a clean session beside the database (best effort: a hint)."""
        text = json.dumps({"code": code_tag(), "root": str(self.store.root),
                           "token": json.loads(token)}, sort_keys=True)
        path = self._quiet_path()
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                if os.read(fd, 4096) == text.encode():
                    return  # as it is: nothing to write
            finally:
                os.close(fd)
        except OSError:
            pass
        temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
            os.replace(temp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)

    def abort(self) -> None:
        """Forget this session (the operation failed): the next writer looks again."""
        self._deferred = False
        self._drop()

    # -- keeping the rows --------------------------------------------------------------------

    @staticmethod
    def _settled(meta: dict[str, str]) -> bool:
        """Can an equal directory identity be trusted to mean "no entry changed"?

        Settled before it was recorded (the racy rule), or stamped by a file system with
        fine-grained timestamps: then only a change within one kernel clock tick (≤ 10 ms)
        after the recorded write could share its stamp — and none at all on kernels with
        multigrain timestamps, which stamp the next change after an ``lstat`` (ours, at the
        checkpoint) finely. Whole-millisecond stamps (FAT, HFS+, SMB…) get the racy rule.
        """
        parts = [int(v) for v in meta["dir"].split(",")]
        mtime, ctime = parts[3], parts[4]
        if max(mtime, ctime) < int(meta["checked_ns"]) - derived_index.RACY_NS:
            return True
        return mtime % 1_000_000 != 0 and ctime % 1_000_000 != 0

    def _rebuild(self, db: sqlite3.Connection, current: str, checked: int) -> None:
        """Every row from the files now: the derived index's trusted rows (no body is read),
        the rest read and parsed (and recorded in the index as they go)."""
        if sweep_temps(self.store.fs, self.store.root):
            checked, current = time.time_ns(), _dir_identity(self.store.root)
        rows = sorted(self._rows_now())  # in key order: the table's B-tree only appends
        db.execute("DROP TABLE IF EXISTS files")  # then its indexes, built once, at the end
        db.execute(_DDL[1])
        db.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        for statement in _LINES_DROP:
            db.execute(statement)
        for statement in _DDL[2:]:
            db.execute(statement)
        db.execute("DELETE FROM meta")
        self._meta = {"code": code_tag(), "root": str(self.store.root), "dir": current,
                      "checked_ns": str(checked),
                      "memory": "", "memory_checked": "0", "block_start": "0", "block_end": "0",
                      "count": "0", "synced": "0"}
        self._rebase(db)
        self._changed = True

    def _rebase(self, db: sqlite3.Connection) -> None:
        """The line offsets of every fact row as they are now; nothing pending (O(n))."""
        db.execute("DELETE FROM lines_base")
        db.execute("DELETE FROM lines_pending")
        db.execute(
            "INSERT INTO lines_base SELECT fact_name, fact_id, name, coalesce(sum(size) OVER"
            " (ORDER BY fact_name, fact_id, name ROWS BETWEEN UNBOUNDED PRECEDING AND 1"
            " PRECEDING), 0) FROM files WHERE kind = 0 ORDER BY fact_name, fact_id, name"
        )
        total = db.execute("SELECT total(size) FROM files WHERE kind = 0").fetchone()[0]
        self._meta["base_total"] = str(int(total))

    def _rows_now(self) -> list[tuple[Any, ...]]:
        """A row (the ``files`` columns) per entry of the store directory, as ``_resync``
        makes them; an entry that cannot be lstat'ed has none (a snapshot reports it)."""
        store = self.store
        checked = time.time_ns()  # before any lstat: the derived index's rule
        listing: list[tuple[str, os.stat_result]] = []
        try:
            fd = os.open(store.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            return []
        try:
            for name in os.listdir(fd):
                if is_fact_file_name(name):
                    with contextlib.suppress(OSError):
                        listing.append((name, os.lstat(name, dir_fd=fd)))
        finally:
            os.close(fd)
        indexed = (
            {r[0]: r for r in store.index.writer_rows()} if store.index is not None else {}
        )
        racy = derived_index.RACY_NS
        rows: list[tuple[Any, ...]] = []
        unread: list[tuple[str, os.stat_result]] = []
        for name, st in listing:
            if not stat.S_ISREG(st.st_mode):
                rows.append(_values(_Row(name, st.st_ino, _OTHER)))
                continue
            r = indexed.get(name)
            if (
                r is not None
                and (r[1], r[2], r[3], r[4], r[5], r[6])
                == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
                and max(st.st_mtime_ns, st.st_ctime_ns) < r[7] - racy
            ):
                if r[8] == derived_index.FACT_KIND:
                    line = line_of(r[10], r[11], r[12], r[14], r[13])
                    rows.append((name, st.st_ino, _FACT, r[9], r[10], line, int(bool(r[15])),
                                 int(_spliceable(line)), _size(line)))
                else:
                    rows.append(_values(_Row(name, st.st_ino, _UNREADABLE)))
            else:
                unread.append((name, st))
        rows.extend(self._parsed(unread, checked))
        return rows

    def _parsed(
        self, files: list[tuple[str, os.stat_result]], checked: int
    ) -> list[tuple[Any, ...]]:
        """Rows of files the index could not vouch for, read and parsed now; each batch is
        recorded in the index at once, so an interrupted rebuild keeps what it read."""
        store = self.store
        rows: list[tuple[Any, ...]] = []
        recorded: list[tuple[str, tuple[int, int, int, int, int, int], int, Any]] = []
        progress = _Progress(store.scope, len(files))
        for done, (name, st) in enumerate(files, 1):
            item = store._read_entry(store.root / name, st)
            if item is not None:
                identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                            st.st_mode)
                recorded.append((name, identity, checked, item))
                rows.append(_values(_row(name, st.st_ino, item)))
            if len(recorded) >= 2000 or done == len(files):
                if recorded and store.index is not None:
                    store.index.update(recorded)
                recorded = []
                progress.report(done)
        progress.end()
        return rows

    def _diff(self, differ: set[str]) -> None:
        """Re-read the fact files whose (name, inode) differ from the rows (``differ``)."""
        self._resync(sorted(name for name in differ if is_fact_file_name(name)))

    def _sweep(self, temps: list[str]) -> int:
        """Remove our stale temp files (``fs.sweep_temps``'s rule, from a listing in hand)."""
        removed = 0
        for name in temps:
            with contextlib.suppress(FileNotFoundError):
                self.store.fs.unlink(self.store.root / name)
                removed += 1
        return removed

    def _resync(self, names: list[str], *, ours: bool = False) -> None:
        """Replace the rows of ``names`` from the files now, recording MEMORY.md's edits;
        ``ours``: files this write made, their identities kept for the next write."""
        if not names:
            return
        db = self._db
        assert db is not None
        store = self.store
        # Read before any lstat: the monitor's vouch for the rows survives what is seen after.
        seen = store.index.watch() if store.index is not None else None
        checked = time.time_ns()  # before any lstat: the derived index's rule
        indexed = store.index.rows(names) if store.index is not None else {}
        recorded: list[tuple[str, tuple[int, int, int, int, int, int], int, Any]] = []
        for name in names:
            path = store.root / name
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                self._replace(db, name, None)
                continue
            if not stat.S_ISREG(st.st_mode):
                self._replace(db, name, _Row(name, st.st_ino, _OTHER))
                continue
            identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                        st.st_mode)
            if ours:
                self._ours[name] = _identity(st)
            row = indexed.get(name)
            item: ParsedFact | Diagnostic | None
            if row is not None and row.trusted(identity):
                item = row.item
            else:
                item = store._read_entry(path, st)
                if item is None:
                    self._replace(db, name, None)
                    continue
                recorded.append((name, identity, checked, item))
            self._replace(db, name, _row(name, st.st_ino, item))
        if recorded and store.index is not None:
            store.index.update(recorded, seen=seen)

    def _replace(self, db: sqlite3.Connection, name: str, new: _Row | None) -> None:
        found = db.execute(
            "SELECT name, ino, kind, fact_id, fact_name, line, legacy, spliceable FROM files"
            " WHERE name = ?", (name,)
        ).fetchone()
        old = None
        if found is not None:
            name_, ino, kind, fact_id, fact_name, line, legacy, spliceable = found
            old = _Row(name_, ino, kind, fact_id, fact_name, line, bool(legacy), bool(spliceable))
        if old == new:
            return
        self._changed = True
        same_line = (
            old is not None and new is not None and old.kind == new.kind == _FACT
            and old.key() == new.key() and old.line == new.line
        )
        if old is not None and old.kind == _FACT and not same_line:
            self._splice &= old.spliceable
            self._ops.append(("del", self._offset(db, old), _line_bytes(old)))
            self._pending(db, old, -old.size)
        db.execute("DELETE FROM files WHERE name = ?", (name,))
        if new is not None:
            db.execute("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", (
                new.name, new.ino, new.kind, new.fact_id, new.fact_name, new.line,
                int(new.legacy), int(new.spliceable), new.size,
            ))
            if new.kind == _FACT and not same_line:
                self._splice &= new.spliceable
                self._ops.append(("ins", self._offset(db, new), _line_bytes(new)))
                self._pending(db, new, new.size)

    @staticmethod
    def _pending(db: sqlite3.Connection, row: _Row, delta: int) -> None:
        """``row``'s line changed the bytes at its key by ``delta`` since the rebase."""
        db.execute(
            "INSERT INTO lines_pending VALUES (?, ?, ?, ?) ON CONFLICT (fact_name, fact_id, name)"
            " DO UPDATE SET delta = delta + excluded.delta", (*row.key(), delta)
        )

    def _offset(self, db: sqlite3.Connection, row: _Row) -> int:
        """Where ``row``'s line starts in the managed block: the bytes of the lines before it
        (the rows are MEMORY.md's lines, in its order) — two index seeks, not a sum."""
        key = row.key()
        found = db.execute(
            "SELECT off FROM lines_base WHERE (fact_name, fact_id, name) >= (?, ?, ?)"
            " ORDER BY fact_name, fact_id, name LIMIT 1", key
        ).fetchone()
        base = int(self._meta["base_total"]) if found is None else int(found[0])
        moved = db.execute(
            "SELECT total(delta) FROM lines_pending WHERE (fact_name, fact_id, name) < (?, ?, ?)",
            key,
        ).fetchone()[0]
        return base + int(moved)

    # -- MEMORY.md ---------------------------------------------------------------------------

    def _write_spliced(self, db: sqlite3.Connection) -> tuple[int, int, int] | None:
        """This session's edits spliced into the recorded MEMORY.md, when that is a full
        render's bytes; the block's (start, end, count) after it. None: render instead.

        The file must be the one the last write left (same identity, trusted as the
        directory's is) and every line one a render finds again as managed; each removed
        line must be found, byte for byte, where the rows say it is. Only those lines and one
        byte are read: the unchanged bytes go from the old file to the new one in the kernel
        (a MEMORY.md of 100,000 facts is ~19 MB).
        """
        meta = self._meta
        if not self._splice or meta.get("synced") != "1":
            return None
        start, end, count = int(meta["block_start"]), int(meta["block_end"]), int(meta["count"])
        if count == 0 or not meta["memory"]:
            return None
        if not self._settled({"dir": meta["memory"], "checked_ns": meta["memory_checked"]}):
            return None
        if db.execute("SELECT 1 FROM files WHERE kind = 0 AND spliceable = 0 LIMIT 1").fetchone():
            return None  # a line a render would not find again as managed: render in full
        fs, path = self.store.fs, self.store.root / INDEX_NAME
        try:
            fd = fs.open(path, READ_FLAGS)
        except OSError:
            return None  # missing, unreadable or a symlink: rendered (never read through)
        try:
            try:
                st = fs.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or _identity(st) != meta["memory"]:
                    return None
                if st.st_size < end or fs.pread(fd, 1, end - 1) != b"\n":
                    return None
                pieces = _Pieces(st.st_size)
                for kind, offset, line in self._ops:
                    at = start + offset
                    if kind == "del":
                        if pieces.read(fs, fd, pieces.take(at, len(line))) != line:
                            return None
                        end, count = end - len(line), count - 1
                    else:
                        if at > end:
                            return None
                        pieces.insert(at, line)
                        end, count = end + len(line), count + 1
            except OSError:
                return None  # unreadable now: rendered from what can be read
            if count <= 0:
                return None  # no block any more: the render decides what is left
            if self._ops:
                atomic_write(fs, path, functools.partial(pieces.write, fs, fd))
        finally:
            fs.close(fd)
        return start, end, count

    def _write_rendered(self, db: sqlite3.Connection) -> tuple[int, int, int]:
        """MEMORY.md rendered from the rows around what it holds now (``index_file``)."""
        fs, root = self.store.fs, self.store.root
        try:
            raw, _ = read_file(fs, root / INDEX_NAME)
        except OSError:
            raw = b""  # missing, unreadable or a symlink: never read through
        data, start, end, count = self._rendered(db, raw)
        write_index(fs, root, raw, data)
        return start, end, count

    def _rendered(self, db: sqlite3.Connection, raw: bytes) -> tuple[bytes, int, int, int]:
        """``render_index`` over the rows' lines: hand-written lines kept, managed regenerated."""
        query = "SELECT line FROM files WHERE kind = 0 ORDER BY kind, fact_name, fact_id, name"
        managed = [f"{r[0]}\n" for r in db.execute(query)]
        prefix, block, suffix = render_parts(raw.decode("utf-8", errors="surrogateescape"),
                                             managed)

        def encode(text: str) -> bytes:
            return text.encode("utf-8", errors="surrogateescape")

        head, body = encode(prefix), encode(block)
        return head + body + encode(suffix), len(head), len(head) + len(body), len(managed)

    # -- the file ----------------------------------------------------------------------------

    def _commit(self, db: sqlite3.Connection, *, observe: bool = False) -> None:
        """Save the checkpoint and commit; ``observe``: after this write, record the directory
        as it is now (the rows include every file this write touched)."""
        if self._ops and db.execute(
            "SELECT count(*) > ? FROM lines_pending", (_PENDING,)
        ).fetchone()[0]:
            self._rebase(db)  # the offset sums stay short: O(n) once per ``_PENDING`` keys
        if observe:
            checked = time.time_ns()
            try:
                self._meta["dir"], self._meta["checked_ns"] = (
                    _dir_identity(self.store.root), str(checked)
                )
            except OSError:
                self._meta["dir"] = ""
        if self._ours:
            self._meta["ours"] = json.dumps(self._ours)
        db.execute("DELETE FROM meta")
        db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(self._meta.items()))
        db.execute("COMMIT")
        self._ops, self._changed, self._splice = [], False, True
        db.execute("BEGIN IMMEDIATE")  # the rest of this operation is one transaction again

    def close(self) -> None:
        """Release the connection (a host shutting down; the next write opens it again)."""
        self._drop()

    def _drop(self) -> None:
        db, self._db = self._db, None
        self.ready = self._deferred = False
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                if db.in_transaction:
                    db.execute("ROLLBACK")
            with contextlib.suppress(sqlite3.Error):
                db.close()

    def _open(self) -> sqlite3.Connection | None:
        """A read-write connection; a corrupt or foreign file is ours and derived: replaced."""
        for attempt in (1, 2):
            try:
                if not self._safe():
                    return None
                new = not self.path.exists()
                if new:
                    from ..filemodes import create_private_file

                    create_private_file(self.path)
                db = sqlite3.connect(
                    self.path, timeout=5.0, isolation_level=None, check_same_thread=False
                )
                try:
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute("PRAGMA synchronous=NORMAL")
                    # A checkpointed WAL is cut back to 4 MB (else it stays as large as the
                    # biggest transaction ever was).
                    db.execute("PRAGMA journal_size_limit=4194304")
                    if new or not db.execute(
                        "SELECT 1 FROM sqlite_master WHERE name = 'files'"
                    ).fetchone():
                        for statement in (*_DROP, *_DDL):
                            db.execute(statement)
                    return db
                except BaseException:
                    db.close()
                    raise
            except sqlite3.DatabaseError:
                if attempt == 2 or not self._remove():
                    return None
            except OSError:
                return None
        return None

    def _safe(self) -> bool:
        """Never use a file that is not ours: another owner, writable by others, not regular."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return True
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022:
            return False
        return not (hasattr(os, "getuid") and st.st_uid != os.getuid())

    def _remove(self) -> bool:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass
            except OSError:
                return False
        return True

