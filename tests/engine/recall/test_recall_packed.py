"""A large bulk build packs its postings (4 bytes a pair, no object per term): every read and
every change then gives what the unpacked index gives, float for float (issue 14: the index's
memory at 100,000 facts)."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

import numpy  # noqa: F401  # a packed build loads it
import pytest
from context_engine.recall import Recaller
from context_engine.recall import index as index_module
from context_engine.recall.index import DocMeta, SparseIndex
from hypothesis import given, settings
from hypothesis import strategies as st
from support.recall import NOW, fact

TERMS = ["docker", "kernel", "socket", "vault", "retry", "cache", "缓存", "超时", "x1", "x2", "x3"]
PATHS = ("plain", "sparse", "numpy", "dense")

docs = st.dictionaries(st.sampled_from(TERMS), st.integers(1, 300), min_size=0, max_size=7)
steps = st.lists(
    st.tuples(st.sampled_from(["add", "remove"]), st.integers(0, 30), docs), max_size=40
)


@contextmanager
def packing(on: bool) -> Iterator[None]:
    """Bulk builds packed (any size) or never."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_module, "PACK_DOCS", 0 if on else 10**9)
        yield


@contextmanager
def path(name: str, tombstones: bool = True) -> Iterator[None]:
    """One scoring path forced, and removals as tombstones (a host) or searched out."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_module, "use_python", lambda postings: name == "plain")
        patch.setattr(index_module, "use_sparse", lambda postings, slots: name == "sparse")
        if name == "dense":
            patch.setattr(index_module, "TABLE_TERMS", 0)
        patch.setattr(index_module, "_tombstones", lambda: tombstones)
        yield


def built(start: dict[str, Mapping[str, int]], packed: bool) -> SparseIndex:
    index = SparseIndex()
    with packing(packed):
        index.add_many(((k, c, DocMeta(project=len(c) % 2 == 0)) for k, c in start.items()),
                       len(start))
    assert (index._packed is not None) == (packed and any(start.values()))
    return index


def scores(index: SparseIndex, query: list[str]) -> dict[str, tuple[float, int, int]]:
    weights = {t: 1.0 + i / 7 for i, t in enumerate(query)}
    scored = index.score(query, weights, index.avgdl or 1.0, None, frozenset({"x3"}),
                         frozenset({"x2"}))
    return {
        index.key(int(slot)): (float(score), int(count), int(bits))
        for slot, score, count, bits in zip(
            scored.slots, scored.scores, scored.matched, scored.bits, strict=True
        )
    }


def meaning(index: SparseIndex) -> dict[str, set[tuple[str, int]]]:
    """Each exported term's posting as (key, tf) pairs."""
    keys, _, terms, blobs, _, _ = index.export()
    out: dict[str, set[tuple[str, int]]] = {}
    for term, blob in zip(terms, blobs, strict=True):  # type: ignore[call-overload]
        values = array("i")
        values.frombytes(blob)
        out[term] = {(keys[values[i]], values[i + 1]) for i in range(0, len(values), 2)}  # type: ignore[index]
    return out


@settings(max_examples=120, deadline=None)
@given(
    st.dictionaries(st.integers(0, 30).map(lambda i: f"k{i}"), docs, max_size=25),
    steps,
    st.lists(st.sampled_from(TERMS), min_size=1, max_size=5, unique=True),
    st.sampled_from(PATHS),
    st.booleans(),
    st.sampled_from([1, 3, 1000]),
)
def test_a_packed_index_reads_and_changes_as_the_unpacked_one(  # type: ignore[no-untyped-def]
    start, plan, query, name, tombstones, tombs
) -> None:
    indexes = [built(start, packed) for packed in (False, True)]
    assert indexes[0].export() == indexes[1].export()  # same terms, pairs and order
    live = {k: c for k, c in start.items() if c}
    with path(name, tombstones), pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_module, "TOMBS", tombs)
        for op, number, counts in plan:
            key = f"k{number}"
            if op == "add" and key not in live and counts:
                for index in indexes:
                    index.add(key, counts, DocMeta())
                live[key] = counts
            elif op == "remove" and key in live:
                for index in indexes:
                    index.remove(key, live[key])
                del live[key]
        plain, packed = indexes
        assert {t: packed.df(t) for t in TERMS} == {t: plain.df(t) for t in TERMS}
        assert packed.vocabulary() == plain.vocabulary()
        assert scores(packed, query) == scores(plain, query)
    assert meaning(packed) == meaning(plain)
    assert packed.total_length == plain.total_length and len(packed) == len(plain)


