"""A restored index builds its key → slot table only when a key's slot is asked for."""

from __future__ import annotations

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
