"""A change the store monitor names costs that change, not the store (#14).

The cold turn after one file changed looks the named files up in the saved listing's rows
(never the whole listing decoded, its bytes re-encoded or digested), and records the changed
facts' terms as patches without reading those terms' postings; only the query's postings are
read. Every step still equals a fresh build, and a later turn that walks the stores (no
monitor) finds the same listing and records its digest.
"""

from __future__ import annotations

from typing import Any, cast

import pytest
from context_engine.engine import ContextEngine
from context_engine.monitor import client
from context_engine.paths import EnginePaths
from context_engine.recall import delta, persist, quiet, state
from context_engine.recall.index import SparseIndex, _LazySlots
from test_recall_delta import write
from test_recall_delta_patches import STEPS, by_key, check, cold_turn
from test_recall_delta_patches import paths as paths  # the fixture


class FakeMonitor:
    """The store monitor's answers as the test sets them: ``names`` per store (``None``: no
    monitor); a turn with no token saved yet is told "unknown" (it walks, then records it)."""

    def __init__(self) -> None:
        self.generation = 0
        self.names: list[set[str]] | None = None

    def __call__(
        self, state_dir: str, dirs: list[str], since: object, *, start: bool = True
    ) -> tuple[list[object], list[set[str] | None]] | None:
        if self.names is None:
            return None
        self.generation += 1
        answer = [set(n) for n in self.names] if since is not None else [None] * len(dirs)
        return ["fake", self.generation], answer  # type: ignore[return-value]


@pytest.fixture()
def monitor(monkeypatch: pytest.MonkeyPatch) -> FakeMonitor:
    fake = FakeMonitor()
    monkeypatch.setattr(client, "changes_since", fake)
    return fake


def saved_sum(paths: EnginePaths) -> object:
    with state.StateFile(persist.recall_cache_path(paths)).reading() as reader:
        assert reader is not None
        return reader.meta(state.LISTING_SUM).get(state.LISTING_SUM)


@pytest.mark.slow
def test_a_named_change_reads_only_its_files_and_the_query_postings(
    paths: EnginePaths, monitor: FakeMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold_turn(paths)  # no monitor: the stores read, the state saved
    monitor.names = [set(), set()]
    cold_turn(paths)  # the monitor's first token recorded beside it
    ups: list[int] = []
    real = delta.brought_up

    def counted(*a: Any, **k: Any) -> Any:
        ups.append(1)
        return real(*a, **k)

    monkeypatch.setattr(delta, "brought_up", counted)
    fetched: list[str] = []
    real_get = state.PostingsView.__getitem__

    def spy(view: state.PostingsView, term: str) -> bytes:
        fetched.append(term)
        return real_get(view, term)

    def whole(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("the whole saved listing was decoded")

    for count, (op, n, words) in enumerate(STEPS, start=1):
        target = paths.project_store / f"f{n:02}.md"
        if op == "delete":
            target.unlink()
        else:
            write(paths.project_store, target.name, [*words, f"step{count}"])
        monitor.names = [{target.name}, set()]
        fetched.clear()
        with monkeypatch.context() as patch:
            patch.setattr(state.StateReader, "saved_listing", whole)
            patch.setattr(state.StateReader, "saved_listings", whole)
            patch.setattr(state.PostingsView, "__getitem__", spy)
            patch.setattr(quiet, "listing_bytes", whole)
            patch.setattr(delta, "listing_bytes", whole)
            cold_turn(paths)
        assert len(ups) == count  # brought up from the saved state, not read in full
        # The changed facts' own terms (old and new) were patched, never read.
        assert not {f"step{count}", f"step{count - 1}", f"only{n}", "edited3"} & set(fetched)
        assert saved_sum(paths) == quiet.UNKNOWN_SUM  # not made: O(files)
        monitor.names = [set(), set()]
        check(paths)
    # A long-lived process asking again finds the view still current (nothing changed since).
    write(paths.project_store, "f11.md", [*STEPS[0][2], "later"])
    monitor.names = [{"f11.md"}, set()]
    engine = ContextEngine(paths)
    seen = engine.active_facts()
    assert isinstance(seen, quiet.QuietFacts) and engine.active_facts() is seen
    monitor.names = [set(), set()]
    cold_turn(paths)
    check(paths)
    # A turn that walks the stores finds the same listing: brought up with nothing to read,
    # and the listing's digest recorded again (the next walking turn is quiet).
    monitor.names = None
    cold_turn(paths)
    assert len(ups) == len(STEPS) + 2
    assert saved_sum(paths) not in (None, quiet.UNKNOWN_SUM)
    check(paths)
    cold_turn(paths)
    assert len(ups) == len(STEPS) + 2


def test_a_change_to_a_lazy_index_reads_no_posting_of_its_terms() -> None:
    from context_engine.recall.index import DocMeta

    meta = DocMeta(project=True, fresh_us=0, stale_after_us=2**62, updated_us=0)
    built = SparseIndex()
    for n, key in enumerate(["a", "b", "c", "d"]):
        built.add(key, {"x": n + 1, f"t{n}": 1}, meta)
    keys, free, terms, blobs, arrays, total = built.export()
    asked: list[str] = []

    class Frozen(dict[str, bytes]):
        def get(self, term: str, default: Any = None) -> Any:
            asked.append(term)
            return super().get(term, default)

    lazy = SparseIndex.lazy(
        list(cast("list[str | None]", keys)), list(cast("list[int]", free)),
        Frozen(zip(cast("list[str]", terms), cast("list[bytes]", blobs), strict=True)),
        cast("list[bytes]", arrays), cast("int", total),
    )
    for one in (built, lazy):
        one.remove("b", ["x", "t1"])
        one.add("e", {"x": 5, "t1": 2, "new": 1}, meta)
        one.remove("c", ["x", "t2"])
    assert asked == []  # patches recorded, nothing read
    assert isinstance(lazy._slot_of, _LazySlots) and lazy._slot_of._pending is not None
    assert "e" in lazy and "b" not in lazy and len(lazy) == len(built) == 3
    assert lazy.df("x") == built.df("x") == 3 and lazy.df("t2") == built.df("t2") == 0
    assert set(asked) == {"x", "t2"}  # read when first asked for, the patches applied
    assert normal(lazy) == normal(built)


def normal(index: SparseIndex) -> tuple[Any, ...]:
    """An index's export by key (slots and posting order carry no meaning)."""
    keys, _free, terms, blobs, arrays, total = index.export()
    return (*by_key(keys, terms, blobs, arrays), total)  # type: ignore[arg-type]