def test_a_large_tf_keeps_its_exact_value() -> None:
    start = {
        "a": {"docker": 300, "kernel": 1}, "b": {"docker": 255, "kernel": 2}, "c": {"docker": 7},
    }
    plain, packed = (built(start, on) for on in (False, True))
    assert meaning(packed) == meaning(plain) == {
        "docker": {("a", 300), ("b", 255), ("c", 7)}, "kernel": {("a", 1), ("b", 2)},
    }
    for name in PATHS:
        with path(name):
            assert scores(packed, ["docker", "kernel"]) == scores(plain, ["docker", "kernel"])


def test_a_large_bulk_build_is_packed_in_four_bytes_a_pair() -> None:
    index = SparseIndex()
    count = index_module.PACK_DOCS
    index.add_many(
        ((f"k{i}", {"common": 1 + i % 3, f"own{i}": 1, "ticket": 2}, DocMeta())
         for i in range(count)),
        count,
    )
    assert index._packed is not None and not index._postings
    pairs = 3 * count
    # Pairs, each term's start and count, its text and its place in the hash table.
    assert index._packed.nbytes() <= 4 * pairs + 40 * (count + 2)
    assert index.df("common") == count and index.df("own7") == 1 and index.df("nothing") == 0


def recall_outcome(recaller: Recaller, message: str, name: str) -> tuple[Any, Any]:
    with path(name):
        trace = asdict(recaller.recall(message, now=NOW).trace)  # type: ignore[call-overload]
        found = [(h.fact.id, h.score) for h in recaller.search(message)]
    return trace, found


def test_recall_over_a_packed_build_is_that_of_an_unpacked_one() -> None:
    words = ["docker", "kernel", "socket", "vault", "retry", "cache", "缓存", "发布", "超时"]
    store = [
        fact(f"f{i}", " ".join(words[j % len(words)] for j in range(i, i + 2 + i % 5)),
             scope="global" if i % 4 == 0 else "project", age_days=i % 40)
        for i in range(60)
    ]
    with packing(False):
        plain = Recaller(store)
    with packing(True):
        packed = Recaller(store)
    assert packed.pool._packed is not None
    changed = [*store[:50], fact("f3", "docker kernel moved", age_days=2), fact("n1", "vault 缓存")]
    for message in ("docker kernel", "缓存 超时", "retry the vault socket"):
        for name in PATHS:
            assert recall_outcome(packed, message, name) == recall_outcome(plain, message, name)
    plain.sync(changed)
    packed.sync(changed)
    for message in ("docker kernel", "缓存 超时", "vault"):
        for name in PATHS:
            assert recall_outcome(packed, message, name) == recall_outcome(plain, message, name)


def test_packed_terms_are_found_through_the_remembered_numbers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start = {f"k{i}": {f"t{i}": 1, f"t{i + 1}": 2, "缓存": 1} for i in range(30)}
    packed = built(start, True)._packed
    assert packed is not None
    monkeypatch.setattr(index_module, "KNOWN_TERMS", 3)  # starts over every few lookups
    names = [f"t{i}" for i in range(40)] + ["缓存", "absent", "t1\ud800"]
    for _ in range(3):
        found = {term: packed.find(term) for term in names}
        assert {t: packed.term(n) for t, n in found.items() if n >= 0} == {
            t: t for t in [f"t{i}" for i in range(31)] + ["缓存"]
        }
        assert len(packed.known) <= 3


def test_folding_remembers_words_not_one_off_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    from context_engine.recall import tokenize

    monkeypatch.setattr(tokenize, "_FOLDED", {})
    monkeypatch.setattr(tokenize, "_FOLDED_LIMIT", 4)
    text = "Caches ticket1485 2991 pushed the_api caching Caches déjà"
    first = tokenize.tokens(text)
    assert first == [tokenize._fold(w) for w in text.lower().split()] == [
        "cach", "ticket1485", "2991", "push", "the_api", "cach", "cach", "déjà",
    ]
    assert set(tokenize._FOLDED) <= {"caches", "pushed", "caching", "déjà"}
    assert len(tokenize._FOLDED) <= 4
    assert tokenize.tokens(text) == first and tokenize.fold("pushing") == "push"


def test_a_packed_build_gives_the_freed_heap_back(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[None] = []
    monkeypatch.setattr(index_module, "_return_freed_heap", lambda: calls.append(None))
    built({"a": {"docker": 1}, "b": {"kernel": 2}}, True)
    assert calls == [None]
    built({"a": {"docker": 1}}, False)
    assert calls == [None]
    monkeypatch.undo()
    index_module._return_freed_heap()  # where the C library has malloc_trim, and where not
