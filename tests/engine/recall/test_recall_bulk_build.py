"""The one-pass first build equals adding facts one by one (S8.6 scores unchanged)."""

from __future__ import annotations

from collections import Counter

import pytest
from context_engine.recall import Recaller
from context_engine.recall.index import DocMeta, SparseIndex
from context_engine.recall.tokenize import cjk_terms, token_re, tokens
from hypothesis import given, settings
from hypothesis import strategies as st
from support.recall import NOW, fact, sample_store
from test_recall_bm25 import VOCAB, index_scores, reference_scores

docs_strategy = st.lists(
    st.lists(st.sampled_from(VOCAB), min_size=0, max_size=30), min_size=1, max_size=25
)


def per_token(text: str) -> list[str]:
    """The general tokenizer path (regex groups, lowercased per token)."""
    out: list[str] = []
    for cjk, word in token_re().findall(text):
        out.extend([word.lower()] if word else cjk_terms(cjk))
    return out


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("aZ9_ -.#/\n\tİßK记忆é\u0307")))
def test_tokens_equal_the_per_token_path(text: str) -> None:
    assert tokens(text) == per_token(text)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(docs_strategy, st.lists(st.sampled_from(VOCAB), min_size=1, max_size=5, unique=True))
def test_add_many_equals_adding_one_by_one(raw: list[list[str]], query: list[str]) -> None:
    docs = {f"d{i}": terms for i, terms in enumerate(raw)}
    one = SparseIndex()
    for key, terms in docs.items():
        one.add(key, Counter(terms), DocMeta(project=len(terms) % 2 == 0))
    bulk = SparseIndex()
    bulk.add_many(
        (key, Counter(terms), DocMeta(project=len(terms) % 2 == 0)) for key, terms in docs.items()
    )
    assert len(bulk) == len(one) and bulk.total_length == one.total_length
    assert bulk._keys == one._keys
    assert {t: list(p) for t, p in bulk._postings.items()} == {
        t: list(p) for t, p in one._postings.items()
    }
    n = len(one._keys)
    assert bulk._length[:n].tolist() == one._length[:n].tolist()
    assert bulk._project[:n].tolist() == one._project[:n].tolist()
    nonempty = {k: v for k, v in docs.items() if v}
    if nonempty:
        assert index_scores(bulk, query) == reference_scores(nonempty, query)
        assert index_scores(bulk, query) == index_scores(one, query)


def mixed_store() -> list:  # type: ignore[type-arg]
    facts = sample_store()
    facts.append(fact("release-target", "global copy of the release target", scope="global"))
    facts.append(fact("prefs", "likes terse release notes", scope="global", type="user"))
    facts.append(fact("docker-cache", "docker cache key for release builds", scope="global"))
    return facts


QUERIES = [
    "why does the release build fail?",
    "AuthHandler panic on empty session token",
    "记忆召回的预算是多少",
    "docker cache release",
]


def test_first_build_equals_upserting_one_by_one() -> None:
    facts = mixed_store()
    bulk = Recaller(facts)
    one = Recaller()
    for item in facts:
        one.upsert(item)
    assert bulk.stats.full_builds == 1
    assert bulk.stats.tokenized == len(facts)
    for item in facts:
        assert bulk.membership(item.reference) == one.membership(item.reference)
    for query in QUERIES:
        a = bulk.recall(query, now=NOW)
        b = one.recall(query, now=NOW)
        assert a.block == b.block
        assert a.trace.hits == b.trace.hits
        assert a.trace.dropped == b.trace.dropped
        assert [(h.fact, h.score) for h in bulk.search(query)] == [
            (h.fact, h.score) for h in one.search(query)
        ]


def test_duplicate_references_take_the_per_fact_path() -> None:
    first = fact("same", "first text about docker")
    second = fact("same", "second text about kernels", id="other")
    recaller = Recaller([first, second])
    assert [f.id for f in recaller.facts()] == ["other"]
    assert recaller.recall("kernels kernels second", now=NOW).trace.hits


def test_first_build_holds_one_fact_counts_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first build's peak memory: each fact's term counts are dropped once indexed."""
    from context_engine.recall import engine

    alive = [0]
    most = [0]

    class Tracked(Counter[str]):
        def __del__(self) -> None:
            alive[0] -= 1

    real = engine.term_counts

    def counting(item):  # type: ignore[no-untyped-def]
        counts = Tracked(real(item))
        alive[0] += 1
        most[0] = max(most[0], alive[0])
        return counts

    monkeypatch.setattr(engine, "term_counts", counting)
    facts = [fact(f"note-{i}", f"docker release note {i}") for i in range(40)]
    recaller = Recaller(facts)
    assert recaller.stats.full_builds == 1 and len(recaller.facts()) == 40
    assert most[0] <= 2, most[0]


def test_a_fact_failing_in_the_first_build_takes_the_per_fact_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fact whose text cannot be counted, after others were indexed, is skipped and
    reported exactly as upserting one by one does; the rest are indexed once."""
    from context_engine.recall import engine

    facts = mixed_store()
    broken = facts[-1].reference
    real = engine.term_counts

    def failing(item):  # type: ignore[no-untyped-def]
        if item.reference == broken:
            raise ValueError("bad text")
        return real(item)

    monkeypatch.setattr(engine, "term_counts", failing)
    bulk = Recaller(facts)
    one = Recaller()
    for item in facts:
        one.upsert(item)
    assert bulk.stats.full_builds == 1
    assert [f.reference for f in bulk.facts()] == [f.reference for f in one.facts()]
    assert sum(map(len, bulk._indexes.values())) == sum(map(len, one._indexes.values())) > 0
    for query in QUERIES:
        a, b = bulk.recall(query, now=NOW), one.recall(query, now=NOW)
        assert a.block == b.block
        assert a.trace.to_dict() == b.trace.to_dict()


def test_the_index_keys_are_the_trackers_strings() -> None:
    """One string object per reference in a bulk build (memory: issue 14)."""
    recaller = Recaller(sample_store())
    tracked = {reference: reference for reference in recaller._tracker.facts}
    keys = [key for index in recaller._indexes.values() for key in index._keys if key]
    assert keys and all(tracked[key] is key for key in keys)
