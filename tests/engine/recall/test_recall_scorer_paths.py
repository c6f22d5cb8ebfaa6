"""Every scoring path gives the same recall, float for float, and the cheap ones are taken.

Besides the plain path (a hook) and NumPy's (a host), a query of few postings in a large index
is scored over dicts of the touched slots, and a query no document can pass the gate with is
not scored at all (issue 14: a host's per-turn cost). Old and new must agree exactly: hits,
scores, drops and counts.
"""

from __future__ import annotations

import random
from dataclasses import asdict
from typing import Any

import numpy as np
import pytest
from context_engine.recall import Recaller, index, scoring
from context_engine.recall.index import NO_TIME, DocMeta, SparseIndex, gate_possible
from hypothesis import given, settings
from hypothesis import strategies as st
from support.recall import NOW, fact

WORDS = ["docker", "kernel", "socket", "vault", "retry", "cache", "release", "budget", "the",
         "build", "fix", "缓存", "发布", "超时", "2.x", "6928", "slow", "why"]
# "numpy" looks the gate up per pattern of found terms; "dense" is NumPy's per-slot gate,
# which queries finding more than ``TABLE_TERMS`` terms take.
PATHS = ("plain", "sparse", "numpy", "dense")


def forced(path: str, patch: pytest.MonkeyPatch) -> None:
    """Make ``SparseIndex.score`` take one path whatever the query's size."""
    patch.setattr(index, "use_python", lambda postings: path == "plain")
    patch.setattr(index, "use_sparse", lambda postings, slots: path == "sparse")
    if path == "dense":
        patch.setattr(index, "TABLE_TERMS", 0)


def outcome(recaller: Recaller, message: str, path: str) -> tuple[dict[str, Any], list[Any]]:
    """The recall trace and a search's hits with one scoring path forced."""
    with pytest.MonkeyPatch.context() as patch:
        forced(path, patch)
        trace = asdict(recaller.recall(message, now=NOW).trace)  # type: ignore[call-overload]
        found = [(h.fact.id, h.score) for h in recaller.search(message)]
    return trace, found


