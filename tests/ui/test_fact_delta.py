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
