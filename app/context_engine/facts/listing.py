"""What ``list`` and ``memory`` show, at the cost of one lstat per file and one query (issue 14).

A listing needs each fact's list fields, never its body. ``list_store`` takes them from the
derived index for every file whose row it still vouches for (identity equal and settled, the
racy rule of ``derived_index.Row.trusted``), reads and parses only the other files (and tells
the index), and builds no ``Fact`` for an unchanged file. The answer is exactly what
``Store.snapshot()`` would list: the same facts, order and diagnostics.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from . import derived_index
from .model import Diagnostic, Fact, ParsedFact
from .store import Identity, Store, gc_paused, identity_of
from .watched import Look, look
from .watched import scan_store as scan_store  # re-exported from its former home here

if TYPE_CHECKING:
    from .memory import Memory


class ListedFact(NamedTuple):
    """The list fields of one active fact (no body); timestamps as ISO 8601 text."""

    file: str
    id: str
    revision: int
    name: str
    title: str
    description: str
    type: str
    scope: str
    created_at: str | None
    updated_at: str | None
    root: Path | None  # None: a fact read without its path (a remote catalog's)

    @property
    def path(self) -> Path | None:
        """The fact file, when known."""
        return None if self.root is None else self.root / self.file

    @property
    def reference(self) -> str:
        """The provider-visible reference, e.g. ``project/release-target.md``."""
        return f"{self.scope}/{self.name}.md"

    @classmethod
    def of(cls, fact: Fact) -> ListedFact:
        """The list fields of a fact read in full (a remote catalog's, a parse)."""
        path = fact.path
        return cls(
            f"{fact.name}.md" if path is None else path.name, fact.id, fact.revision, fact.name,
            fact.title, fact.description, fact.type, fact.scope, _iso(fact.created_at),
            _iso(fact.updated_at), None if path is None else path.parent,
        )


class Listing(NamedTuple):
    """Active facts sorted by (name, scope, id), and the files that could not be read.

    A named tuple, not a dataclass: a cold ``list`` or ``memory`` imports no ``dataclasses``
    (and its ``inspect``, ``ast``, ``dis``, ``tokenize``: ~4 ms a process).
    """

    facts: list[ListedFact]
    diagnostics: list[Diagnostic]


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())


# The (name, id) order of one store's snapshot, then (name, scope, id) across both.
_BY_NAME_ID = itemgetter(3, 1)
_BY_NAME_SCOPE_ID = itemgetter(3, 7, 1)


def list_store(store: Store, view: Look | None = None) -> Listing:
    """One store's active facts sorted by (name, id) and its diagnostics sorted by path.

    ``view``: the store's files now (``watched.look``; looked at here when not given).
    """
    if view is None:
        view = look([store])[0]
    racy = derived_index.RACY_NS
    index = store.index
    generation, rows = index.listed_at() if index is not None else (None, [])
    vouched = generation is not None and view.vouches(generation)
    if view.vouched and not vouched:
        view.walk()  # the rows moved on since the monitor was asked: every file looked at
    diagnostics = list(view.diagnostics)
    files = dict(view.files)
    gone = set(view.gone)
    root = store.root
    facts: list[ListedFact] = []
    removed: list[str] = []
    with gc_paused():
        take = files.pop
        for row in rows:
            name = row[0]
            st = take(name, None)
            if st is None:
                if not vouched or name in gone:
                    removed.append(name)
                    continue
            # The identity of ``identity_of`` and the racy rule, without building the tuple.
            elif not (
                st.st_mtime_ns == row[4]
                and st.st_ctime_ns == row[5]
                and st.st_ino == row[2]
                and st.st_size == row[3]
                and st.st_dev == row[1]
                and st.st_mode == row[6]
                and max(row[4], row[5]) < row[7] - racy
            ):
                files[name] = st  # changed since recorded: read below
                continue
            if row[8] == 0:
                facts.append(ListedFact(name, *row[9:18], root))  # type: ignore[call-arg]  # reason: the 9 list columns of _LISTED
            else:
                diagnostics.append(Diagnostic(row[18], root / name, row[13], row[19]))
        changed = _parse_rest(store, files, view.started, facts, diagnostics)
        facts.sort(key=_BY_NAME_ID)
    diagnostics.sort(key=lambda d: str(d.path))
    if index is not None:
        index.update(changed, removed, seen=view.seen, token=view.recording)
    return Listing(facts, diagnostics)


def _parse_rest(
    store: Store,
    files: dict[str, os.stat_result],
    checked_ns: int,
    facts: list[ListedFact],
    diagnostics: list[Diagnostic],
) -> list[tuple[str, Identity, int, ParsedFact | Diagnostic]]:
    """Read and parse the files no row vouched for; the rows the index should still record
    (a first build commits them in batches as it goes, as ``Store._resolve_misses`` does)."""
    from .store import _BATCH, _SHOWN_FROM

    changed: list[tuple[str, Identity, int, ParsedFact | Diagnostic]] = []
    root = store.root
    index = store.index
    progress = None
    if len(files) > _SHOWN_FROM:
        from .build_progress import Phase

        progress = Phase(f"indexing the {store.scope} store", len(files))
    for number, (name, st) in enumerate(files.items(), 1):
        if progress is not None and not number % 256:
            progress.done(number)
        result = store.read_entry(root / name, st)
        if result is None:
            continue
        changed.append((name, identity_of(st), checked_ns, result))
        if len(changed) >= _BATCH and index is not None:
            index.update(changed)  # kept when the command is interrupted
            changed.clear()
        if isinstance(result, Diagnostic):
            diagnostics.append(result)
        else:
            fact = result.fact
            facts.append(
                ListedFact(
                    name, fact.id, fact.revision, fact.name, fact.title, fact.description,
                    fact.type, fact.scope, _iso(fact.created_at), _iso(fact.updated_at), root,
                )
            )
    if progress is not None:
        progress.done(len(files))
        progress.end()
    return changed


def list_memory(memory: Memory) -> Listing:
    """Both stores' listings: facts by (name, scope, id), diagnostics project first."""
    facts: list[ListedFact] = []
    diagnostics: list[Diagnostic] = []
    stores = memory.stores.all()
    for store, view in zip(stores, look(stores), strict=True):
        part = list_store(store, view)
        facts += part.facts
        diagnostics += part.diagnostics
    facts.sort(key=_BY_NAME_SCOPE_ID)
    return Listing(facts, diagnostics)


def listing_of(facts: Iterable[Fact], diagnostics: Iterable[Diagnostic]) -> Listing:
    """A listing of facts read in full (already in listing order)."""
    return Listing([ListedFact.of(f) for f in facts], list(diagnostics))
