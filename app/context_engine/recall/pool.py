"""The recall pool (S8.3): active facts minus global user/feedback and overridden globals.

Membership is tracked incrementally: a change to one fact re-decides only the facts that
share one of its equivalence keys (same id, same name slug, same normalized title — S7.2).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

from ..facts.equivalence import equivalence_keys
from ..facts.model import Fact

Membership = Literal["pool", "shadowed", "prefix"]

POOL: Membership = "pool"
SHADOWED: Membership = "shadowed"
PREFIX: Membership = "prefix"


Holders = dict[str, "str | set[str]"]


def _holders(table: Holders, key: str) -> tuple[str, ...] | set[str]:
    """The references holding ``key``."""
    value = table.get(key)
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else value


def _hold(table: Holders, key: str, reference: str) -> None:
    """Record that ``reference`` holds ``key``."""
    value = table.get(key)
    if value is None:
        table[key] = reference
    elif isinstance(value, str):
        if value != reference:
            table[key] = {value, reference}
    else:
        value.add(reference)


def _release(table: Holders, key: str, reference: str) -> None:
    """Record that ``reference`` no longer holds ``key``."""
    value = table.get(key)
    if value is None:
        return
    if isinstance(value, str):
        if value == reference:
            del table[key]
        return
    value.discard(reference)
    if len(value) == 1:
        table[key] = next(iter(value))
    elif not value:
        del table[key]


class Transition(NamedTuple):
    """One fact's membership before and after a change (``None`` = not tracked)."""

    reference: str
    before: Membership | None
    after: Membership | None


class PoolTracker:
    """Which active facts are recallable, shadowed by a project fact, or already in the prefix."""

    def __init__(self) -> None:
        self.facts: dict[str, Fact] = {}
        self.membership: dict[str, Membership] = {}
        self._keys: dict[str, tuple[str, ...]] = {}
        # key → one reference, or a set when several share it (most keys are unique, and a
        # set per key costs ~200 bytes: 70 MB at 100,000 facts).
        self._project_by_key: Holders = {}
        self._global_by_key: Holders = {}

    def overrider(self, reference: str) -> tuple[str, str] | None:
        """The project fact shadowing the global fact ``reference`` and the shared key kind."""
        for key in self._keys.get(reference, ()):
            holders = _holders(self._project_by_key, key)
            if holders:
                return min(holders), key.split(":", 1)[0]
        return None

    def _decide(self, reference: str) -> Membership:
        """Membership of a tracked fact given the current project facts."""
        fact = self.facts[reference]
        if fact.scope != "global":
            return POOL
        if fact.type in ("user", "feedback"):
            return PREFIX
        shadowed = any(key in self._project_by_key for key in self._keys.get(reference, ()))
        return SHADOWED if shadowed else POOL

    def _index_keys(self, reference: str, fact: Fact, add: bool) -> None:
        """Add or remove ``reference`` under each of its equivalence keys."""
        table = self._project_by_key if fact.scope != "global" else self._global_by_key
        keys = equivalence_keys(fact) if add else self._keys.pop(reference, ())
        if add:
            self._keys[reference] = keys
        for key in keys:
            if add:
                _hold(table, key, reference)
            else:
                _release(table, key, reference)

    def _affected_globals(self, keys: tuple[str, ...], state: Membership) -> set[str]:
        """Global facts sharing any of ``keys`` whose membership is ``state``."""
        membership = self.membership
        out: set[str] = set()
        for key in keys:
            out.update(g for g in _holders(self._global_by_key, key) if membership.get(g) == state)
        return out

    def load(self, facts: Iterable[Fact]) -> None:
        """Track many new facts at once (distinct references, empty tracker).

        Membership depends only on the final set of facts, so deciding each once at the end
        gives what upserting them one by one gives.
        """
        if self.facts:
            raise ValueError("load needs an empty tracker")
        for fact in facts:
            reference = fact.reference
            if reference in self.facts:
                raise ValueError(f"duplicate reference: {reference}")
            self.facts[reference] = fact
            self._index_keys(reference, fact, add=True)
        self.membership = {reference: self._decide(reference) for reference in self.facts}

    def export(self) -> tuple[object, ...]:
        """Membership and key tables as plain containers (the facts are kept by the caller)."""
        return (self.membership, self._keys, self._project_by_key, self._global_by_key)

    @classmethod
    def restore(cls, state: tuple[object, ...], facts: dict[str, Fact]) -> PoolTracker:
        """The tracker :meth:`export` described, tracking ``facts`` (same references)."""
        membership, keys, project_by_key, global_by_key = state
        tables = (membership, keys, project_by_key, global_by_key)
        if not all(isinstance(table, dict) for table in tables):
            raise TypeError("malformed pool state")
        assert isinstance(membership, dict) and isinstance(keys, dict)
        assert isinstance(project_by_key, dict) and isinstance(global_by_key, dict)
        if membership.keys() != facts.keys() or keys.keys() != facts.keys():
            raise ValueError("pool state does not match its facts")
        if not set(membership.values()) <= {POOL, SHADOWED, PREFIX}:
            raise ValueError("unknown membership in pool state")
        tracker = cls()
        tracker.facts = facts
        tracker.membership = membership
        tracker._keys = keys
        tracker._project_by_key = project_by_key
        tracker._global_by_key = global_by_key
        return tracker

    def upsert(self, fact: Fact) -> list[Transition]:
        """Track a new or changed fact; return every membership that moved."""
        reference = fact.reference
        old_keys = self._keys.get(reference, ())
        before = self.membership.get(reference)
        old = self.facts.get(reference)
        if old is not None:
            self._index_keys(reference, old, add=False)
        self.facts[reference] = fact
        self._index_keys(reference, fact, add=True)
        touched = {reference}
        # A project fact can only shadow globals still in the pool and release globals it
        # shadowed before; nothing else can move.
        if fact.scope != "global":
            touched |= self._affected_globals(self._keys[reference], POOL)
        if old is not None and old.scope != "global":
            touched |= self._affected_globals(old_keys, SHADOWED)
        return self._redecide(touched, {reference: before})

    def remove(self, reference: str) -> list[Transition]:
        """Stop tracking a fact (forgotten or deleted); return every membership that moved."""
        old = self.facts.pop(reference, None)
        if old is None:
            return []
        old_keys = self._keys.get(reference, ())
        self._index_keys(reference, old, add=False)
        before = self.membership.pop(reference)
        moved = [Transition(reference, before, None)]
        if old.scope != "global":
            moved += self._redecide(self._affected_globals(old_keys, SHADOWED), {})
        return moved

    def _redecide(
        self, references: set[str], known: dict[str, Membership | None]
    ) -> list[Transition]:
        """Recompute membership of ``references``; report the ones that changed."""
        moved: list[Transition] = []
        for reference in references:
            before = known.get(reference, self.membership.get(reference))
            after = self._decide(reference)
            self.membership[reference] = after
            if before != after or reference in known:
                moved.append(Transition(reference, before, after))
        return moved
