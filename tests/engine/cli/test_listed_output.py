"""The bulk list output is byte for byte what the per-fact formatters print (issue 14)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from context_engine.cli import pretty_json
from context_engine.cli.facts_cmds import fact_json, fact_line
from context_engine.cli.listed import Clock, encoded_facts, listed_lines, rfc3339
from context_engine.facts.freshness import freshness_of
from context_engine.facts.listing import ListedFact
from context_engine.facts.model import FACT_TYPES, SCOPES, Fact
from context_engine.facts.timestamps import format_timestamp
from hypothesis import given, settings
from hypothesis import strategies as st

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
moments = st.datetimes(
    min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 30),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=8)), timezone(timedelta(hours=-5))]),
)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
facts = st.builds(
    Fact,
    id=st.one_of(st.just("mem-" + "a" * 32), texts),
    revision=st.integers(1, 10**6),
    name=texts,
    title=texts,
    description=texts,
    type=st.sampled_from(FACT_TYPES),
    scope=st.sampled_from(SCOPES),
    body=st.just("not listed"),
    created_at=st.none() | moments,
    updated_at=st.none() | moments,
    path=st.just(Path("/store/x.md")),
)


@pytest.mark.slow  # many examples
@given(json_values)
def test_dumps_is_json_dumps_with_an_indent(value: object) -> None:
    assert pretty_json.dumps(value) == json.dumps(value, ensure_ascii=False, indent=2)


@settings(max_examples=60)
@given(moments)
def test_rfc3339_of_the_stored_text_is_format_timestamp(moment: datetime) -> None:
    utc = moment.astimezone(UTC) if moment.year > 1 else moment
    for value in {moment, utc}:
        assert rfc3339(value.isoformat()) == format_timestamp(value)


@settings(max_examples=60)
@given(st.sampled_from(FACT_TYPES), moments, moments)
def test_the_clock_gives_freshness_of(kind: str, stamp: datetime, now: datetime) -> None:
    now = now.astimezone(UTC) if now.year > 1 else now
    assert Clock(now).freshness(kind, stamp.isoformat()) == freshness_of(kind, stamp, now)


@pytest.mark.slow  # many examples
@given(st.lists(facts, max_size=5))
def test_listed_facts_print_as_fact_json_and_fact_line(items: list[Fact]) -> None:
    clock = Clock(NOW)
    listed = [ListedFact.of(f) for f in items]
    expected = {"facts": [_at(fact_json(f), f, clock) for f in items], "n": 1}
    got = pretty_json.dumps({"facts": encoded_facts(listed, clock), "n": 1})
    assert got == json.dumps(expected, ensure_ascii=False, indent=2)
    lines = [fact_line(f).replace(f"  {_fresh(f)}  — ", f"  {_fresh(f, clock)}  — ", 1)
             for f in items]
    assert list(listed_lines(listed, clock)) == lines


def test_an_encoded_list_the_template_cannot_write_falls_back_to_json_dumps() -> None:
    odd = ListedFact("x.md", "mem-1", True, "x", "", "", "project", "project", None, None,
                     Path("/s"))  # a bool revision: json.dumps writes ``true``
    value = {"facts": encoded_facts([odd], Clock(NOW))}
    assert json.loads(pretty_json.dumps(value))["facts"][0]["revision"] is True


def _fresh(fact: Fact, clock: Clock | None = None) -> str:
    stamp = fact.updated_at or fact.created_at
    now = clock.now if clock is not None else datetime.now(UTC)
    return freshness_of(fact.type, stamp, now)


def _at(payload: dict[str, object], fact: Fact, clock: Clock) -> dict[str, object]:
    """``fact_json`` with the freshness of ``clock``'s instant (it reads the clock per fact)."""
    return {**payload, "freshness": _fresh(fact, clock)}
