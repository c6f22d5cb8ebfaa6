"""Patch the Facts snapshot with the few files that changed, instead of re-reading every one.

At 100,000 facts a full re-read (stat every file, rebuild every row) takes seconds; the
watcher names the files that changed, so a burst of outside writes costs what it touches.
Rows whose notes could change (they share an id, name, title or description key with a
changed fact) are rebuilt together with every fact sharing a key with them, which gives
exactly the notes a full rebuild would. Pure Python, for the read pool.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from context_engine.errors import FactFormatError
from context_engine.facts.model import Fact
from context_engine.facts.store import Store

from .fact_rows import FactRow, FactsSnapshot, _duplicate_keys, build_rows

MAX_CONTEXT = 5000  # more related facts than this: a full rebuild is as cheap


class NeedsFullRead(Exception):
    """A changed file could not be patched in (unreadable, outside the stores)."""


def fact_keys(fact: Fact) -> tuple[str, ...]:
    """Every key that relates two facts in the table's notes."""
    from context_engine.facts.equivalence import equivalence_keys

    return (*equivalence_keys(fact), *_duplicate_keys(fact), f"ref:{fact.scope}/{fact.name}")


class KeyIndex:
    """key → paths of the facts holding it (a str for one path, a set for several)."""

    def __init__(self, rows: Iterable[FactRow] = ()) -> None:
        self._table: dict[str, str | set[str]] = {}
        self.rows: dict[str, FactRow] = {}  # path → row, in snapshot order
        self.reset(rows)

    def reset(self, rows: Iterable[FactRow]) -> None:
        """Index exactly ``rows``."""
        self._table = {}
        self.rows = {}
        for row in rows:
            self.rows[str(row.fact.path)] = row
            self.add(row.fact, row.keys)

    def add(self, fact: Fact, keys: tuple[str, ...] = ()) -> None:
        """Index ``fact`` under its keys (given when already computed)."""
        path = str(fact.path)
        for key in keys or fact_keys(fact):
            held = self._table.get(key)
            if held is None:
                self._table[key] = path
            elif isinstance(held, str):
                if held != path:
                    self._table[key] = {held, path}
            else:
                held.add(path)

    def remove(self, fact: Fact, keys: tuple[str, ...] = ()) -> None:
        """Drop ``fact`` from its keys."""
        path = str(fact.path)
        for key in keys or fact_keys(fact):
            held = self._table.get(key)
            if held == path:
                del self._table[key]
            elif isinstance(held, set):
                held.discard(path)
                if len(held) == 1:
                    self._table[key] = next(iter(held))

    def holders(self, keys: Iterable[str]) -> set[str]:
        """Paths of every fact holding one of ``keys``."""
        out: set[str] = set()
        for key in keys:
            held = self._table.get(key)
            if isinstance(held, str):
                out.add(held)
            elif held is not None:
                out.update(held)
        return out


def read_changed(stores: Iterable[Store], paths: Iterable[str]) -> dict[str, Fact | None]:
    """The fact now at each changed fact file (``None``: gone); other paths are skipped.

    Raises :class:`NeedsFullRead` when one cannot be read or parsed (it becomes a diagnostic).
    """
    by_root = {Path(store.root): store for store in stores}
    out: dict[str, Fact | None] = {}
    for name in paths:
        path = Path(name)
        store = by_root.get(path.parent)
        if store is None or path.suffix != ".md" or path.name.startswith(".") or \
                path.name == "MEMORY.md":
            continue
        try:
            loaded = store.load(path)
        except FactFormatError as exc:
            raise NeedsFullRead(name) from exc
        out[name] = None if loaded is None else loaded.fact
    return out


@dataclass
class Patched:
    """The patched snapshot, the rows that left and came, and whether any fact changed."""

    snapshot: FactsSnapshot
    removed: tuple[FactRow, ...] = ()
    added: tuple[FactRow, ...] = ()
    changed: bool = True

    @property
    def rebuilt(self) -> int:
        """How many rows were built anew."""
        return len(self.added)


def _same(old: Fact, new: Fact | None) -> bool:
    return new is not None and (old.scope, old.id, old.revision, old.name, old.stamp) == (
        new.scope, new.id, new.revision, new.name, new.stamp)


def patch(snapshot: FactsSnapshot, index: KeyIndex, changed: dict[str, Fact | None]) -> Patched:
    """``snapshot`` with ``changed`` applied; ``index`` (built on it) is updated to match."""
    by_path = index.rows
    if all(p in by_path and _same(by_path[p].fact, f) for p, f in changed.items()):
        return Patched(snapshot, changed=False)  # the echo of a write already shown
    touched_keys: set[str] = set()
    removed: list[FactRow] = []
    for path, fact in changed.items():
        old = by_path.pop(path, None)
        if old is not None:
            touched_keys.update(old.keys or fact_keys(old.fact))
            index.remove(old.fact, old.keys)
            removed.append(old)
        if fact is not None:
            touched_keys.update(fact_keys(fact))
    new_facts = {path: fact for path, fact in changed.items() if fact is not None}
    # Rows whose notes may change, and every fact that shares a key with one of them.
    affected = index.holders(touched_keys) - set(new_facts)
    context_keys: set[str] = set(touched_keys)
    for path in affected:
        row = by_path.get(path)
        if row is not None:
            context_keys.update(row.keys or fact_keys(row.fact))
    context = index.holders(context_keys) - set(new_facts)
    if len(context) > MAX_CONTEXT:
        kept = dict(by_path)
        rows = tuple(_keep_text(r, kept) for r in build_rows(
            [*(r.fact for r in by_path.values()), *new_facts.values()]))
        index.reset(rows)
        return Patched(FactsSnapshot(rows, snapshot.diagnostics, snapshot.archived),
                       tuple(snapshot.rows), rows)
    facts = [by_path[p].fact for p in context if p in by_path]
    rebuilt = {str(r.fact.path): _keep_text(r, by_path)
               for r in build_rows([*facts, *new_facts.values()])}
    added: list[FactRow] = []
    for path in affected:
        if path in by_path and path in rebuilt:
            removed.append(by_path[path])
            by_path[path] = rebuilt[path]
            added.append(rebuilt[path])
    for path in new_facts:
        row = rebuilt[path]
        by_path[path] = row
        index.add(row.fact, row.keys)
        added.append(row)
    return Patched(FactsSnapshot(tuple(by_path.values()), snapshot.diagnostics,
                                 snapshot.archived), tuple(removed), tuple(added))


def _keep_text(row: FactRow, old: dict[str, FactRow]) -> FactRow:
    """``row`` rebuilt for its notes, with the search text of the unchanged fact it replaces.

    A listed row carries no body (``lazy``): its search text cannot be rebuilt from the fact.
    """
    before = old.get(str(row.fact.path))
    if before is None or before.fact is not row.fact or not before.lazy:
        return row
    return replace(row, haystack=before.haystack, lazy=True)


def merge_sorted(ordered: Sequence[FactRow], removed: tuple[FactRow, ...],
                 added: tuple[FactRow, ...], key: Callable[[FactRow], Any],
                 descending: bool) -> tuple[FactRow, ...]:
    """``ordered`` without ``removed`` and with ``added`` in place: no full re-sort."""
    gone = {id(r) for r in removed}
    out = [r for r in ordered if id(r) not in gone]
    if descending:
        out.reverse()
    for row in added:
        bisect.insort_right(out, row, key=key)
    if descending:
        out.reverse()
    return tuple(out)
