"""Freshness of a fact by type and age (S8.7): it ranks and warns, it never deletes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from .model import Fact

Freshness = Literal["fresh", "current", "stale"]

# (fresh ≤, current ≤) per type; anything older is stale (S8.7).
WINDOWS: dict[str, tuple[timedelta, timedelta]] = {
    "reference": (timedelta(days=14), timedelta(days=45)),
    "project": (timedelta(days=30), timedelta(days=180)),
    "user": (timedelta(days=90), timedelta(days=365)),
    "feedback": (timedelta(days=90), timedelta(days=365)),
}

# Go's zero time (0001-01-01) and the Unix epoch both mean "never set".
_ZERO_BEFORE = datetime(1971, 1, 1, tzinfo=UTC)


def _aware(value: datetime) -> datetime:
    """Treat a naive datetime as UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def freshness(fact: Fact, now: datetime | None = None) -> Freshness:
    """``fresh``, ``current`` or ``stale`` from ``updated_at`` (else ``created_at``)."""
    return freshness_of(fact.type, fact.updated_at or fact.created_at, now)


def freshness_of(fact_type: str, stamp: datetime | None, now: datetime | None = None) -> Freshness:
    """Freshness of a fact of ``fact_type`` last touched at ``stamp``; zero or future → current."""
    if stamp is None:
        return "current"
    moment = _aware(now) if now is not None else datetime.now(UTC)
    stamp = _aware(stamp)
    if stamp < _ZERO_BEFORE or stamp > moment:
        return "current"
    fresh, current = WINDOWS.get(fact_type, WINDOWS["project"])
    age = moment - stamp
    if age <= fresh:
        return "fresh"
    if age <= current:
        return "current"
    return "stale"
