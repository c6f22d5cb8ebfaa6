"""Reading one fact through the derived index: validate that file, parse nothing else (#14).

``load_indexed`` is ``Store.load`` for a file whose row the index still vouches for (identity
equal and settled): its bytes are read (for the digest), never parsed. ``candidates`` answers
"which active facts of this store carry this id or one of these names" exactly as a full
snapshot would — one lstat per file, the identity columns of every row and the whole rows of
the indexed matches only; a file no row vouches for (changed, new) is read and parsed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection
from pathlib import Path

from . import derived_index
from .derived_index import Row
from .fs import read_file
from .model import Diagnostic, Fact, ParsedFact
from .store import Identity, LoadedFile, Store, identity_of, unreadable
from .watched import look


def load_indexed(store: Store, path: Path) -> LoadedFile | None:
    """``store.load(path)``: the file's bytes, and its row when trusted, else a parse.

    Raises ``FactFormatError`` when the file exists but cannot be read or parsed.
    """
    index = store.index
    if index is None or path.parent != store.root:
        return store.load(path)
    seen = index.watch()  # before the read: a vouch survives a row of what is read after it
    started = time.time_ns()  # before the read: the identity checked comes after it
    try:
        data, st = read_file(store.fs, path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise unreadable(path, exc) from exc
    key = identity_of(st)
    row = index.rows([path.name]).get(path.name)
    # The bytes are the row's only if no write landed between the fstat and the read.
    trusted = row is not None and row.trusted(key) and _same_file(path, key)
    if trusted and row is not None and isinstance(row.item, ParsedFact):
        return LoadedFile(path, data, row.item)
    loaded = LoadedFile(path, data, store.parse(data, path, st))
    index.update([(path.name, key, started, loaded.parsed)], seen=seen)
    return loaded


def _same_file(path: Path, key: Identity) -> bool:
    try:
        return identity_of(os.lstat(path)) == key
    except OSError:
        return False


def candidates(store: Store, fact_id: str | None, names: Collection[str]) -> list[Fact]:
    """Active facts of ``store`` whose id is ``fact_id`` or whose name is in ``names``.

    Sorted by (name, id), as ``store.snapshot().facts`` holds them.
    """
    view = look([store])[0]
    index = store.index
    generation: int | None = None
    identities: dict[str, tuple[Identity, int]] = {}
    matches: dict[str, Row] = {}
    if index is not None:
        named = [*view.files, *view.gone] if view.vouched else None
        generation, identities, matches = index.survey(fact_id, names, named)
        if view.vouched and not (generation is not None and view.vouches(generation)):
            view.walk()  # the rows moved on since the monitor was asked: look at every file
            generation, identities, matches = index.survey(fact_id, names)
    racy = derived_index.RACY_NS
    found: list[Fact] = []
    changed: list[tuple[str, Identity, int, ParsedFact | Diagnostic]] = []
    files = view.files
    if view.vouched:  # every row the monitor did not name stands
        named_now = {*files, *view.gone}
        found += [
            row.item.fact
            for name, row in matches.items()
            if name not in named_now and isinstance(row.item, ParsedFact)
        ]
        removed = [name for name in view.gone if name in identities]
    else:
        removed = [name for name in identities if name not in files]
    for name, st in files.items():
        key = identity_of(st)
        recorded = identities.get(name)
        if recorded is not None and recorded[0] == key and max(key[3], key[4]) < recorded[1] - racy:
            row = matches.get(name)  # the row decides: a match only if it is one
            if row is not None and row.identity == key and isinstance(row.item, ParsedFact):
                found.append(row.item.fact)
            continue
        result = store.read_entry(store.root / name, st)
        if result is None:
            continue
        changed.append((name, key, view.started, result))
        if isinstance(result, ParsedFact):
            fact = result.fact
            if (fact_id is not None and fact.id == fact_id) or fact.name in names:
                found.append(fact)
    if index is not None:
        index.update(changed, removed, seen=view.seen, token=view.recording)
    found.sort(key=lambda f: (f.name, f.id))
    return found
