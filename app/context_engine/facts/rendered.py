"""The printed forms of a listed fact that do not depend on the clock, kept in its index row.

``list --json`` and ``memory`` print, per fact, its S12 object and its text line; only the
freshness in each depends on when they are printed. The object up to its freshness value
(``json_head``) and the fact's freshness stamp in microseconds (``stamp_us``) are computed when
the row is recorded (``derived_index._record``), so a listing is one query that appends each
row's freshness (``freshness_sql``) and joins the rows — no Python object per fact.
``cli/listed.py`` writes the same bytes from the list fields; tests compare both.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from json.encoder import encode_basestring as _quote  # the C escaper when available
from typing import Any

from .freshness import _ZERO_BEFORE, WINDOWS
from .timestamps import format_timestamp

# Items of the ``facts`` list sit at depth 2 in both outputs ({"facts": [...]}, memory's object).
ITEM_INDENT = "    "
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


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


def json_head(
    fact_id: str,
    revision: Any,
    name: str,
    title: str,
    description: str,
    fact_type: str,
    scope: str,
    created_at: str | None,
    updated_at: str | None,
    indent: str = ITEM_INDENT,
) -> str | None:
    """The fact's S12 object at ``indent`` up to its freshness value (``None``: not plain)."""
    if type(revision) is not int:
        return None
    o = f"\n{indent}  "  # a key's line
    q = _quote
    created, updated = rfc3339(created_at), rfc3339(updated_at)
    return (
        f'{{{o}"id": {q(fact_id)},{o}"revision": {int.__repr__(revision)},'
        f'{o}"name": {q(name)},{o}"title": {q(title)},'
        f'{o}"description": {q(description)},{o}"type": {q(fact_type)},'
        f'{o}"scope": {q(scope)},{o}"reference": {q(f"{scope}/{name}.md")},'
        f'{o}"created_at": {"null" if created is None else q(created)},'
        f'{o}"updated_at": {"null" if updated is None else q(updated)},'
        f'{o}"freshness": "'
    )


def json_tail(freshness: str, indent: str = ITEM_INDENT) -> str:
    """What follows ``json_head``: the freshness value and the closing brace."""
    return f'{freshness}"\n{indent}}}'


def micros(moment: datetime) -> int:
    """``moment`` (aware) as whole microseconds since the epoch: exact, order-preserving."""
    return (moment - _EPOCH) // _MICROSECOND


def stamp_us(created_at: str | None, updated_at: str | None) -> int | None:
    """The freshness stamp (``updated_at`` else ``created_at``) in microseconds.

    ``None`` when there is none or it means "never set" (before 1971): always ``current``.
    """
    iso = updated_at or created_at
    if iso is None:
        return None
    stamp = datetime.fromisoformat(iso)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    if stamp < _ZERO_BEFORE:
        return None
    return micros(stamp)


def freshness_sql(
    now: datetime, edges: dict[str, tuple[datetime, datetime]], default: tuple[datetime, datetime]
) -> tuple[str, list[Any]]:
    """An SQL expression over ``stamp_us`` and ``type`` giving ``Clock.freshness``, and its args.

    ``edges``: per type, the (fresh, current) edges ``now - window`` of ``cli.listed.Clock``.
    A stamp is compared with them in whole microseconds, which is exact.
    """
    fresh_cases, current_cases, args_fresh, args_current = [], [], [], []
    for kind in WINDOWS:
        fresh, current = edges[kind]
        fresh_cases.append("WHEN ? THEN ?")
        args_fresh += [kind, micros(fresh)]
        current_cases.append("WHEN ? THEN ?")
        args_current += [kind, micros(current)]
    expression = (
        "CASE WHEN stamp_us IS NULL OR stamp_us > ? THEN 'current'"
        f" WHEN stamp_us >= (CASE type {' '.join(fresh_cases)} ELSE ? END) THEN 'fresh'"
        f" WHEN stamp_us >= (CASE type {' '.join(current_cases)} ELSE ? END) THEN 'current'"
        " ELSE 'stale' END"
    )
    args = [micros(now), *args_fresh, micros(default[0]), *args_current, micros(default[1])]
    return expression, args
