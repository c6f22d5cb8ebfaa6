"""NumPy's table gate tests each slot's pattern of found terms with bit operations; it must
keep exactly the documents the per-pattern table (and so the S8 gate rule) keeps, and its
bitmasks, read only for the rows ``rank`` lists, must equal those of the other paths."""

from __future__ import annotations

import numpy as np
import pytest
from context_engine.recall import index
from context_engine.recall.index import DocMeta, SparseIndex
from hypothesis import given, settings
from hypothesis import strategies as st


@st.composite
def gate_cases(draw: st.DrawFn) -> tuple[list[index.Used], frozenset[str] | None, frozenset[str],
                                         frozenset[str]]:
    """Found terms at rising query positions, and which of them are ignored, weak or strong."""
    n = draw(st.integers(min_value=1, max_value=index.TABLE_TERMS))
    positions = sorted(draw(st.sets(st.integers(0, 20), min_size=n, max_size=n)))
    terms = [f"t{j}" for j in positions]
    used: list[index.Used] = [(j, t, None, -1, 0) for j, t in zip(positions, terms, strict=True)]
    pick = st.sets(st.sampled_from(terms))
    strong = None if draw(st.booleans()) else frozenset(draw(pick))
    return used, strong, frozenset(draw(pick)), frozenset(draw(pick))


@settings(max_examples=300, deadline=None)
@given(gate_cases(), st.data())
def test_the_bit_tests_keep_what_the_table_keeps(case, data) -> None:  # type: ignore[no-untyped-def]
    used, strong, ignored, weak = case
    table, _, _ = index._gate_tables(
        tuple((j, t in ignored, t in weak, strong is None or t in strong) for j, t, *_ in used)
    )
    dtype = np.uint8 if len(used) <= 8 else np.uint16
    every = np.arange(1 << len(used), dtype=dtype)  # every pattern, then a drawn mix
    drawn = data.draw(st.lists(st.integers(0, (1 << len(used)) - 1), max_size=40))
    for found in (every, np.array(drawn, dtype=dtype)):
        gate = index._gate_of(np, found, used, strong, ignored, weak)
        assert gate.tolist() == table.take(found).tolist()


def test_the_table_path_matches_the_per_slot_path_at_up_to_twelve_terms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    words = [f"w{k}" for k in range(12)]
    built = SparseIndex()
    built.add_many(
        (f"d{i}", {w: 1 + (i + k) % 3 for k, w in enumerate(words) if (i >> k) & 1 or k == i % 12},
         DocMeta())
        for i in range(3000)
    )
    weights = {w: 0.3 + k / 10 for k, w in enumerate(words)}
    monkeypatch.setattr(index, "use_python", lambda postings: False)
    monkeypatch.setattr(index, "use_sparse", lambda postings, slots: False)
    for size in (3, 8, 9, 12):
        terms = tuple(words[:size])
        cases = [(None, frozenset(), frozenset()), (frozenset(), frozenset({terms[0]}),
                 frozenset(terms[1:3])), (frozenset(terms[-1:]), frozenset(), frozenset())]
        for strong, ignored, weak in cases:
            table = built.score(terms, weights, built.avgdl, strong, ignored, weak)
            with monkeypatch.context() as patch:
                patch.setattr(index, "TABLE_TERMS", 0)
                dense = built.score(terms, weights, built.avgdl, strong, ignored, weak)
            assert table.slots.tolist() == dense.slots.tolist()
            assert table.scores.tolist() == dense.scores.tolist()
            assert table.bits.tolist() == dense.bits.tolist()
            assert table.matched.tolist() == dense.matched.tolist()
            rows = list(range(0, len(dense.slots), 97))
            assert table.bits_at(rows) == [dense.bits[i] for i in rows]
