"""A host's notes baseline after a change: the marks as an overlay equal a copied table."""

from __future__ import annotations

import random

import pytest
from context_engine.session import notes
from context_engine.session.notes import FactMark, _moved, _Overlay


def _mark(i: int, revision: int = 1) -> FactMark:
    return FactMark(f"mem-{i}", revision, f"project/f{i}.md")


def test_marks_moved_turn_after_turn_equal_a_copied_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(notes, "_COPY_BELOW", 100)  # the same code on a small table
    monkeypatch.setattr(notes, "_FLATTEN_PAST", 40)
    rng = random.Random(5)
    size = 150
    plain: dict[str, FactMark] = {f"mem-{i}": _mark(i) for i in range(size)}
    moved: object = dict(plain)
    overlays = 0
    for step in range(1500):
        changed = {}
        for _ in range(rng.randrange(3)):
            i = rng.randrange(size + 20)
            changed[f"mem-{i}"] = _mark(i, step + 2)
        gone = []
        if rng.random() < 0.2:
            key = f"mem-{rng.randrange(size)}"
            if key in plain and key not in changed:
                gone.append(key)
        moved = _moved(moved, changed, gone)  # type: ignore[arg-type]
        plain.update(changed)
        for key in gone:
            del plain[key]
        overlays += isinstance(moved, _Overlay)
        assert len(moved) == len(plain)  # type: ignore[arg-type]
        probe = [f"mem-{rng.randrange(size + 20)}" for _ in range(3)]
        for key in [*probe, "mem-none", *gone, *changed]:
            assert moved.get(key) == plain.get(key)  # type: ignore[attr-defined]
        if step % 50 == 0:
            assert dict(moved.items()) == plain  # type: ignore[attr-defined]
    assert dict(moved.items()) == plain  # type: ignore[attr-defined]
    assert overlays > 1000  # mostly overlays, flattened now and then


def test_a_small_or_decoded_baseline_is_copied() -> None:
    small = {"mem-1": _mark(1)}
    moved = _moved(small, {"mem-2": _mark(2)}, ["mem-1"])
    assert type(moved) is dict and moved == {"mem-2": _mark(2)} and small == {"mem-1": _mark(1)}


@pytest.mark.parametrize("scans", [16, 1])  # ids scanned, or a table built past one lookup
def test_a_saved_baseline_moves_as_an_overlay_on_its_table_equal_to_a_copied_table(
    monkeypatch: pytest.MonkeyPatch, scans: int
) -> None:
    from context_engine.session.notes import Baseline, _MarkTable, saved_layers

    monkeypatch.setattr(notes, "_SCANS", scans)
    monkeypatch.setattr(notes, "_FLATTEN_PAST", 10**6)  # overlays only: what a hook saves
    rng = random.Random(7)
    size = 120
    plain: dict[str, FactMark] = {f"mem-{i}": _mark(i) for i in range(size)}
    raw = [[m.id, m.revision, m.reference] for m in plain.values()]
    raw.insert(3, ["mem-9", 0, "project/old.md"])  # an earlier entry of one id: the last wins
    table = _MarkTable(raw, "file.marks")
    moved: object = table
    for step in range(300):
        changed = {f"mem-{i}": _mark(i, step + 2) for i in rng.sample(range(size + 20), 2)}
        gone = [k for k in (f"mem-{rng.randrange(size)}",) if k in plain and k not in changed]
        assert isinstance(moved, _MarkTable | _Overlay)
        for key in [*changed, *gone, "mem-none"]:
            assert moved.get(key) == plain.get(key)
        moved = _moved(moved, changed, gone)
        plain.update(changed)
        for key in gone:
            del plain[key]
        # An overlay on the saved table, which nothing decoded as a whole nor copied.
        assert isinstance(moved, _Overlay) and moved._base is table
        assert step >= 50 or table._table is None  # until walked whole below
        assert saved_layers(moved) == ("file.marks", moved._set, moved._gone)
        if step % 50 == 49:
            assert dict(moved.items()) == plain
            saved = Baseline(moved, {}, frozenset(), "d").to_json()["facts"]
            assert sorted(map(tuple, saved)) == sorted(plain.values())  # type: ignore[call-overload]
    assert len(moved) == len(plain)  # type: ignore[arg-type]


def test_a_malformed_saved_baseline_reads_as_all_new() -> None:
    from context_engine.session.notes import Baseline

    raw = [["mem-1", 1, "project/f1.md"], ["mem-2", "x", "project/f2.md"]]
    facts = Baseline.from_json({"facts": raw, "instructions": {}, "masked": [],
                                "digest": "d"}).facts
    assert facts.get("mem-1") is None and len(facts) == 0
