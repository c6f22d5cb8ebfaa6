"""``list --json`` and ``memory``'s facts printed by the derived index, in chunks (issue 14).

Each recorded row keeps its fact's printed form up to the freshness (``facts/rendered.py``).
A listing lstats each file (as ``listing.list_store``), checks every row's identity in one read
transaction and, when all are vouched for, lets SQLite append each freshness and join the rows
in listing order — no Python object per fact. Files no row vouches for are read, parsed and
recorded first, then the check runs once more; whatever still is not printable this way
(no index, an index that cannot be written, a fact the template does not write, a declared
scope of the other store) returns ``None`` and the caller lists as ``listing.list_memory``.

The rows are joined ``CHUNK_ROWS`` at a time (ranges of fact names), not in one buffer: at
100,000 facts one ``group_concat`` of the whole listing (54 MB) and its copies cost more in
fresh memory pages than the query itself (docs/decisions.md, "list --json in chunks").
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from . import derived_index
from .model import Diagnostic
from .rendered import ITEM_INDENT, freshness_sql
from .store import Identity, identity_of
from .watched import look

if TYPE_CHECKING:
    import sqlite3

    from .memory import Memory
    from .model import ParsedFact
    from .store import Store


# Rows printed per chunk (at most, but for rows sharing the last one's fact name).
CHUNK_ROWS = 2048
SEPARATORS = {"json": f",\n{ITEM_INDENT}".encode(), "lines": b"\n"}


class PrintedFacts(NamedTuple):
    """Both stores' active facts as printed text, and the listing's diagnostics."""

    total: int  # active facts
    # UTF-8, to be joined by ``separator``: the facts' S12 objects (``,`` lines between them)
    # or ``memory``'s lines, in listing order.
    chunks: list[bytes]
    separator: bytes
    diagnostics: list[Diagnostic]  # project first, each store's sorted by path

    @property
    def text(self) -> bytes:
        """The chunks joined: every fact printed."""
        return self.separator.join(self.chunks)

    def parts(self) -> list[bytes]:
        """``text`` as pieces to write one after the other (no copy of the whole listing)."""
        out: list[bytes] = []
        for chunk in self.chunks:
            if out:
                out.append(self.separator)
            out.append(chunk)
        return out


def printed_facts(
    memory: Memory,
    form: str,
    now: datetime,
    edges: dict[str, tuple[datetime, datetime]],
    default: tuple[datetime, datetime],
    sink: Callable[[bytes], None] | None = None,
) -> PrintedFacts | None:
    """Both stores' facts printed in ``form`` (``"json"`` or ``"lines"``), or ``None``.

    ``now``, ``edges`` and ``default``: the freshness clock (``cli.listed.Clock``). ``sink``:
    each chunk is handed to it as soon as it is printed, in order, and ``chunks`` stays empty;
    when the result is ``None`` after some chunks went to it (the index broke off, or a row the
    template does not write came up), what it took is the listing's beginning all the same.
    """
    stores = memory.stores.all()
    indexes = [store.index for store in stores]
    if any(index is None for index in indexes):
        return None
    views = look(stores)
    printer = _printer(form, freshness_sql(now, edges, default), sink)
    recorded: list[set[str]] = [set() for _ in stores]
    usable = [index for index in indexes if index is not None]
    written = [False for _ in stores]
    for attempt in range(3):
        result = derived_index.print_facts(usable, views, recorded, printer)
        if result is None:
            return None
        if isinstance(result, derived_index.Printed):
            for n, view in enumerate(views):
                if not written[n] and not view.vouched and view.recording is not None:
                    # Every row checked against a walk: the monitor may vouch for them next time.
                    usable[n].update((), (), seen=view.seen, token=view.recording)
            scanned = [view.diagnostics for view in views]
            return PrintedFacts(result.total, result.chunks, SEPARATORS[form],
                                _diagnostics(stores, scanned, result.diagnostics))
        if attempt == 2:
            return None  # still not vouched for (another writer, an index we cannot write)
        for n, store in enumerate(stores):
            view = views[n]
            if n in result.stale:
                view.walk()  # the monitor's vouch no longer holds: every file looked at
                recorded[n] = set()
                continue
            if not result.changed[n] and not result.removed[n]:
                continue
            changes: list[tuple[str, Identity, int, ParsedFact | Diagnostic]] = []
            for name in result.changed[n]:
                st = view.files[name]
                entry = store.read_entry(store.root / name, st)
                if entry is None:
                    del view.files[name]  # gone since the look
                    continue
                changes.append((name, identity_of(st), view.started, entry))
            after = usable[n].record(
                changes, result.removed[n], seen=view.seen, token=view.recording
            )
            if after is None:
                return None
            written[n] = True
            view.seen = after
            recorded[n] = {c[0] for c in changes if derived_index.recordable(c[3])}
    return None


def _printer(
    form: str, freshness: tuple[str, list[Any]], sink: Callable[[bytes], None] | None
) -> derived_index.Printer:
    """Prints the attached stores' active rows in ``form``, ``CHUNK_ROWS`` rows a query.

    ``sink``: takes each chunk as it is printed (none are kept), else they are returned.

    ``freshness``: ``rendered.freshness_sql``. A chunk is a range of fact names, (low, high],
    ``high`` the name ``CHUNK_ROWS`` rows on in the largest store (all rows of that name
    included), so every chunk is one index range per store, merged in listing order by SQLite.
    """
    expression, args = freshness
    if form == "json":
        item = f"json_head || {expression} || ?"
        item_args = [*args, f'"\n{ITEM_INDENT}}}']
    else:
        # Not ``printf``: 40 ms faster at 100k, but its ``%s`` stops at a NUL (YAML's ``\\0``).
        item = (
            "'  ' || scope || '/' || fact_name || '.md  ' || id || '  r' || revision || '  '"
            f" || type || '  ' || {expression} || '  — ' || description"
        )
        item_args = list(args)
    separator = SEPARATORS[form].decode()

    def print_rows(db: sqlite3.Connection, schemas: list[str]) -> tuple[int, list[bytes]] | None:
        render = "files INDEXED BY files_render WHERE kind = 0"
        for schema in schemas:
            unnamed = f"SELECT 1 FROM {schema}.{render} AND fact_name IS NULL LIMIT 1"
            if db.execute(unnamed).fetchone() is not None:
                return None  # outside every range below
        sizes = [db.execute(f"SELECT count(*) FROM {schema}.files").fetchone()[0]
                 for schema in schemas]
        # The chunk bounds come from the small name index (a row's name only): they only
        # decide the chunks' sizes, the ranges below cover every name whatever they are.
        largest = schemas[sizes.index(max(sizes))]
        probe = f"SELECT fact_name FROM {largest}.files INDEXED BY files_fact_name WHERE"
        queries: dict[tuple[bool, bool], str] = {}

        def query(low: bool, high: bool) -> str:
            text = queries.get((low, high))
            if text is None:
                where = (" AND fact_name > ?" if low else "") + (
                    " AND fact_name <= ?" if high else ""
                )
                sides = [
                    f"SELECT fact_name, scope, id, name, {item} AS item,"
                    f" json_head IS NOT NULL AS ok FROM {schema}.{render}{where}"
                    for schema in schemas
                ]
                source = (
                    f"{' UNION ALL '.join(sides)} ORDER BY fact_name, scope, id, name"
                    if len(sides) > 1
                    else sides[0]
                )
                text = queries[low, high] = (
                    f"SELECT count(*), sum(ok), group_concat(item, ?) FROM ({source})"
                )
            return text

        chunks: list[bytes] = []
        total = 0
        low: Any = None
        factory = db.text_factory
        while True:
            if low is None:
                row = db.execute(f"{probe} fact_name IS NOT NULL ORDER BY fact_name"
                                 " LIMIT 1 OFFSET ?", (CHUNK_ROWS - 1,)).fetchone()
            else:
                row = db.execute(f"{probe} fact_name > ? ORDER BY fact_name LIMIT 1 OFFSET ?",
                                 (low, CHUNK_ROWS - 1)).fetchone()
            high = None if row is None else row[0]
            bounds = [b for b in (low, high) if b is not None]
            db.text_factory = bytes
            try:
                count, printable, text = db.execute(
                    query(low is not None, high is not None),
                    [separator, *[a for _ in schemas for a in (*item_args, *bounds)]],
                ).fetchone()
            finally:
                db.text_factory = factory
            if count != (printable or 0):
                return None  # a row the template could not write (the generic encoder decides)
            if count:
                total += count
                if sink is None:
                    chunks.append(text)
                else:
                    sink(text)
            if high is None:
                return total, chunks
            low = high

    return print_rows


def _diagnostics(
    stores: tuple[Store, ...],
    scanned: list[list[Diagnostic]],
    rows: list[list[tuple[str, str, str, int | None]]],
) -> list[Diagnostic]:
    """Each store's scan and row diagnostics sorted by path, project first (``list_store``)."""
    out: list[Diagnostic] = []
    for store, found, part in zip(stores, scanned, rows, strict=True):
        root = store.root
        mine = [*found, *(Diagnostic(code, root / name, message, line)
                          for name, code, message, line in part)]
        mine.sort(key=lambda d: str(d.path))
        out += mine
    return out
