"""Per-file patches of listed rows (no body in memory) keep every row's search text."""

from __future__ import annotations

from pathlib import Path

from context_center.services.fact_delta import KeyIndex, patch
from context_center.services.fact_rows import FactFilter, FactsSnapshot, build_rows, filter_rows
from context_engine.facts.model import Fact


def _fact(name: str, description: str, revision: int = 1) -> Fact:
    return Fact(f"mem-{name}", revision, name, "", description, "project", "project", "",
                path=Path("/store") / f"{name}.md")


def test_a_patch_keeps_the_search_text_of_listed_rows_it_rebuilds() -> None:
    twin = _fact("twin", "the same description")  # shares a key with the changed fact
    other = _fact("other", "something else")
    changed = _fact("changed", "the same description")
    bodies = {id(twin): "zebra words", id(other): "okapi words", id(changed): "old body"}
    rows = build_rows([changed, other, twin], lazy=True, bodies=bodies)
    snapshot = FactsSnapshot(rows, ())
    index = KeyIndex(rows)
    newer = Fact(changed.id, 2, "changed", "", "the same description", "project", "project",
                 "new body", path=changed.path)
    patched = patch(snapshot, index, {str(changed.path): newer})
    found = filter_rows(patched.snapshot.rows, FactFilter(text="zebra"))
    assert [r.fact.name for r in found] == ["twin"]  # rebuilt for its note, text kept
    twin_row = next(r for r in patched.snapshot.rows if r.fact.name == "twin")
    assert twin_row.lazy and "Possible duplicate of project/changed.md" in twin_row.note
    assert [r.fact.name for r in filter_rows(patched.snapshot.rows,
                                             FactFilter(text="new body"))] == ["changed"]


def test_counts_adjusted_by_a_patch_equal_counting_again() -> None:
    from datetime import UTC, datetime

    from context_center.services.fact_rows import adjusted_counts, build_rows, counts_of
    from context_engine.facts.model import Fact

    when = datetime(2026, 1, 1, tzinfo=UTC)
    facts = [Fact(f"mem-{i}", 1, f"n{i}", "", f"d{i}", ("user", "project")[i % 2],
                  ("global", "project")[i % 2], "", when, when) for i in range(6)]
    old = build_rows(facts)
    changed = Fact("mem-1", 2, "n1", "", "d1", "feedback", "global", "", when, when)
    new = build_rows([*facts[:1], changed, *facts[2:]])
    removed, added = (old[1],), (new[1],)
    assert adjusted_counts(counts_of(old), removed, added) == counts_of(new)
    assert adjusted_counts(counts_of(old), old, ()) == counts_of(())
