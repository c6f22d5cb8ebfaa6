"""The two stores of a workspace and how a ref (id, reference, bare name) finds its file.

What a ref names is decided in ``refs.py`` (the one resolver); this module finds the file.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import FactFormatError
from ..records import record
from .model import Scope
from .refs import Ref, looks_like_id, parse_ref, parse_reference
from .store import LoadedFile, Store

__all__ = ["Stores", "find_by_id", "find_one_by_id", "looks_like_id", "parse_reference"]


@record
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

    Tries where a writer's state (``write_state``, current under the locks) or else the last
    snapshot saw it — trusted only after re-reading the file and finding the same id — then a
    byte scan that parses only files containing the id, then a full parse of both stores
    (legacy ids are not in the files, UTF-16 files hide the ASCII bytes).
    """
    states = [store.writes for store in stores.all()]
    if all(w is not None and w.ready for w in states):
        for store in stores.all():
            assert store.writes is not None
            for name in store.writes.names_with_id(fact_id):
                try:
                    loaded = store.load(store.root / name)
                except FactFormatError:
                    continue
                if loaded is not None and loaded.fact.id == fact_id:
                    return loaded
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


def _named(store: Store, parsed: Ref) -> LoadedFile | None:
    """The fact of ``store`` whose frontmatter name the ref gives: its own file, else the
    first (by name, id) of the facts claiming that name."""
    from .lookup import candidates, load_indexed

    for name in parsed.names:
        loaded = load_indexed(store, store.fact_path(name))
        if loaded is not None and loaded.fact.name in parsed.names:
            return loaded
    for fact in candidates(store, None, parsed.names):
        if fact.path is not None:
            loaded = load_indexed(store, fact.path)
            if loaded is not None and loaded.fact.name in parsed.names:
                return loaded
    return None


def _first_by_id(stores: Stores, fact_id: str) -> LoadedFile | None:
    """``find_by_id(stores, fact_id)[0]``, through the derived index (no full parse)."""
    from .lookup import candidates, load_indexed

    for store in stores.all():
        for fact in candidates(store, fact_id, ()):
            if fact.path is None:
                continue
            try:
                loaded = load_indexed(store, fact.path)
            except FactFormatError:
                continue
            if loaded is not None and loaded.fact.id == fact_id:
                return loaded
    return None


def resolve_loaded(stores: Stores, ref: str) -> LoadedFile:
    """The active file a ref names (``refs.py``): id, then frontmatter name in each scope.

    Raises ``FactFormatError`` when the file it names exists but cannot be read.
    """
    parsed = parse_ref(ref)
    if parsed.id is not None:
        by_id = _first_by_id(stores, parsed.id)
        if by_id is not None:
            return by_id
    for scope in parsed.scopes:
        loaded = _named(stores.get(scope), parsed)
        if loaded is not None:
            return loaded
    raise parsed.not_found()