facts_strategy = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=12),
        st.sampled_from(["project", "global"]),
        st.sampled_from(["project", "reference", "user", "feedback"]),
        st.floats(min_value=0, max_value=800),
    ),
    min_size=1,
    max_size=30,
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(facts_strategy, st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
def test_random_stores_recall_the_same_on_every_path(specs, query) -> None:  # type: ignore[no-untyped-def]
    store = [
        fact(f"f{i}-{words[0]}", " ".join(words), scope=scope, type=kind,  # type: ignore[arg-type]
             age_days=age)
        for i, (words, scope, kind, age) in enumerate(specs)
    ]
    recaller = Recaller(store)
    message = " ".join(query)
    plain = outcome(recaller, message, "plain")
    for path in PATHS[1:]:
        assert outcome(recaller, message, path) == plain, path


def big_index() -> SparseIndex:
    """4,000 documents sharing a common word, each with a word of its own."""
    built = SparseIndex()
    built.add_many(
        (f"k{i}", {"common": 1 + i % 3, f"own{i}": 1}, DocMeta()) for i in range(4000)
    )
    return built


def test_a_small_query_in_a_large_index_skips_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    built = big_index()
    monkeypatch.setattr(index, "use_python", lambda postings: False)  # a host: NumPy loaded

    def refuse(*_: object) -> None:
        raise AssertionError("per-slot arrays made for a query of three postings")

    monkeypatch.setattr(SparseIndex, "_score_numpy", refuse)
    terms = ("own7", "own9", "own11")
    weights = {t: 1.0 for t in terms}
    scored = built.score(terms, weights, built.avgdl, frozenset(terms))
    assert scored.slots.tolist() == [7, 9, 11]


def test_a_query_no_document_can_pass_is_not_scored(monkeypatch: pytest.MonkeyPatch) -> None:
    built = big_index()

    def refuse(*_: object) -> None:
        raise AssertionError("scored a query whose only counted term cannot pass alone")

    for name in ("_score_numpy", "_score_plain", "_score_sparse"):
        monkeypatch.setattr(SparseIndex, name, refuse)
    weights = {"common": 0.5, "the": 1.0}
    # One counted term that may not stand alone, beside a stopword: nothing passes the gate.
    scored = built.score(("the", "common"), weights, built.avgdl, frozenset(), frozenset({"the"}))
    assert len(scored.slots) == 0


@pytest.mark.parametrize(
    ("present", "strong", "ignored", "weak", "possible"),
    [
        ([], None, set(), set(), False),
        (["a"], None, set(), set(), True),  # strong None: any match passes
        (["a"], set(), set(), set(), False),
        (["a"], {"a"}, set(), set(), True),
        (["a"], {"a"}, {"a"}, set(), False),  # ignored terms never count
        (["a", "b"], set(), set(), set(), True),
        (["a", "b"], set(), set(), {"a", "b"}, False),  # two weak terms need a subject
        (["a", "b"], set(), set(), {"a"}, True),
        (["a", "b"], set(), {"b"}, set(), False),
    ],
)
def test_gate_possible_follows_the_gate(  # type: ignore[no-untyped-def]
    present, strong, ignored, weak, possible
) -> None:
    given_strong = None if strong is None else frozenset(strong)
    assert gate_possible(present, given_strong, frozenset(ignored), frozenset(weak)) is possible


def old_boosted(built: SparseIndex, slots: Any, scores: Any, now_us: int) -> tuple[Any, Any]:
    """The boost and stale mask as computed before the per-slot arrays were kept."""
    project = np.frombuffer(built._project, dtype=np.int8)[slots].astype(np.bool_)
    adjusted = np.where(project, scores * scoring.PROJECT_BOOST, scores)
    fresh = np.frombuffer(built._fresh, dtype=np.int64)[slots]
    valid = fresh <= now_us
    age = np.where(valid, now_us - np.minimum(fresh, now_us), 0)
    mask = valid & (age > np.frombuffer(built._stale_after, dtype=np.int64)[slots])
    return np.where(mask, adjusted * scoring.STALE_PENALTY, adjusted), mask


stamps = st.one_of(st.just(NO_TIME), st.integers(min_value=0, max_value=2**62))


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), stamps, st.integers(min_value=0, max_value=2**50),
                  st.floats(min_value=0.01, max_value=50)),
        min_size=1,
        max_size=20,
    ),
    st.integers(min_value=0, max_value=2**62),
)
def test_kept_boost_arrays_match_the_per_candidate_formula(docs, now_us) -> None:  # type: ignore[no-untyped-def]
    built = SparseIndex()
    for i, (project, fresh, after, _) in enumerate(docs):
        built.add(f"k{i}", {"w": 1}, DocMeta(project=project, fresh_us=fresh,
                                             stale_after_us=after))
    slots = np.arange(len(docs))
    scores = np.array([score for *_, score in docs])
    new = built.boosted_np(slots, scores, now_us, scoring.PROJECT_BOOST, scoring.STALE_PENALTY)
    old = old_boosted(built, slots, scores, now_us)
    assert new[0].tolist() == old[0].tolist()
    assert new[1].tolist() == old[1].tolist()
    # A change drops the kept arrays: the next call sees the new fact.
    built.add("late", {"w": 1}, DocMeta(project=True, fresh_us=0, stale_after_us=0))
    last = np.array([len(docs)])
    again = built.boosted_np(last, np.array([1.0]), max(now_us, 1), 1.08, 0.92)
    assert again[0].tolist() == [1.08 * 0.92] and again[1].tolist() == [True]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), stamps, st.integers(min_value=0, max_value=2**50)),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.integers(min_value=0, max_value=2**62), min_size=1, max_size=8),
    st.booleans(),
)
def test_boosts_kept_between_calls_follow_the_clock(docs, clock, one_scope) -> None:  # type: ignore[no-untyped-def]
    """The stale flags are kept for a span of ``now`` and the boost is one number when every
    slot has the same scope: any sequence of clock readings, forwards or back, gives what the
    per-candidate formula gives."""
    built = SparseIndex()
    for i, (project, fresh, after) in enumerate(docs):
        built.add(f"k{i}", {"w": 1}, DocMeta(project=project or one_scope, fresh_us=fresh,
                                             stale_after_us=after))
    # Stamps either side of each stale edge, as well as the drawn readings.
    edges = [fresh + after for _, fresh, after in docs if fresh != NO_TIME]
    readings = [*clock, *(e + d for e in edges for d in (-1, 0, 1, 2) if 0 <= e + d < 2**62)]
    slots = np.arange(len(docs))
    scores = np.linspace(0.5, 3.0, len(docs))
    for now_us in readings:
        new = built.boosted_np(slots, scores, now_us, scoring.PROJECT_BOOST,
                               scoring.STALE_PENALTY)
        old = old_boosted(built, slots, scores, now_us)
        assert new[0].tolist() == old[0].tolist(), now_us
        assert new[1].tolist() == old[1].tolist(), now_us


@pytest.mark.parametrize("seed", range(4))
def test_large_stores_with_ties_rank_the_same_on_every_path(seed: int) -> None:
    """Hundreds of candidates above the floor, many tied in score and age: NumPy's head keeps
    only the contenders for the first places, and must list what the plain path lists."""
    rng = random.Random(seed)
    store = [
        fact(f"f{i}", " ".join(rng.choices(WORDS[:6], k=rng.randint(3, 8))),
             scope=rng.choice(["project", "global"]),  # type: ignore[arg-type]
             age_days=rng.choice([1.0, 1.0, 40.0, 400.0]))
        for i in range(400)
    ]
    recaller = Recaller(store)
    for message in ("docker kernel socket", "vault retry cache", "kernel cache"):
        plain = outcome(recaller, message, "plain")
        assert plain[0]["candidates"] > 100
        for path in ("numpy", "dense"):
            assert outcome(recaller, message, path) == plain, (message, path)
