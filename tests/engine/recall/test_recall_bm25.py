"""BM25 scores equal a straightforward S8.6 reference on random pools, incl. after updates."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from context_engine.recall.gate import passes
from context_engine.recall.index import DocMeta, SparseIndex, weights_for
from hypothesis import given, settings
from hypothesis import strategies as st

VOCAB = ["alpha", "beta", "gamma", "delta", "eps", "记忆", "召回", "zeta9", "x"]

docs_strategy = st.lists(
    st.lists(st.sampled_from(VOCAB), min_size=1, max_size=30), min_size=1, max_size=25
)
query_strategy = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=5, unique=True)


def reference_scores(docs: dict[str, list[str]], query: list[str]) -> dict[str, float]:
    """S8.6 written out plainly: k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5)/(df + 0.5))."""
    k1, b = 1.2, 0.75
    n = len(docs)
    avgdl = sum(len(d) for d in docs.values()) / n
    df = {t: sum(1 for d in docs.values() if t in d) for t in query}
    out: dict[str, float] = {}
    for key, terms in docs.items():
        counts = Counter(terms)
        score = 0.0
        matched = False
        for t in query:
            tf = counts[t]
            if tf == 0:
                continue
            matched = True
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            score += idf * (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * len(terms) / avgdl))
        if matched:
            out[key] = score
    return out


def index_scores(index: SparseIndex, query: list[str]) -> dict[str, float]:
    weights, avgdl, _ = weights_for(query, [index])
    scored = index.score(query, weights, avgdl, None)
    return {
        index.key(s): v for s, v in zip(scored.slots.tolist(), scored.scores.tolist(), strict=True)
    }


def build(docs: dict[str, list[str]]) -> SparseIndex:
    index = SparseIndex()
    for key, terms in docs.items():
        index.add(key, Counter(terms), DocMeta())
    return index


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(docs_strategy, query_strategy)
def test_scores_equal_reference(raw: list[list[str]], query: list[str]) -> None:
    docs = {f"d{i}": terms for i, terms in enumerate(raw)}
    assert index_scores(build(docs), query) == reference_scores(docs, query)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(docs_strategy, docs_strategy, st.lists(st.integers(0, 24), max_size=10), query_strategy)
def test_scores_equal_reference_after_incremental_updates(
    raw: list[list[str]], replacements: list[list[str]], removals: list[int], query: list[str]
) -> None:
    docs = {f"d{i}": terms for i, terms in enumerate(raw)}
    index = build(docs)
    for i, terms in enumerate(replacements):
        key = f"d{i}"
        if key in docs:
            index.remove(key, Counter(docs[key]))
        docs[key] = terms
        index.add(key, Counter(terms), DocMeta())
    for r in removals:
        key = f"d{r}"
        if key in docs and len(docs) > 1:
            index.remove(key, Counter(docs.pop(key)))
    assert index_scores(index, query) == reference_scores(docs, query)
    assert len(index) == len(docs)
    assert index.total_length == sum(len(d) for d in docs.values())


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(docs_strategy, query_strategy, st.sets(st.sampled_from(VOCAB)),
       st.sets(st.sampled_from(VOCAB)), st.sets(st.sampled_from(VOCAB)))
def test_vectorised_gate_equals_scalar_gate(
    raw: list[list[str]], query: list[str], strong: set[str], ignored: set[str], weak: set[str]
) -> None:
    docs = {f"d{i}": terms for i, terms in enumerate(raw)}
    index = build(docs)
    weights, avgdl, _ = weights_for(query, [index])
    scored = index.score(
        query, weights, avgdl, frozenset(strong), frozenset(ignored), frozenset(weak)
    )
    got = {index.key(s) for s in scored.slots.tolist()}
    want = {
        k
        for k, terms in docs.items()
        if passes({t for t in query if t in terms}, strong, ignored, weak)
    }
    assert got == want
    for slot, bits in zip(scored.slots.tolist(), scored.bits.tolist(), strict=True):
        terms = docs[index.key(slot)]
        assert {query[j] for j in range(len(query)) if bits >> j & 1} == set(query) & set(terms)
