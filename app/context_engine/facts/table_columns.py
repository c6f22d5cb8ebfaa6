"""Both stores' facts as columns, for a table of many: no ``Fact`` object per row (issue 18).

A long-lived viewer (the app) lists 100,000 facts as a handful of lists — one per field — not
as 100,000 objects. Each derived-index row is checked against its file's lstat identity with
the racy rule of ``derived_index.Row.trusted``; files the index cannot vouch for are read and
parsed, and the index is told, exactly as ``facts/table_listing.py`` does. Bodies are never
read for a row the index vouches for: the index holds them, and :func:`search_files` looks
words up in it. A parsed row's body is not in the index the viewer listed (or may not be,
when the index cannot be written), so its lowercased search text is kept (``texts``).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import struct
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import derived_index
from .codec import ParsedFact
from .derived_index import FactIndex, Identity
from .model import Diagnostic, Fact
from .store import (
    _BATCH,
    INDEX_NAME,
    Store,
    _diagnostic,
    _unreadable,
    gc_paused,
    identity_of,
)

_FACT, _DIAGNOSTIC = 0, 1
_IDENTITY = struct.Struct("<QQQqqQ")  # (dev, ino, size, mtime_ns, ctime_ns, mode)
# The list fields only: a listing never pulls a body out of its overflow pages.
_QUERY = (
    "SELECT name, dev, ino, size, mtime_ns, ctime_ns, mode, checked_ns, kind, id, revision,"
    " fact_name, title, description, type, scope, created_at, updated_at, encoding, diag_line"
    " FROM files"
)
# Searched per word: the fields of ``search_text`` (name, title, description, body, type, scope).
_SEARCHED = ("fact_name", "title", "description", "body", "type")


def search_text(name: str, title: str, description: str, body: str, kind: str,
                scope: str) -> str:
    """The lowercased text a search word is looked for in (one row's fields)."""
    return "\n".join((name, title, description, body, kind, scope)).lower()


def packed(identity: Sequence[int]) -> bytes | tuple[int, ...]:
    """An lstat identity as 48 bytes (a 6-tuple of ints is ~0.3 kB); as it is if it won't fit."""
    try:
        return _IDENTITY.pack(*identity)
    except struct.error:
        return tuple(identity)


def unpacked(value: bytes | tuple[int, ...]) -> tuple[int, ...]:
    """The identity :func:`packed` packed."""
    return _IDENTITY.unpack(value) if isinstance(value, bytes) else value


def stamp_identity(device: int, inode: int, size: int, mtime_ns: int) -> bytes | tuple[int, ...]:
    """A fact's ``FileStamp`` as an identity that no lstat equals (ctime -1, mode 0)."""
    return packed((device, inode, size, mtime_ns, -1, 0))


@dataclass(slots=True)
class FactColumns:
    """Active facts as parallel lists (row ``i`` is every list's ``i``-th item).

    Sorted by (name, scope, id) as a full snapshot lists them. ``store`` is the index into
    ``roots`` of the row's store folder; ``texts`` holds the lowercased search text of rows
    whose body the listed index may not hold (parsed here, or patched in later).
    """

    roots: tuple[Path, ...] = ()
    scopes: tuple[str, ...] = ()  # each store's scope, as ``roots``
    store: bytearray = field(default_factory=bytearray)
    file: list[str] = field(default_factory=list)
    id: list[str] = field(default_factory=list)
    revision: list[int] = field(default_factory=list)
    name: list[str] = field(default_factory=list)
    title: list[str] = field(default_factory=list)
    description: list[str] = field(default_factory=list)
    type: list[str] = field(default_factory=list)
    scope: list[str] = field(default_factory=list)
    created: list[str | None] = field(default_factory=list)
    updated: list[str | None] = field(default_factory=list)
    ident: list[bytes | tuple[int, ...]] = field(default_factory=list)  # packed lstat identity
    texts: dict[int, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    reused: int = 0  # rows taken from an earlier listing (``list_columns``' ``previous``)

    def __len__(self) -> int:
        return len(self.id)

    def append_fact(self, store: int, fact: Fact, body: str,
                    ident: bytes | tuple[int, ...] | None = None) -> int:
        """Add one parsed fact (its body kept as search text); its row number."""
        row = len(self.id)
        path = fact.path
        self.store.append(store)
        self.file.append(path.name if path is not None else f"{fact.name}.md")
        self.id.append(fact.id)
        self.revision.append(fact.revision)
        self.name.append(fact.name)
        self.title.append(fact.title)
        self.description.append(fact.description)
        self.type.append(fact.type)
        self.scope.append(fact.scope)
        self.created.append(None if fact.created_at is None else fact.created_at.isoformat())
        self.updated.append(None if fact.updated_at is None else fact.updated_at.isoformat())
        st = fact.stamp
        if ident is None:
            ident = stamp_identity(st.device, st.inode, st.size, st.mtime_ns) \
                if st is not None else b""
        self.ident.append(ident)
        self.texts[row] = search_text(fact.name, fact.title, fact.description, body,
                                      fact.type, fact.scope)
        return row

    def ordered(self, order: Sequence[int]) -> FactColumns:
        """The same rows in ``order`` (row numbers of this table)."""
        def take(values: list[Any]) -> list[Any]:
            return list(map(values.__getitem__, order))

        where = {old: new for new, old in enumerate(order) if old in self.texts} \
            if self.texts else {}
        return FactColumns(
            self.roots, self.scopes, bytearray(map(self.store.__getitem__, order)),
            take(self.file), take(self.id), take(self.revision), take(self.name),
            take(self.title), take(self.description), take(self.type), take(self.scope),
            take(self.created), take(self.updated), take(self.ident),
            {where[old]: text for old, text in self.texts.items() if old in where},
            self.diagnostics, self.reused,
        )


Progress = Callable[[int, int], None]


def list_columns(stores: Iterable[Store],
                 previous: tuple[FactColumns, Sequence[int]] | None = None,
                 progress: Progress | None = None) -> FactColumns:
    """List ``stores`` (the project store, then the global one) into columns.

    The same facts, fields and order as ``table_listing.list_stores`` (without bodies).
    ``previous`` (an earlier listing and its live rows): a row whose file has the identity it
    had then is taken from it — the very strings, so a relisting (F5) of 100,000 unchanged
    facts holds no second copy of them while the old rows are still on screen.

    Files no index row vouches for are parsed and committed to their store's index every
    ``_BATCH`` files: an interrupted first read keeps its work, and another reader of the
    index (:func:`indexed_columns`) sees the rows committed so far. ``progress(done, total)``
    is called after each batch (files read so far, files to read in both stores); what it
    raises stops the listing there, every committed batch kept.
    """
    stores = list(stores)
    out = FactColumns(tuple(s.root for s in stores), tuple(s.scope for s in stores))
    with gc_paused():
        # Every store scanned and vouched for first, so the files to read are known in all.
        pending: list[_Unvouched] = []
        for number, store in enumerate(stores):
            old: dict[str, int] = {}
            if previous is not None:
                cols, live = previous
                if number < len(cols.roots) and cols.roots[number] == store.root:
                    tags, files = cols.store, cols.file
                    old = {files[i]: i for i in live if tags[i] == number}
            pending.append(_vouched_rows(number, store, out, old,
                                         previous[0] if previous else None))
        counted = _Counted(sum(len(p.listing) for p in pending), progress)
        for unvouched in pending:
            _read_rest(unvouched, out, counted)
        # (name, scope, id): tuples made in C, one sort of row numbers, then each column.
        # The store breaks ties as the order rows were added in did when each store was
        # listed whole before the next (the parsed rows now follow both stores' vouched ones).
        keys = list(zip(out.name, out.scope, out.id, out.store, strict=True))
        order = sorted(range(len(keys)), key=keys.__getitem__)
        del keys
        if any(a != b for a, b in zip(order, range(len(order)), strict=True)):
            diagnostics = out.diagnostics
            out = out.ordered(order)
            out.diagnostics = diagnostics
    out.diagnostics.sort(key=lambda d: str(d.path))
    return out


# The table's rows of one store from its covering index, in listing order (no table page).
_TABLE_QUERY = (
    "SELECT name, checked_ns, id, revision, fact_name, title, description, type, scope,"
    " created_at, updated_at FROM files INDEXED BY files_table WHERE kind = 0"
    " ORDER BY fact_name, scope, id, name"
)
# What the files are checked against: each row's recorded identity (a narrow index).
_IDENTITY_QUERY = (
    "SELECT name, dev, ino, size, mtime_ns, ctime_ns, mode, checked_ns"
    " FROM files INDEXED BY files_identity"
)
_DIAGNOSTIC_QUERY = "SELECT name, encoding, description, diag_line FROM files WHERE kind = 1"


@dataclass(slots=True)
class Indexed:
    """Both stores' facts as their indexes recorded them, not yet checked against the files.

    ``checked`` is each row's recording moment (row order): a row recorded again after this
    read (another process re-read its file) has another one, so a later check of the files
    never vouches for the version shown.
    """

    cols: FactColumns
    checked: list[int]


def indexed_columns(stores: Iterable[Store], limit: int | None = None) -> Indexed | None:
    """Every indexed fact of ``stores`` (the project store, then the global one), unvalidated.

    One query per store over its covering index ``files_table`` (no body, no lstat): what a
    table shows at once, while :func:`validated_columns` checks the files. The rows are those
    :func:`list_columns` lists when every file is as recorded, in the same order (files of
    one (name, scope, id) by file name). ``None``: a store without a usable index, or no row.
    ``limit``: a first page — each store's first ``limit`` rows (so the first ``limit`` of
    the listing are among them).
    """
    stores = list(stores)
    with gc_paused():  # ~1 million new objects, none of them cyclic
        fetched = _table_rows(stores, limit)
        if fetched is None or not any(fetched):
            return None
        return _indexed(stores, fetched)


def _table_rows(stores: list[Store], limit: int | None
                ) -> list[list[tuple[Any, ...]]] | None:
    """Each store's table rows (``_TABLE_QUERY``), ``None`` if a store has no usable index."""
    fetched: list[list[tuple[Any, ...]]] = []
    for store in stores:
        index = store.index
        if index is None:
            return None
        rows: list[tuple[Any, ...]] | None = None
        with index._using() as db:
            if db is not None:
                rows = db.execute(_TABLE_QUERY).fetchall() if limit is None else \
                    db.execute(f"{_TABLE_QUERY} LIMIT ?", (limit,)).fetchall()
        if rows is None:
            return None
        fetched.append(rows)
    return fetched


def _indexed(stores: list[Store], fetched: list[list[tuple[Any, ...]]]) -> Indexed:
    """The fetched rows of each store as columns, the stores' rows merged in listing order."""
    out = FactColumns(tuple(s.root for s in stores), tuple(s.scope for s in stores))
    checked: list[int] = []
    merged = sum(map(bool, fetched)) > 1  # each store's rows are in order: merge them
    for number, (store, rows) in enumerate(zip(stores, fetched, strict=True)):
        if not rows:
            continue
        (files, stamps, ids, revisions, names, titles, descriptions, types, scopes,
         created, updated) = map(list, zip(*rows, strict=True))
        rows.clear()
        if None in scopes:
            scopes = [s or store.scope for s in scopes]
        out.store.extend(bytes([number]) * len(files))
        out.file += files
        out.id += ids
        out.revision += revisions
        out.name += names
        out.title += titles
        out.description += descriptions
        out.type += types
        out.scope += scopes
        out.created += created
        out.updated += updated
        checked += stamps
    out.ident = [()] * len(out.file)  # unknown until the files are checked
    if merged:
        keys = list(zip(out.name, out.scope, out.id, strict=True))
        order = sorted(range(len(keys)), key=keys.__getitem__)
        del keys
        if any(a != b for a, b in zip(order, range(len(order)), strict=True)):
            out = out.ordered(order)
            checked = list(map(checked.__getitem__, order))
    return Indexed(out, checked)


def validated_columns(stores: Iterable[Store], shown: Indexed) -> FactColumns:
    """What :func:`list_columns` lists, given the unvalidated ``shown`` rows.

    Each store is scanned (one lstat per file) and every row's recorded identity read from a
    narrow index. When every file is vouched for by the very row shown (same identity,
    settled, recorded at the moment ``shown`` read) and no file lacks a row, the answer is
    ``shown``'s own lists with the identities filled in — nothing parsed, no string copied.
    Otherwise the full listing, reusing the shown rows whose files are as recorded.
    """
    stores = list(stores)
    cols = shown.cols
    racy = derived_index.RACY_NS
    pack = _IDENTITY.pack
    idents: list[bytes | tuple[int, ...]] = list(cols.ident)
    diagnostics: list[Diagnostic] = []
    vouched = True
    rows_of: list[dict[str, int]] = [{} for _ in stores]
    for i, (number, name) in enumerate(zip(cols.store, cols.file, strict=True)):
        rows_of[number][name] = i
    for number, store in enumerate(stores):
        listing, _present = scan_files(store.root, diagnostics)
        index = store.index
        identities: list[tuple[Any, ...]] | None = None
        broken: list[tuple[Any, ...]] = []
        if index is not None:
            with index._using() as db:
                if db is not None:
                    db.execute("BEGIN")
                    try:
                        identities = db.execute(_IDENTITY_QUERY).fetchall()
                        broken = db.execute(_DIAGNOSTIC_QUERY).fetchall()
                    finally:
                        db.execute("COMMIT")
        if identities is None:
            vouched = False
            break
        unparsed = {row[0]: row[1:] for row in broken}
        mine = rows_of[number]
        take, row_of = listing.pop, mine.pop
        root = store.root
        for row in identities:
            name = row[0]
            seen = take(name, None)
            i = row_of(name, -1)
            try:
                same = seen == pack(*row[1:7])
            except struct.error:
                same = seen == tuple(row[1:7])
            if seen is None or not same or not max(row[4], row[5]) < row[7] - racy:
                vouched = False
                continue
            if i >= 0:
                if shown.checked[i] == row[7]:
                    idents[i] = seen
                else:
                    vouched = False  # recorded again since it was shown
            elif name in unparsed:
                code, message, line = unparsed[name]
                diagnostics.append(Diagnostic(code, root / name, message, line))
            else:
                vouched = False  # a fact row recorded since the rows were shown
        if listing or mine:  # a file without a row, a row shown whose row is gone
            vouched = False
        if not vouched:
            break
    if not vouched:
        previous = replace(cols, ident=idents)
        return list_columns(stores, (previous, range(len(previous))))
    diagnostics.sort(key=lambda d: str(d.path))
    return replace(cols, ident=idents, diagnostics=diagnostics)


def scan_files(root: Path, diagnostics: list[Diagnostic]
               ) -> tuple[dict[str, bytes | tuple[int, ...]], set[str]]:
    """Each candidate fact file's packed identity, and every name in the folder.

    The filter and the diagnostics of ``Store._scan`` (symlinks, unreadable entries); only
    each file's identity is kept, not its ``DirEntry`` or ``stat_result`` (~0.8 kB each).
    """
    listing: dict[str, bytes | tuple[int, ...]] = {}
    present: set[str] = set()
    try:
        scan = os.scandir(root)
    except (FileNotFoundError, NotADirectoryError):
        return listing, present
    with scan as entries:
        for entry in entries:
            name = entry.name
            present.add(name)
            # As ``Store._scan`` filters and reports them.
            if name[-3:] != ".md" or name[0] == "." or name == INDEX_NAME:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            except OSError as exc:
                path = root / name
                diagnostics.append(_diagnostic(_unreadable(path, exc), path))
                continue
            if not stat.S_ISREG(st.st_mode):
                if stat.S_ISLNK(st.st_mode):
                    msg = f"{name}: symlinks are not read"
                    diagnostics.append(Diagnostic("symlink", root / name, msg))
                continue
            listing[name] = packed(identity_of(st))
    return listing, present


def read_unvouched(store: Store, names: Iterable[str], checked_ns: int,
                   diagnostics: list[Diagnostic]
                   ) -> list[tuple[str, Identity, int, ParsedFact | Diagnostic]]:
    """The files no row vouched for, each lstat-ed again and parsed (in name order).

    Each entry is what ``FactIndex.update`` records (``checked_ns``: when the scan began);
    every diagnostic, the parse's too, is added to ``diagnostics``.
    """
    root = store.root
    changed: list[tuple[str, Identity, int, ParsedFact | Diagnostic]] = []
    for name in sorted(names):
        path = root / name
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            diagnostics.append(_diagnostic(_unreadable(path, exc), path))
            continue
        if not stat.S_ISREG(st.st_mode):  # replaced since the scan
            if stat.S_ISLNK(st.st_mode):
                diagnostics.append(Diagnostic("symlink", path, f"{name}: symlinks are not read"))
            continue
        result = store.read_entry(path, st)
        if result is None:
            continue
        changed.append((name, identity_of(st), checked_ns, result))
        if isinstance(result, Diagnostic):
            diagnostics.append(result)
    return changed


@dataclass(slots=True)
class _Unvouched:
    """One scanned store's files its index did not vouch for, still to be read."""

    number: int
    store: Store
    listing: dict[str, bytes | tuple[int, ...]]  # the files to read (name → scanned identity)
    removed: list[str]  # indexed names no longer in the folder
    started: int  # before the scan: every lstat came after it (each row's ``checked_ns``)


@dataclass(slots=True)
class _Counted:
    """The files read so far of ``total``, told to ``progress`` after each batch."""

    total: int
    progress: Progress | None
    done: int = 0

    def read(self, count: int) -> None:
        self.done += count
        if self.progress is not None:
            self.progress(self.done, self.total)


def _vouched_rows(number: int, store: Store, out: FactColumns, old: dict[str, int],
                  before: FactColumns | None) -> _Unvouched:
    """One store: scan, and add the rows the index vouches for; the files left to read."""
    root, scope = store.root, store.scope
    racy = derived_index.RACY_NS
    started = time.time_ns()  # before the scan: every lstat comes after it
    diagnostics = out.diagnostics
    listing, present = scan_files(root, diagnostics)
    indexed: list[str] = []
    index = store.index
    usable = False
    if index is not None and listing:
        ids, revisions, names, titles = out.id, out.revision, out.name, out.title
        descriptions, types, scopes = out.description, out.type, out.scope
        created, updated, idents, files = out.created, out.updated, out.ident, out.file
        take = listing.pop
        pack = _IDENTITY.pack
        tag = out.store
        with index._using() as db:  # one streamed query of the list fields, no body
            if db is not None:
                usable = True
                cursor = db.execute(_QUERY)
                while batch := cursor.fetchmany(2000):
                    for row in batch:
                        name = row[0]
                        indexed.append(name)
                        seen = take(name, None)
                        if seen is None:
                            continue
                        try:
                            same = seen == pack(*row[1:7])
                        except struct.error:
                            same = seen == tuple(row[1:7])
                        if not same or not max(row[4], row[5]) < row[7] - racy:
                            listing[name] = seen  # changed since recorded: read below
                            continue
                        if row[8] == _DIAGNOSTIC:
                            diagnostics.append(Diagnostic(row[18], root / name, row[13],
                                                          row[19]))
                            continue
                        tag.append(number)
                        j = old.get(name, -1)
                        if j >= 0 and before is not None and before.ident[j] == seen:
                            out.reused += 1
                            files.append(before.file[j])
                            ids.append(before.id[j])
                            revisions.append(before.revision[j])
                            names.append(before.name[j])
                            titles.append(before.title[j])
                            descriptions.append(before.description[j])
                            types.append(before.type[j])
                            scopes.append(before.scope[j])
                            created.append(before.created[j])
                            updated.append(before.updated[j])
                            idents.append(before.ident[j])
                            continue
                        files.append(name)
                        ids.append(row[9])
                        revisions.append(row[10])
                        names.append(row[11])
                        titles.append(row[12])
                        descriptions.append(row[13])
                        types.append(row[14])
                        scopes.append(row[15] or scope)
                        created.append(row[16])
                        updated.append(row[17])
                        idents.append(seen)
        if not usable:
            indexed.clear()
    removed = [name for name in indexed if name not in present] if index is not None else []
    return _Unvouched(number, store, listing, removed, started)


def _read_rest(unvouched: _Unvouched, out: FactColumns, counted: _Counted) -> None:
    """Parse the files the index did not vouch for and tell the index, ``_BATCH`` at a time.

    Each batch is committed before ``counted`` is told: whatever stops the listing after it
    (the caller's progress raising, a killed process) leaves those rows in the index.
    """
    store, number, index = unvouched.store, unvouched.number, unvouched.store.index
    names = sorted(unvouched.listing)
    removed = unvouched.removed
    for begin in range(0, len(names), _BATCH):
        batch = names[begin:begin + _BATCH]
        # Every batch is checked against the moment its store's scan began, as a single
        # read of all of them was: a file changed within the racy window stays unvouched.
        changed = read_unvouched(store, batch, unvouched.started, out.diagnostics)
        for _name, identity, _, result in changed:
            if not isinstance(result, Diagnostic):
                out.append_fact(number, result.fact, result.fact.body, packed(identity))
        if index is not None and (changed or removed):
            index.update(changed, removed)
            removed = []  # dropped with the first batch: later readers never list them
        counted.read(len(batch))
    if index is not None and removed:  # nothing to read: only rows of files gone
        index.update((), removed)


Match = Callable[[str], bool]
_PROGRESS_STEPS = 2_000  # SQLite VM steps between two looks at ``cancelled`` (~µs each)


class SearchInterrupted(Exception):
    """A body search stopped because its caller no longer wants the answer."""


def search_files(index: FactIndex | None, scope: str, words: Sequence[str],
                 names: Iterable[str] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> set[str] | None:
    """File names of ``index``'s facts whose text holds every word (``None``: no index).

    The text is that of :func:`search_text`, lowercased as ``str.lower`` does: an ASCII word
    is matched by SQLite's ``LIKE`` (ASCII case folding, done in C), any other word by
    ``str.lower`` of each field in a Python function. ``names`` restricts the look-up to
    these files (a narrowing search, one lookup by primary key each).
    """
    if index is None:
        return None
    clauses: list[str] = []
    args: list[object] = []
    python_words = False
    for word in words:
        if word.isascii():
            pattern = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace(
                "_", "\\_") + "%"
            clauses.append("(" + " OR ".join(
                f"{column} LIKE ? ESCAPE '\\'" for column in _SEARCHED) + ")")
            args.extend([pattern] * len(_SEARCHED))
        else:
            python_words = True
            clauses.append("(" + " OR ".join(
                f"ce_holds({column}, ?)" for column in _SEARCHED) + ")")
            args.extend([word] * len(_SEARCHED))
    # The scope: every row of one store holds its store's scope (or the one it names).
    where = " AND ".join(clauses) if clauses else "1"
    query = f"SELECT name, scope FROM files WHERE kind = 0 AND ({where})"
    scoped = [w for w in words if w in scope]

    def scan(db: sqlite3.Connection) -> set[str]:
        if python_words:
            db.create_function("ce_holds", 2, _holds, deterministic=True)
        if scoped:  # a word found in the scope matches every row of the store by that clause
            return _search_scoped(db, words, scope, names, cancelled)
        if names is None:
            return {row[0] for row in db.execute(query, args)}
        one = f"{query} AND name = ?"
        return {row[0] for name in names for row in db.execute(one, (*args, name))}

    def run(db: sqlite3.Connection) -> set[str]:
        if cancelled is None:
            return scan(db)
        # A superseded search (a new keystroke, F5, a patch, closing) stops mid-scan: a
        # non-zero answer makes SQLite abort the statement with "interrupted".
        db.set_progress_handler(lambda: 1 if cancelled() else 0, _PROGRESS_STEPS)
        try:
            return scan(db)
        except sqlite3.OperationalError:
            if cancelled():
                raise SearchInterrupted() from None
            raise
        finally:
            db.set_progress_handler(None, 0)

    # A connection of its own: a scan of every body (~0.3-0.6 s at 100,000 facts) must not
    # hold the index's lock, which the store's writers and readers take.
    own = _reader(index)
    if own is not None:
        try:
            return run(own)
        except sqlite3.Error:
            pass
        finally:
            own.close()
    if cancelled is not None and cancelled():
        raise SearchInterrupted()
    with index._using() as db:
        if db is None:
            return None
        return run(db)
    return None  # the index broke while reading


def _reader(index: FactIndex) -> sqlite3.Connection | None:
    """A read-only connection to an index already opened and checked (else ``None``)."""
    if index._db is None or not index._writable:
        return None  # not opened (or immutable): the index's own connection, under its lock
    try:
        from .derived_index import _uri_path

        db = sqlite3.connect(f"file:{_uri_path(index.path)}?mode=ro", uri=True, timeout=2.0,
                             isolation_level=None)
    except sqlite3.Error:
        return None
    return db


def _search_scoped(db: sqlite3.Connection, words: Sequence[str], scope: str,
                   names: Iterable[str] | None,
                   cancelled: Callable[[], bool] | None = None) -> set[str]:
    """The rare search with a word inside the scope's name: checked row by row in Python."""
    query = f"SELECT name, {', '.join(_SEARCHED)}, scope FROM files WHERE kind = 0"
    rows: Iterable[tuple[Any, ...]]
    if names is None:
        rows = db.execute(query)
    else:
        one = f"{query} AND name = ?"
        rows = (row for name in names for row in db.execute(one, (name,)))
    found = set()
    for n, row in enumerate(rows):
        if cancelled is not None and not n % 1024 and cancelled():
            raise SearchInterrupted()
        text = search_text(row[1], row[2], row[3], row[4] or "", row[5], row[6] or scope)
        if all(word in text for word in words):
            found.add(row[0])
    return found


def _holds(text: str | None, word: str) -> bool:
    return text is not None and word in text.lower()
