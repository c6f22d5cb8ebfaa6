"""A restored index builds its key → slot table only when a key's slot is asked for."""

from __future__ import annotations

import pytest
from context_engine.recall.index import SparseIndex, _LazySlots
from hypothesis import given
from hypothesis import strategies as st
from test_recall_change_by_name import normal

keys_with_free_slots = st.lists(
    st.none() | st.text(max_size=3), max_size=12, unique_by=lambda k: object() if k is None else k
)


@given(keys_with_free_slots)
def test_lazy_slots_answer_as_the_built_table(keys: list[str | None]) -> None:
    built = {key: slot for slot, key in enumerate(keys) if key is not None}
    lazy = _LazySlots(list(keys))
    assert len(lazy) == len(built) and bool(lazy) == bool(built)
    assert lazy._pending is not None  # nothing built for the size
    for key in [*built, "absent"]:
        assert (key in lazy) == (key in built)
        assert lazy.get(key) == built.get(key)
    assert lazy == built and dict(lazy.items()) == built and list(lazy) == list(built)
    lazy["new-key"] = 99
    built["new-key"] = 99
    assert lazy.pop("new-key") == built.pop("new-key") and len(lazy) == len(built)


def test_a_lazily_restored_index_scores_and_changes_as_an_eager_one() -> None:
    from context_engine.recall.index import DocMeta

    meta = DocMeta(project=True, fresh_us=0, stale_after_us=2**62, updated_us=0)
    index = SparseIndex()
    for n, key in enumerate(["a", "b", "c", "d"]):
        index.add(key, {"x": n + 1, f"t{n}": 1}, meta)
    index.remove("b", ["x", "t1"])
    keys, free, terms, blobs, arrays, total = index.export()
    eager = SparseIndex.restore((keys, free, terms, blobs, arrays, total))
    lazy = SparseIndex.lazy(list(keys), list(free), dict(zip(terms, blobs, strict=True)),  # type: ignore[arg-type]
                            arrays, total)
    assert isinstance(lazy._slot_of, _LazySlots) and lazy._slot_of._pending is not None
    assert len(lazy) == len(eager) == 3 and lazy.avgdl == eager.avgdl
    for one in (eager, lazy):
        one.remove("a", ["x", "t0"])
        one.add("e", {"x": 5}, meta)
    assert len(lazy) == len(eager) and "e" in lazy and "a" not in lazy
    assert lazy.length("e") == eager.length("e") == 5
    # By key: with NumPy loaded the eager index leaves a tombstone where the lazy one, which
    # records patches instead, frees the slot at once (slots carry no meaning).
    assert normal(lazy) == normal(eager)


def test_past_a_few_lookups_the_table_is_built_and_changes_answer_as_an_eager_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A long-lived host applies change after change: each lookup a scan of 10^5 keys (~1 ms)
    # until the table is built once.
    from context_engine.recall import index as index_module
    from context_engine.recall.index import DocMeta

    monkeypatch.setattr(index_module, "_LAZY_SCANS", 3)
    meta = DocMeta(project=True, fresh_us=0, stale_after_us=2**62, updated_us=0)
    source = SparseIndex()
    for n in range(12):
        source.add(f"k{n}", {"x": n + 1, f"t{n}": 1}, meta)
    keys, free, terms, blobs, arrays, total = source.export()
    eager = SparseIndex.restore((keys, free, terms, blobs, arrays, total))
    lazy = SparseIndex.lazy(list(keys), list(free), dict(zip(terms, blobs, strict=True)),  # type: ignore[arg-type]
                            arrays, total)
    slots = lazy._slot_of
    assert isinstance(slots, _LazySlots)
    built_at = None
    for step in range(10):
        for one in (eager, lazy):
            one.remove(f"k{step}", ["x", f"t{step}"])
            one.add(f"k{step}", {"x": 2, "y": step}, meta)
            one.add(f"n{step}", {"y": 1}, meta)
        if built_at is None and slots._pending is None:
            built_at = step
        assert len(lazy) == len(eager) and f"n{step}" in lazy and "k99" not in lazy
        assert lazy.length(f"k{step}") == eager.length(f"k{step}") == 2 + step
    assert built_at == 1  # scanned for the first few lookups, a table from then on
    assert normal(lazy) == normal(eager)
