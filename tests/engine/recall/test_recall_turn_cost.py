"""The cost of one recall turn (issue 14): work cut or cached per turn, with unchanged output.

Each faster helper is compared with the formulation it replaced on random inputs; the caches
are checked to compute once per fact object and again when a fact changes.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from context_engine.facts.model import Fact
from context_engine.paths import redact_home
from context_engine.recall import Recaller, supersede
from context_engine.recall.block import BlockHit, escape, fit_entry, render_entry
from context_engine.recall.gate import strong_terms
from context_engine.recall.query import parse_query
from context_engine.recall.snippet import compact
from context_engine.recall.stopwords import (
    GATE_STOPWORDS,
    GENERIC_TERMS,
    gate_ignored,
    gate_weak,
    is_bare_number,
)
from context_engine.recall.supersede import SubjectCache, subject_words
from context_engine.recall.tokenize import document_text, tokens
from hypothesis import given
from hypothesis import strategies as st
from support.recall import NOW, fact

# Text that exercises CJK bigrams, inflections, numbers, stopwords, markup and home paths.
PIECES = st.sampled_from(
    [
        "the", "a", "cache", "caches", "cached", "build", "release", "42", "#6928", "v2",
        "发布", "构建", "缓存迁移", "超时", "é", "İ", "<", ">", "&", "'", '"', " ", "  ", "\n",
        "\t", "/home/al ice/x", "/Users/bob", "C:\\Users\\eve\\d", "D:\\Documents and Settings\\z",
        "/home/", ":\\Users\\", "config.toml", "snake_case", "AuthHandler", "CI", "-", ".",
    ]
)
TEXT = st.one_of(st.text(max_size=80), st.lists(PIECES, max_size=40).map("".join))


def _old_escape(text: str) -> str:
    return text.translate(
        str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "'": "&#39;", '"': "&#34;"})
    )


@pytest.mark.slow
@given(TEXT)
def test_escape_matches_the_translate_table(text: str) -> None:
    assert escape(text) == _old_escape(text)


_HOME_PATTERNS = (
    re.compile(r"/home/[^/\s\"'<>]+"),
    re.compile(r"/Users/[^/\s\"'<>]+"),
    re.compile(r"[A-Za-z]:\\Documents and Settings\\[^\\\s\"'<>]+"),
    re.compile(r"[A-Za-z]:\\Users\\[^\\\s\"'<>]+"),
)


def _old_redact_home(text: str) -> str:
    for pattern in _HOME_PATTERNS:
        text = pattern.sub("<local-home>", text)
    return text


@pytest.mark.slow
@given(TEXT)
def test_redact_home_skips_only_text_no_pattern_could_match(text: str) -> None:
    assert redact_home(text) == _old_redact_home(text)


def _old_subject_words(text: str) -> frozenset[str]:
    return frozenset(
        t
        for t in tokens(text)
        if t not in GATE_STOPWORDS and t not in GENERIC_TERMS and not is_bare_number(t)
    )


@pytest.mark.slow
@given(TEXT, TEXT)
def test_subject_words_match_the_per_token_filter(name: str, body: str) -> None:
    item = dataclasses.replace(fact("n", "b"), name=name, body=body)
    assert subject_words(item) == _old_subject_words(document_text(item))


def _old_fit_entry(hit: BlockHit, room: int) -> tuple[str, str] | None:
    entry = render_entry(hit, hit.snippet)
    if len(entry) <= room:
        return entry, hit.snippet
    if len(render_entry(hit, "")) > room:
        return None
    text = hit.snippet
    while text:
        text = text[: len(text) - max(len(text) // 4, 1)]
        snippet = text + "..." if text else ""
        entry = render_entry(hit, snippet)
        if len(entry) <= room:
            return entry, snippet
    return None


@pytest.mark.slow
@given(TEXT, TEXT, TEXT, st.integers(min_value=-5, max_value=700))
def test_fit_entry_matches_rendering_each_attempt_whole(
    title: str, reason: str, snippet: str, room: int
) -> None:
    hit = BlockHit(id="mem_<1>", revision=3, scope="project", type="reference",
                   freshness="fresh", score=1.2345, reason=reason, title=title, snippet=snippet)
    assert fit_entry(hit, room) == _old_fit_entry(hit, room)


@pytest.mark.slow
@given(TEXT)
def test_query_term_classes_equal_a_fresh_computation(message: str) -> None:
    query = parse_query(message)
    ignored = gate_ignored(query.terms, query.distinctive)
    weak = gate_weak(query.terms, query.distinctive)
    lengths = {t: len(w) for t, w in query.typed.items()}
    for _ in range(2):  # the second read comes from the query's own cache
        assert query.ignored == ignored
        assert query.weak == weak
        assert query.counting == frozenset(query.terms) - ignored
        assert query.strong == strong_terms(
            query.terms, query.distinctive, ignored, weak, lengths
        )
    assert query == parse_query(message)  # the cache takes no part in equality


def test_subject_cache_computes_once_per_fact_object(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counting(item: Fact) -> frozenset[str]:
        calls.append(item.name)
        return _old_subject_words(document_text(item))

    monkeypatch.setattr(supersede, "subject_words", counting)
    cache = SubjectCache(size=2)
    one = fact("staging-url", "Staging moved to Cloudflare Access.")
    assert cache(one) == _old_subject_words(document_text(one))
    assert cache(one) == _old_subject_words(document_text(one))
    assert calls == ["staging-url"]
    changed = dataclasses.replace(one, revision=2, body="Grafana dashboards for billing.")
    assert cache(changed) == _old_subject_words(document_text(changed))
    assert calls == ["staging-url", "staging-url"]  # a changed fact is a new object
    cache(fact("a", "x"))
    cache(fact("b", "y"))  # over the bound: the cache starts over instead of growing
    assert len(cache._words) <= 2


def _staging() -> list[Fact]:
    old = fact("staging-url-old",
               "Staging is at https://old-cluster.example.dev behind the office VPN.",
               title="Staging URL", type="reference", age_days=260)
    new = fact("staging-url",
               "Staging moved to https://staging.example.dev behind Cloudflare Access.",
               title="Staging URL (new cluster)", type="reference", age_days=6)
    filler = [fact(f"note-{i}", f"Unrelated note {i} about billing exports.") for i in range(6)]
    return [old, new, *filler]


def test_recall_keeps_subject_words_across_turns_and_follows_a_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    real = supersede.subject_words

    def counting(item: Fact) -> frozenset[str]:
        calls.append(item.name)
        return real(item)

    monkeypatch.setattr(supersede, "subject_words", counting)
    store = _staging()
    recaller = Recaller(store)
    first = recaller.recall("what is the staging url", now=NOW)
    assert [d.name for d in first.trace.dropped if d.reason == "superseded"] == ["staging-url-old"]
    computed = len(calls)
    assert computed == 2
    again = recaller.recall("what is the staging url", now=NOW)
    assert again == first
    assert len(calls) == computed  # nothing re-tokenized on the second turn
    # The fresher fact changes subject: the stale one is no longer superseded by it.
    moved = dataclasses.replace(
        store[1], revision=2, name="staging-url", title="Staging URL",
        body="Billing exports run nightly; see the finance dashboard.",
        description="finance",
    )
    recaller.upsert(moved)
    after = recaller.recall("what is the staging url", now=NOW)
    fresh = Recaller([store[0], moved, *store[2:]]).recall("what is the staging url", now=NOW)
    assert after == fresh
    assert len(calls) > computed


_WS = re.compile(r"\s+")
WHITESPACE = st.sampled_from(
    [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u1680", "\u2000",
     "\u2028", "\u2029", "\u200b", "\u202f", "\u3000", "\ufeff", "x", "缓存", "é"]
)


@pytest.mark.slow
@given(st.one_of(TEXT, st.lists(WHITESPACE, max_size=30).map("".join)))
def test_compact_matches_the_whitespace_regex(text: str) -> None:
    assert compact(text) == _WS.sub(" ", text).strip()


def test_the_trace_is_assembled_on_first_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn that needs only the block never builds trace records; reading the trace once
    builds it once, equal to what recall saw."""
    from context_engine.recall import engine

    built: list[object] = []
    real = engine.TraceDrop

    def counting(**fields):  # type: ignore[no-untyped-def]
        built.append(fields)
        return real(**fields)

    monkeypatch.setattr(engine, "TraceDrop", counting)
    store = [fact(f"docker-note-{i}", f"docker release cache note {i} " * (1 + i % 5))
             for i in range(40)]
    recaller = Recaller(store)
    result = recaller.recall("docker release cache", limit=2, now=NOW)
    assert result.block and not built
    trace = result.trace
    assert trace.dropped and len(built) == len(trace.dropped)
    assert result.trace is trace and len(built) == len(trace.dropped)


def test_a_trace_read_after_a_change_shows_the_facts_recall_saw() -> None:
    """The lazily assembled trace holds the facts as they were when recall ran."""
    store = [fact(f"docker-note-{i}", f"docker release cache note {i} " * (1 + i % 5))
             for i in range(40)]
    recaller = Recaller(store)
    unread = recaller.recall("docker release cache", limit=2, now=NOW)
    expected = Recaller(store).recall("docker release cache", limit=2, now=NOW).trace
    for item in store:
        recaller.upsert(dataclasses.replace(item, revision=item.revision + 1, body="kernel"))
    assert unread.trace == expected
    assert {d.revision for d in unread.trace.dropped} == {1}
