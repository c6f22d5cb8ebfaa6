"""The two stores of a workspace and how a ref (id, reference, bare name) finds a fact."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import FactFormatError, FactNotFound
from .ids import is_valid_id
from .model import Scope
from .store import LoadedFile, Store

_REFERENCE = re.compile(r"^(project|global)/(.+?)(?:\.md)?$")
_ID_PREFIXES = ("mem-", "legacy-")


@dataclass(frozen=True, slots=True)
class Stores:
    """The project store and the global store, project first."""

    project: Store
    global_: Store

    def all(self) -> tuple[Store, Store]:
        """Both stores, project first (the lock and lookup order)."""
        return (self.project, self.global_)

    def get(self, scope: Scope) -> Store:
        """The store of ``scope``."""
        return self.global_ if scope == "global" else self.project

    def other(self, scope: Scope) -> Store:
        """The store that is not ``scope``."""
        return self.project if scope == "global" else self.global_

    def owner(self, path: Path) -> Store:
        """The store whose directory directly holds ``path``."""
        return self.global_ if path.parent == self.global_.root else self.project


def parse_reference(ref: str) -> tuple[Scope, str] | None:
    """``project/x.md`` → (``project``, ``x``); ``None`` for anything that is not a reference."""
    match = _REFERENCE.match(ref.strip())
    if match is None:
        return None
    scope: Scope = "global" if match.group(1) == "global" else "project"
    return scope, match.group(2)


def looks_like_id(ref: str) -> bool:
    """True when ``ref`` has the shape of a new or legacy id."""
    return ref.startswith(_ID_PREFIXES) and is_valid_id(ref)


def find_by_id(stores: Stores, fact_id: str) -> list[LoadedFile]:
    """Every active file carrying ``fact_id`` (normally one), project first."""
    found: list[LoadedFile] = []
    for store in stores.all():
        for fact in store.snapshot().facts:
            if fact.id != fact_id or fact.path is None:
                continue
            try:
                loaded = store.load(fact.path)
            except FactFormatError:
                continue
            if loaded is not None and loaded.fact.id == fact_id:
                found.append(loaded)
    return found


def find_one_by_id(stores: Stores, fact_id: str) -> LoadedFile | None:
    """The first active file carrying ``fact_id``, project first.

    Tries where the last snapshot saw it (trusted only after re-reading the file and finding
    the same id), then a byte scan that parses only files containing the id, then a full parse
    of both stores (legacy ids are not in the files, UTF-16 files hide the ASCII bytes).
    """
    for store in stores.all():
        hint = store.id_hint(fact_id)
        if hint is None:
            continue
        try:
            loaded = store.load(hint)
        except FactFormatError:
            loaded = None
        if loaded is not None and loaded.fact.id == fact_id:
            return loaded
        break
    if not fact_id.startswith("legacy-"):
        for store in stores.all():
            loaded = store.scan_for_id(fact_id)
            if loaded is not None:
                return loaded
    found = find_by_id(stores, fact_id)
    return found[0] if found else None


def find_name(stores: Stores, name: str, scope: Scope | None = None) -> LoadedFile | None:
    """The active fact of ``name`` in ``scope``, or project first then global.

    Raises ``FactFormatError`` when the file exists but cannot be read.
    """
    candidates = (stores.get(scope),) if scope else stores.all()
    for store in candidates:
        loaded = store.load_name(name)
        if loaded is not None:
            return loaded
    return None


def resolve_loaded(stores: Stores, ref: str) -> LoadedFile:
    """The active fact a ref names: id, then reference, then bare name (project first)."""
    text = ref.strip()
    if looks_like_id(text):
        by_id = find_by_id(stores, text)
        if by_id:
            return by_id[0]
    reference = parse_reference(text)
    loaded = find_name(stores, reference[1], reference[0]) if reference else find_name(stores, text)
    if loaded is not None:
        return loaded
    if looks_like_id(text):
        raise FactNotFound(f'memory id "{text}" not found')
    raise FactNotFound(f'memory "{text}" not found')
