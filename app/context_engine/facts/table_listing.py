"""Both stores' facts for a table of many, validated against the files, bodies not kept.

A long-lived viewer (the app) lists 100,000 facts without holding 100,000 parsed bodies: each
derived-index row is checked against its file's lstat identity with the racy rule of
``derived_index.Row.trusted``; files the index cannot vouch for (changed, new, unindexed) are
read and parsed, and the index is told, exactly as ``Store.snapshot`` does. Nothing is kept
in the store's in-process cache. The answer equals a full snapshot's facts (same order, same
fields) except that ``body`` and ``extra`` are empty: the body of each fact is handed to the
caller once (``on_fact``) for whatever it derives from it, e.g. a search text.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from . import derived_index
from .derived_index import Identity
from .model import Diagnostic, Fact, FileStamp, Scope
from .store import Store, gc_paused, identity_of
from .table_columns import packed as _packed
from .table_columns import read_unvouched, scan_files

# Called once per listed fact with its (body-less) fact and its body; it may answer an equal
# fact to keep instead (e.g. the same one of an earlier listing: a relisting then holds no
# second copy of what did not change).
OnFact = Callable[[Fact, str], "Fact | None"]

_FACT, _DIAGNOSTIC = 0, 1


@dataclass(frozen=True, slots=True)
class Listing:
    """Every active fact (body-less, sorted by name, scope, id) and the unreadable files."""

    facts: tuple[Fact, ...]
    diagnostics: tuple[Diagnostic, ...]


def list_stores(stores: Iterable[Store], on_fact: OnFact | None = None) -> Listing:
    """List ``stores`` (the project store, then the global one); see the module docstring."""
    facts: list[Fact] = []
    diagnostics: list[Diagnostic] = []
    with gc_paused():
        for store in stores:
            _list_store(store, facts, diagnostics, on_fact)
        facts.sort(key=lambda f: (f.name, f.scope, f.id))
    diagnostics.sort(key=lambda d: str(d.path))
    return Listing(tuple(facts), tuple(diagnostics))


def first_rows(store: Store, limit: int, on_fact: OnFact | None = None) -> list[Fact]:
    """Up to ``limit`` facts of ``store`` its index vouches for, each file checked by lstat.

    A first page in milliseconds (no directory scan): files that fail the check are left out
    here and come with the full listing.
    """
    index = store.index
    out: list[Fact] = []
    if index is None:
        return out
    root, scope = store.root, store.scope

    def visit(row: tuple[Any, ...]) -> None:
        if row[8] != _FACT:
            return
        path = _child(root, row[0])
        try:
            key = identity_of(os.lstat(path))
        except OSError:
            return
        if _trusted(row, key):
            fact = _fact(row, path, scope)
            if on_fact is not None:
                fact = on_fact(fact, row[18]) or fact
            out.append(fact)

    index.each_listed(visit, limit)
    return out


def _child(root: Path, name: str) -> Path:
    """``root / name`` through pathlib's fast child constructor when it has one."""
    make = getattr(root, "_make_child_relpath", None)
    child: Path = make(name) if make is not None else root / name
    return child


def _trusted(row: tuple[Any, ...], key: Identity) -> bool:
    """``row`` records exactly ``key``, settled before it was checked (the racy rule)."""
    return bool(
        key[0] == row[1] and key[1] == row[2] and key[2] == row[3] and key[3] == row[4]
        and key[4] == row[5] and key[5] == row[6]
        and max(key[3], key[4]) < row[7] - derived_index.RACY_NS
    )


def _stamp(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _fact(row: tuple[Any, ...], path: Path, scope: Scope) -> Fact:
    """The body-less fact of an index row."""
    return Fact(
        row[9], row[10], row[11], row[12], row[13], row[14], row[15] or scope, "",
        _stamp(row[16]), _stamp(row[17]), path, FileStamp(row[1], row[2], row[3], row[4]),
    )


def _list_store(
    store: Store, facts: list[Fact], diagnostics: list[Diagnostic], on_fact: OnFact | None
) -> None:
    """One store: scan, trust the index where it vouches, parse the rest, tell the index."""
    root, scope = store.root, store.scope
    racy_from = time.time_ns() - derived_index.RACY_NS
    listing, present = scan_files(root, diagnostics)
    indexed: list[str] = []

    def visit(row: tuple[Any, ...]) -> None:
        name = row[0]
        indexed.append(name)
        seen = listing.get(name)
        # Exactly the lstat identity the row records, settled before the scan (_trusted).
        if seen is None or seen != _packed(row[1:7]) \
                or not max(row[4], row[5]) < row[7] - derived_index.RACY_NS:
            return
        del listing[name]
        path = _child(root, name)
        if row[8] == _DIAGNOSTIC:
            diagnostics.append(Diagnostic(row[19], path, row[13], row[20]))
            return
        fact = _fact(row, path, scope)
        if on_fact is not None:
            fact = on_fact(fact, row[18]) or fact
        facts.append(fact)

    index = store.index
    if index is not None and not index.each_listed(visit):
        indexed.clear()
    checked_ns = racy_from + derived_index.RACY_NS  # the scan began then: every lstat is later
    changed = read_unvouched(store, listing, checked_ns, diagnostics)
    for _name, _identity, _, result in changed:
        if isinstance(result, Diagnostic):
            continue
        full = result.fact
        fact = Fact(full.id, full.revision, full.name, full.title, full.description, full.type,
                    full.scope, "", full.created_at, full.updated_at, full.path, full.stamp)
        if on_fact is not None:
            fact = on_fact(fact, full.body) or fact
        facts.append(fact)
    if index is not None:
        removed = [name for name in indexed if name not in present]
        if changed or removed:
            index.update(changed, removed)
