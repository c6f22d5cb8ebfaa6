"""Freshness windows by type (S8.7)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from context_engine.facts.freshness import freshness, freshness_of
from support.recall import NOW, fact


@pytest.mark.parametrize(
    ("fact_type", "fresh_days", "current_days"),
    [("reference", 14, 45), ("project", 30, 180), ("user", 90, 365), ("feedback", 90, 365)],
)
def test_windows(fact_type: str, fresh_days: int, current_days: int) -> None:
    at = NOW - timedelta(days=fresh_days)
    assert freshness_of(fact_type, at, NOW) == "fresh"
    assert freshness_of(fact_type, at - timedelta(seconds=1), NOW) == "current"
    at = NOW - timedelta(days=current_days)
    assert freshness_of(fact_type, at, NOW) == "current"
    assert freshness_of(fact_type, at - timedelta(seconds=1), NOW) == "stale"


def test_zero_future_and_missing_are_current() -> None:
    assert freshness_of("reference", None, NOW) == "current"
    assert freshness_of("reference", datetime(1, 1, 1, tzinfo=UTC), NOW) == "current"
    assert freshness_of("reference", datetime(1970, 1, 1, tzinfo=UTC), NOW) == "current"
    assert freshness_of("reference", NOW + timedelta(days=3), NOW) == "current"


def test_updated_else_created() -> None:
    base = fact("x", "body", type="reference")
    old = NOW - timedelta(days=100)
    assert freshness(replace(base, updated_at=None, created_at=old), NOW) == "stale"
    assert freshness(replace(base, updated_at=NOW, created_at=old), NOW) == "fresh"


def test_naive_times_read_as_utc() -> None:
    naive = (NOW - timedelta(days=1)).replace(tzinfo=None)
    assert freshness_of("project", naive, NOW) == "fresh"
