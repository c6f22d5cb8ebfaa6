"""Property tests for the codec (S3, RELIABILITY §4 F5): any bytes give a ParsedFact or a
FactFormatError; rendered facts read back identical; the fast reader agrees with the strict
loader on everything it accepts; every written scalar reads back unchanged."""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from context_engine.errors import FactFormatError, InvalidName
from context_engine.facts import yaml_strict
from context_engine.facts.codec import (
    ParsedFact,
    normalize_fact,
    parse_fact,
    parse_fact_strict,
    render_fact,
    trim_body,
)
from context_engine.facts.model import FACT_TYPES, SCOPES, Fact, one_line
from context_engine.paths import slugify
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

MTIME = datetime(2026, 1, 1, tzinfo=UTC)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text that can live in a UTF-8 file (no lone surrogates).
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
TRICKY = st.lists(
    st.sampled_from([*":#'\"\\-*&!|>%@`{}[],?~ \t.0123456789eExyn", "null", "true", "é", "记"]),
    max_size=8,
).map("".join)


def _outcome(parse: object, data: bytes, scope: str = "project") -> object:
    try:
        result = parse(  # type: ignore[operator]
            data, path=Path("/s/fuzz-fact.md"), store_scope=scope, mtime=MTIME
        )
    except FactFormatError as exc:
        return ("error", exc.reason, exc.line)
    assert isinstance(result, ParsedFact)
    return result


@pytest.mark.slow
@SETTINGS
@given(
    st.one_of(
        st.binary(max_size=300),
        st.binary(max_size=200).map(lambda b: b"---\n" + b + b"\n---\nbody"),
        st.binary(max_size=200).map(lambda b: b"\xff\xfe" + b),
    )
)
def test_any_bytes_parse_or_raise_format_error(data: bytes) -> None:
    assert _outcome(parse_fact, data) == _outcome(parse_fact_strict, data)


@pytest.mark.slow
@SETTINGS
@given(st.lists(st.one_of(TRICKY, TEXT), max_size=12))
def test_any_frontmatter_text_parses_or_raises_format_error(lines: list[str]) -> None:
    data = ("---\n" + "\n".join(lines) + "\n---\nbody").encode("utf-8")
    assert _outcome(parse_fact, data) == _outcome(parse_fact_strict, data)


def _slug_or_none(text: str) -> str | None:
    try:
        # Names read back NFC-normalised (like facts.store.fact_slug).
        return slugify(unicodedata.normalize("NFC", text))
    except InvalidName:
        return None


timestamps = st.one_of(
    st.none(),
    st.datetimes(
        min_value=datetime(1970, 1, 1),
        max_value=datetime(2200, 1, 1),
        timezones=st.just(UTC),
    ),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False),
    TRICKY,
    TEXT,
)
extras_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(
            st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=6),
            inner,
            max_size=3,
        ).map(lambda d: yaml_strict.YamlMapping(d.items())),
    ),
    max_leaves=6,
)
RESERVED = {"id", "revision", "created_at", "updated_at", "name", "title", "description"}
RESERVED |= {"metadata", "type", "scope", "fact_type"}


@st.composite
def facts(draw: st.DrawFn) -> Fact:
    name = draw(st.one_of(TEXT, TRICKY, st.from_regex(r"[a-z0-9]+(-[a-z0-9]+)*", fullmatch=True)))
    slug = _slug_or_none(name)
    assume(slug is not None)
    assert slug is not None
    body = draw(st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\0")))
    extra_keys = draw(
        st.lists(
            st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=8).filter(
                lambda k: k not in RESERVED
            ),
            unique=True,
            max_size=draw(st.sampled_from([0, 0, 3])),
        )
    )
    extra: list[tuple[str, object]] = [(k, draw(extras_values)) for k in extra_keys]
    meta_keys = draw(
        st.lists(
            st.sampled_from(["tags", "weight", "x y", "010"]),
            unique=True,
            max_size=draw(st.sampled_from([0, 0, 2])),
        )
    )
    if meta_keys:
        extra.append(
            ("metadata", yaml_strict.YamlMapping((k, draw(extras_values)) for k in meta_keys))
        )
    created = draw(timestamps)
    return Fact(
        id=draw(st.sampled_from(["mem-" + "a" * 32, "legacy-0c0ec20229014fe8e310b2e1", "x.y_z-1"])),
        revision=draw(st.integers(1, 10**9)),
        name=slug,
        title=one_line(draw(st.one_of(TEXT, TRICKY))),
        description=one_line(draw(st.one_of(TEXT, TRICKY))),
        type=draw(st.sampled_from(FACT_TYPES)),
        scope=draw(st.sampled_from(SCOPES)),
        body=trim_body(body),
        created_at=created or MTIME,
        updated_at=(created or MTIME) + timedelta(microseconds=draw(st.integers(0, 10**9))),
        extra=tuple(extra),
    )


@pytest.mark.slow
@SETTINGS
@given(facts(), st.sampled_from(SCOPES))
def test_rendered_fact_reads_back_identical(fact: Fact, store_scope: str) -> None:
    data = render_fact(fact)
    for parse in (parse_fact, parse_fact_strict):
        parsed = parse(data, path=Path("/s/x.md"), store_scope=store_scope, mtime=MTIME)
        assert not parsed.needs_upgrade
        assert parsed.fact == fact
    assert render_fact(parsed.fact) == data
    hash(parsed.fact)


