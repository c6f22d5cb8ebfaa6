"""Removals in a host are tombstones, purged in bulk: never a different answer (issue 14).

With NumPy loaded, ``SparseIndex.remove`` costs O(1) per term of the removed document; its pairs
stay in the postings until a purge. Everything read from the index (df, scores, gate, exports,
a frozen index's changed postings) must equal what eager removal gives.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping

import numpy  # noqa: F401  # loaded: the host's removal path
import pytest
from context_engine.recall import index as index_module
from context_engine.recall.index import DocMeta, SparseIndex
from hypothesis import given, settings
from hypothesis import strategies as st

TERMS = ["docker", "kernel", "socket", "vault", "retry", "cache", "缓存", "x1", "x2", "x3"]

docs = st.dictionaries(st.sampled_from(TERMS), st.integers(1, 4), min_size=1, max_size=6)
steps = st.lists(
    st.tuples(st.sampled_from(["add", "remove"]), st.integers(0, 11), docs), max_size=60
)


def _pairs(index: SparseIndex) -> dict[str, set[tuple[str, int]]]:
    """Each term's posting as (key, tf) pairs: what a posting means, whatever the slots."""
    keys, _, terms, blobs, _, _ = index.export()
    out: dict[str, set[tuple[str, int]]] = {}
    for term, blob in zip(terms, blobs, strict=True):  # type: ignore[call-overload]
        values = array("i")
        values.frombytes(blob)
        out[term] = {(keys[s], values[i + 1]) for i, s in enumerate(values) if i % 2 == 0}  # type: ignore[index]
    return out


def _scores(index: SparseIndex, query: list[str]) -> dict[str, tuple[float, int, int]]:
    weights = {t: 1.0 + i for i, t in enumerate(query)}
    scored = index.score(query, weights, index.avgdl or 1.0, None)
    return {
        index.key(int(slot)): (float(score), int(count), int(bits))
        for slot, score, count, bits in zip(
            scored.slots, scored.scores, scored.matched, scored.bits, strict=True
        )
    }


def _run(
    plan: list[tuple[str, int, dict[str, int]]], tombs: int
) -> tuple[SparseIndex, dict[str, Mapping[str, int]]]:
    index = SparseIndex()
    live: dict[str, Mapping[str, int]] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_module, "TOMBS", tombs)
        for op, number, counts in plan:
            key = f"k{number}"
            if op == "add" and key not in live:
                index.add(key, counts, DocMeta())
                live[key] = counts
            elif op == "remove" and key in live:
                index.remove(key, live.pop(key))
    return index, live


@settings(max_examples=80, deadline=None)
@given(steps, st.lists(st.sampled_from(TERMS), min_size=1, max_size=4, unique=True),
       st.sampled_from([1, 3, 1000]))
def test_tombstoned_removals_read_as_a_fresh_build(plan, query, tombs) -> None:  # type: ignore[no-untyped-def]
    changed, live = _run(plan, tombs)
    fresh = SparseIndex()
    for key, counts in live.items():
        fresh.add(key, counts, DocMeta())
    assert len(changed) == len(fresh) and changed.total_length == fresh.total_length
    assert {t: changed.df(t) for t in TERMS} == {t: fresh.df(t) for t in TERMS}
    assert changed.vocabulary() == fresh.vocabulary()
    assert _scores(changed, query) == _scores(fresh, query)
    with pytest.MonkeyPatch.context() as patch:  # the plain scorer skips tombstones too
        patch.setattr(index_module, "use_python", lambda postings: True)
        assert _scores(changed, query) == _scores(fresh, query)
    assert _pairs(changed) == _pairs(fresh)  # export purges first
    assert not changed._tomb and not changed._dead


def test_a_host_removal_never_searches_a_posting(monkeypatch: pytest.MonkeyPatch) -> None:
    def search(*_: object) -> int:
        raise AssertionError("removal searched a posting for the slot")

    monkeypatch.setattr(index_module, "_find_slot", search)
    built = SparseIndex()
    built.add_many((f"k{i}", {"common": 1 + i % 3, f"own{i}": 1}, DocMeta()) for i in range(500))
    for i in range(0, 500, 7):
        built.remove(f"k{i}", ["common", f"own{i}"])
    assert built.df("common") == 500 - len(range(0, 500, 7)) and built.df("own7") == 0
    assert "k7" not in _scores(built, ["common", "own7"])


def test_a_frozen_index_hands_over_purged_postings() -> None:
    built = SparseIndex()
    built.add_many((f"k{i}", {"common": 1 + i % 3, f"own{i}": 1}, DocMeta()) for i in range(40))
    keys, free, terms, blobs, arrays, total = built.export()
    lazy = SparseIndex.lazy(keys, free, dict(zip(terms, blobs, strict=True)), arrays, total)  # type: ignore[arg-type]
    lazy.remove("k3", {"common": 1, "own3": 1})
    lazy.add("k99", {"common": 2, "fresh": 1}, DocMeta())
    changed = lazy.changed_postings()
    assert changed["own3"] is None
    common = array("i")
    common.frombytes(changed["common"] or b"")
    slots = common[0::2]
    keys_now, free_now, _, _ = lazy.slot_state()
    # No pair of the removed key is handed over, every slot named is a live key's: a lazily
    # restored index records the removal as a patch and frees slot 3 at once (no tombstone).
    assert len(slots) == 40 and lazy._slot_of["k99"] in slots
    assert "k3" not in keys_now and all(keys_now[s] is not None for s in slots)
    assert sorted(free_now) == sorted(s for s, key in enumerate(keys_now) if key is None)
    assert lazy.df("common") == 40 and lazy.df("own3") == 0
