"""Structured completion (S12 ``complete``): one function per kind, used locally and remotely.

Refs: every active id first (exact identities), then each name once (a name held by both scopes
is offered once; ``forget``/``read`` of a bare name is defined for that case). Archives: the
archive paths, newest first.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..facts.archive import ArchivedEntry
from ..facts.model import Fact


def complete_refs(facts: Iterable[Fact], prefix: str = "") -> tuple[str, ...]:
    """Ids, then names, that start with ``prefix``; no duplicates."""
    items = list(facts)
    out = dict.fromkeys(f.id for f in items if f.id.startswith(prefix))
    for fact in sorted(items, key=lambda f: (f.name, f.scope)):
        if fact.name.startswith(prefix):
            out.setdefault(fact.name, None)
    return tuple(out)


def complete_archives(entries: Iterable[ArchivedEntry], prefix: str = "") -> tuple[str, ...]:
    """Archive paths (as given by the store, newest first) that start with ``prefix``."""
    paths = (str(e.path) for e in entries)
    return tuple(dict.fromkeys(p for p in paths if p.startswith(prefix)))
