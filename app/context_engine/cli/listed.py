"""The S12 fact object and text line of listed facts (``list``, ``memory``), built in bulk.

Byte for byte what ``facts_cmds.fact_json`` / ``fact_line`` print for the same fact, from the
list fields alone (``facts/listing.py``): no ``Fact``, no body, and freshness and timestamps
computed from the stored ISO text with one clock reading for the whole listing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from ..facts.freshness import _ZERO_BEFORE, WINDOWS, Freshness
from ..facts.listing import ListedFact
from ..facts.rendered import json_head, json_tail, rfc3339
from .pretty_json import Encoded

Edges = tuple[datetime, datetime]  # (fresh, current): a stamp at or after them is that fresh


class Clock:
    """Freshness (S8.7) of many facts against one ``now``: ``freshness_of`` by comparisons."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now if now is not None else datetime.now(UTC)
        # age <= window  <=>  stamp >= now - window (exact in datetime arithmetic).
        self._edges = {kind: (_minus(self.now, a), _minus(self.now, b))
                       for kind, (a, b) in WINDOWS.items()}
        self._default = self._edges["project"]

    def edges(self) -> tuple[datetime, dict[str, Edges], Edges]:
        """(now, (fresh, current) edges per type, the edges of any other type)."""
        return self.now, self._edges, self._default

    def freshness(self, fact_type: str, iso: str | None) -> Freshness:
        """``freshness_of(fact_type, datetime.fromisoformat(iso), now)``."""
        if iso is None:
            return "current"
        stamp = datetime.fromisoformat(iso)
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=UTC)
        if stamp < _ZERO_BEFORE or stamp > self.now:
            return "current"
        fresh, current = self._edges.get(fact_type, self._default)
        if stamp >= fresh:
            return "fresh"
        if stamp >= current:
            return "current"
        return "stale"


def _minus(now: datetime, window: timedelta) -> datetime:
    """``now - window``; before year 1 every age is within the window."""
    try:
        return now - window
    except OverflowError:
        return datetime.min.replace(tzinfo=UTC)


def listed_json(facts: Iterable[ListedFact], clock: Clock) -> Iterator[dict[str, Any]]:
    """The S12 fact object of each listed fact (``fact_json``)."""
    fresh = clock.freshness
    for f in facts:
        yield {
            "id": f.id,
            "revision": f.revision,
            "name": f.name,
            "title": f.title,
            "description": f.description,
            "type": f.type,
            "scope": f.scope,
            "reference": f"{f.scope}/{f.name}.md",
            "created_at": rfc3339(f.created_at),
            "updated_at": rfc3339(f.updated_at),
            "freshness": fresh(f.type, f.updated_at or f.created_at),
        }


def listed_lines(facts: Iterable[ListedFact], clock: Clock) -> Iterator[str]:
    """One text line per listed fact (``fact_line``)."""
    fresh = clock.freshness
    for f in facts:
        yield (
            f"{f.scope}/{f.name}.md  {f.id}  r{f.revision}  {f.type}"
            f"  {fresh(f.type, f.updated_at or f.created_at)}  — {f.description}"
        )


def encoded_facts(facts: Sequence[ListedFact], clock: Clock) -> Encoded:
    """The ``listed_json`` objects as an ``Encoded`` list: each fact written by one template."""

    def texts(indent: str) -> list[str]:
        fresh = clock.freshness
        out = []
        for f in facts:
            head = json_head(
                f.id, f.revision, f.name, f.title, f.description, f.type, f.scope,
                f.created_at, f.updated_at, indent,
            )
            if head is None:
                raise _NotPlain
            out.append(head + json_tail(fresh(f.type, f.updated_at or f.created_at), indent))
        return out

    return Encoded(texts, lambda: list(listed_json(facts, clock)))


class _NotPlain(TypeError):
    """A field of a type the template does not write (the generic encoder takes over)."""
