"""``list --json`` and ``memory``'s facts printed by the derived index: one query (issue 14).

Each recorded row keeps its fact's printed form up to the freshness (``facts/rendered.py``).
A listing lstats each file (as ``listing.list_store``), checks every row's identity in one read
transaction and, when all are vouched for, lets SQLite append each freshness and join the rows
in listing order — no Python object per fact. Files no row vouches for are read, parsed and
recorded first, then the check runs once more; whatever still is not printable this way
(no index, an index that cannot be written, a fact the template does not write, a declared
scope of the other store) returns ``None`` and the caller lists as ``listing.list_memory``.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from . import derived_index
from .model import Diagnostic
from .rendered import freshness_sql
from .store import Identity, identity_of
from .watched import look

if TYPE_CHECKING:
    from .memory import Memory
    from .model import ParsedFact
    from .store import Store


class PrintedFacts(NamedTuple):
    """Both stores' active facts as printed text, and the listing's diagnostics."""

    total: int  # active facts
    text: bytes  # UTF-8: the facts' S12 objects joined by ``,`` lines, or ``memory``'s lines
    diagnostics: list[Diagnostic]  # project first, each store's sorted by path


def printed_facts(
    memory: Memory,
    form: str,
    now: datetime,
    edges: dict[str, tuple[datetime, datetime]],
    default: tuple[datetime, datetime],
) -> PrintedFacts | None:
    """Both stores' facts printed in ``form`` (``"json"`` or ``"lines"``), or ``None``.

    ``now``, ``edges`` and ``default``: the freshness clock (``cli.listed.Clock``).
    """
    stores = memory.stores.all()
    indexes = [store.index for store in stores]
    if any(index is None for index in indexes):
        return None
    views = look(stores)
    freshness = freshness_sql(now, edges, default)
    recorded: list[set[str]] = [set() for _ in stores]
    usable = [index for index in indexes if index is not None]
    written = [False for _ in stores]
    for attempt in range(3):
        result = derived_index.print_facts(usable, views, recorded, form, freshness)
        if result is None:
            return None
        if isinstance(result, derived_index.Printed):
            for n, view in enumerate(views):
                if not written[n] and not view.vouched and view.recording is not None:
                    # Every row checked against a walk: the monitor may vouch for them next time.
                    usable[n].update((), (), seen=view.seen, token=view.recording)
            scanned = [view.diagnostics for view in views]
            return PrintedFacts(result.total, result.text,
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
