"""The S12 fact object and text line of listed facts (``list``, ``memory``), built in bulk.

Byte for byte what ``facts_cmds.fact_json`` / ``fact_line`` print for the same fact, from the
list fields alone (``facts/listing.py``): no ``Fact``, no body, and freshness and timestamps
computed from the stored ISO text with one clock reading for the whole listing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from json.encoder import encode_basestring as _quote  # the C escaper when available
from typing import Any

from ..facts.freshness import _ZERO_BEFORE, WINDOWS, Freshness
from ..facts.listing import ListedFact
from ..facts.timestamps import format_timestamp
from .pretty_json import Encoded


def rfc3339(iso: str | None) -> str | None:
    """``format_timestamp`` of the aware datetime whose ``isoformat()`` is ``iso``."""
    if iso is None:
        return None
    # The writer's shape, in UTC: cut the text instead of formatting a datetime. Years before
    # 1000 (Go's zero time) take the slow path: ``strftime("%Y")`` does not pad them.
    if iso.endswith("+00:00") and iso[0] != "0":
        size = len(iso)
        if size == 25:
            return f"{iso[:19]}Z"
        if size == 32 and iso[19] == ".":
            fraction = iso[20:26].rstrip("0")
            return f"{iso[:19]}.{fraction}Z" if fraction else f"{iso[:19]}Z"
    return format_timestamp(datetime.fromisoformat(iso))


class Clock:
    """Freshness (S8.7) of many facts against one ``now``: ``freshness_of`` by comparisons."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now if now is not None else datetime.now(UTC)
        # age <= window  <=>  stamp >= now - window (exact in datetime arithmetic).
        self._edges = {kind: (_minus(self.now, a), _minus(self.now, b))
                       for kind, (a, b) in WINDOWS.items()}
        self._default = self._edges["project"]

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
        o = f"\n{indent}  "  # a key's line
        c = f"\n{indent}}}"  # the closing brace's line
        q = _quote
        fresh = clock.freshness
        out = []
        for f in facts:
            revision = f.revision
            if type(revision) is not int:
                raise _NotPlain
            created, updated = rfc3339(f.created_at), rfc3339(f.updated_at)
            out.append(
                f'{{{o}"id": {q(f.id)},{o}"revision": {int.__repr__(revision)},'
                f'{o}"name": {q(f.name)},{o}"title": {q(f.title)},'
                f'{o}"description": {q(f.description)},{o}"type": {q(f.type)},'
                f'{o}"scope": {q(f.scope)},{o}"reference": {q(f"{f.scope}/{f.name}.md")},'
                f'{o}"created_at": {"null" if created is None else q(created)},'
                f'{o}"updated_at": {"null" if updated is None else q(updated)},'
                f'{o}"freshness": "{fresh(f.type, f.updated_at or f.created_at)}"{c}'
            )
        return out

    return Encoded(texts, lambda: list(listed_json(facts, clock)))


class _NotPlain(TypeError):
    """A field of a type the template does not write (the generic encoder takes over)."""