@pytest.mark.slow
@SETTINGS
@given(facts(), st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\0")))
def test_normalize_fact_is_what_reads_back(fact: Fact, raw_body: str) -> None:
    messy = replace(fact, title=f"  {fact.title}\n x ", body=f"\n \n{raw_body}\n\n  ")
    data = render_fact(messy)
    back = parse_fact(data, path=Path("/s/x.md"), store_scope="project", mtime=MTIME).fact
    assert back == normalize_fact(messy)
    assert render_fact(normalize_fact(messy)) == data


WORDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ,.'()/éü记-]{0,20}", fullmatch=True)
CANON_KEYS = ["id", "revision", "created_at", "updated_at", "name", "title", "description"]


@st.composite
def near_canonical(draw: st.DrawFn) -> str:
    lines = []
    for key in CANON_KEYS:
        if key in ("name", "description") or draw(st.booleans()):
            raw = draw(
                st.one_of(
                    WORDS,
                    WORDS,
                    TRICKY,
                    TEXT,
                    TRICKY.map(lambda t: '"' + t + '"'),
                    st.one_of(TRICKY, TEXT).map(yaml_strict.double_quoted),
                    st.sampled_from(['"2026-07-01T00:00:00Z"', "3", "010", "~", "null", '""']),
                )
            )
            lines.append(f"{key}: {raw}")
    lines.append("metadata:")
    lines.append(f"  type: {draw(st.sampled_from([*FACT_TYPES, 'bogus']))}")
    if draw(st.booleans()):
        lines.append(f"  fact_type: {draw(st.sampled_from(FACT_TYPES))}")
    if draw(st.integers(0, 3)):
        lines.append(f"  scope: {draw(st.sampled_from([*SCOPES, 'x']))}")
    return "\n".join(lines) + "\n"


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(near_canonical())
def test_fast_reader_agrees_with_strict_loader(front: str) -> None:
    data = f"---\n{front}---\n\nbody\n".encode()
    assert _outcome(parse_fact, data) == _outcome(parse_fact_strict, data)


@pytest.mark.slow
@SETTINGS
@given(st.text(st.characters(exclude_categories=["Cs"])))
def test_every_written_scalar_reads_back_unchanged(text: str) -> None:
    doc = "k: " + yaml_strict.scalar(text) + "\n"
    node = yaml_strict.compose(doc)
    assert node is not None
    assert yaml_strict.construct(node) == (("k", text),)
    # Other readers (PyYAML's YAML 1.1 SafeLoader, like python-frontmatter) agree.
    assert yaml.safe_load(doc) == {"k": text}


EDGE_VALUES = [
    "~",
    "null",
    "Null",
    "",
    '""',
    "''",
    "'x'",
    '"a\\"b"',
    '"\\x41\\u00e9\\U0001F600"',
    '"\\q"',
    "010",
    "1.5",
    "true",
    "yes",
    "12:30",
    "2026-07-01",
    "a: b",
    "a #b",
    "a#b",
    "-a",
    "*a",
    "&a",
    "!a",
    "|",
    ">",
    "%a",
    "@a",
    "`a",
    "[a]",
    "{a}",
    "a,b",
    "?a",
    "a ",
    " a",
    "a\tb",
    "é",
    "记忆",
    '"unterminated',
    '"a" tail',
    "\u00a0",
    "a\u00a0",
    "\u2028",
    "mem-1",
    "x.y",
    "..",
    "a..b",
]


@pytest.mark.slow
def test_fast_reader_agrees_on_edge_values() -> None:
    checked = 0
    for key in ("id", "name", "title", "description", "created_at", "revision"):
        for raw in EDGE_VALUES:
            front = {
                "id": "id: mem-a",
                "revision": "revision: 2",
                "created_at": 'created_at: "2026-07-01T00:00:00Z"',
                "name": "name: edge",
                "title": "title: Edge",
                "description": "description: d",
            }
            front[key] = f"{key}: {raw}"
            order = ["id", "revision", "created_at", "name", "title", "description"]
            text = "\n".join(front[k] for k in order)
            data = f"---\n{text}\nmetadata:\n  type: user\n  scope: global\n---\nb\n".encode()
            assert _outcome(parse_fact, data) == _outcome(parse_fact_strict, data), (key, raw)
            checked += 1
    assert checked == 6 * len(EDGE_VALUES)


def test_special_float_extras_round_trip() -> None:
    fact = Fact(
        id="mem-" + "b" * 32, revision=1, name="floats", title="", description="d",
        type="project", scope="project", body="", created_at=MTIME, updated_at=MTIME,
        extra=(("weights", (float("inf"), float("-inf"), 1e16, -0.5)),),
    )
    data = render_fact(fact)
    assert b"weights:\n  - .inf\n  - -.inf\n  - 1e+16\n  - -0.5\n" in data
    for parse in (parse_fact, parse_fact_strict):
        assert (
            parse(data, path=Path("/s/floats.md"), store_scope="project", mtime=MTIME).fact == fact
        )
