"""A change writes patches of the changed facts' terms and slots, never whole postings (#14).

Many facts share common terms; each step changes, removes, re-adds (into a freed slot) or
creates facts, a cold process brings the saved state up and writes its delta, and then the
state as a fresh reader sees it (base, the delta's whole rows, posting patches, slot rows,
listing rows) must equal a fresh build over every fact — postings by (key, tf), per-slot values
by key — and answer the same; so must the base after the delta is folded into it.
"""

from __future__ import annotations

import sqlite3
from array import array
from pathlib import Path
from typing import Any

import pytest
from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.recall import Recaller, delta, persist, quiet, state
from context_engine.recall.index import SparseIndex
from support.store import settle_all
from test_recall_delta import write
from test_recall_persist import answers

COMMON = ["docker", "cache", "release"]  # in every fact: their postings span the store
STEMS = {"docker", "cach", "releas"}  # as the index holds them
RARE = ["vault", "kernel", "socket", "budget", "retry", "schema", "proxy", "queue"]


def fresh(paths: EnginePaths) -> tuple[Recaller, list[Any]]:
    snapshot = Memory(paths).snapshot()
    recaller = Recaller(snapshot.facts, diagnostics=snapshot.diagnostics)
    return recaller, answers(recaller)


Postings = dict[str, set[tuple[str, int]]]


def by_key(keys: list[str | None], terms: list[str], blobs: list[bytes],
           arrays: list[bytes]) -> tuple[Postings, dict[str, tuple[Any, ...]]]:
    """Postings as term → {(key, tf)} and per-slot values as key → values: slot-free."""
    postings: dict[str, set[tuple[str, int]]] = {}
    for term, blob in zip(terms, blobs, strict=True):
        pairs = array("i")
        pairs.frombytes(blob)
        entries = {(str(keys[s]), tf) for s, tf in zip(pairs[0::2], pairs[1::2], strict=True)}
        assert len(entries) == len(pairs) // 2  # no slot twice
        postings[term] = entries
    columns = []
    for blob, code in zip(arrays, "dbqqq", strict=True):
        values = array(code)
        values.frombytes(blob)
        columns.append(values)
    per_key = {key: tuple(c[s] for c in columns) for s, key in enumerate(keys) if key is not None}
    return postings, per_key


def saved_state(paths: EnginePaths) -> dict[str, Any]:
    with state.StateFile(persist.recall_cache_path(paths)).reading() as reader:
        assert reader is not None
        document = reader.document()
    out = {}
    for name, (keys, free, terms, blobs, arrays, total) in document["indexes"].items():
        assert sorted(free) == sorted(s for s, key in enumerate(keys) if key is None)
        out[name] = (*by_key(keys, terms, blobs, arrays), total)
    return out


def built_state(recaller: Recaller) -> dict[str, Any]:
    out = {}
    for name, index in recaller._indexes.items():
        keys, _free, terms, blobs, arrays, total = index.export()
        out[str(name)] = (*by_key(keys, terms, blobs, arrays), total)  # type: ignore[arg-type]
    return out


def delta_rows(paths: EnginePaths, sql: str) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(state.delta_path(persist.recall_cache_path(paths)))
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def cold_turn(paths: EnginePaths) -> None:
    engine = ContextEngine(paths)
    engine.recall("docker cache vault", engine.active_facts())


def check(paths: EnginePaths) -> None:
    recaller, expected = fresh(paths)
    assert saved_state(paths) == built_state(recaller)
    for _ in range(2):  # the process reading the delta, and the one after it
        engine = ContextEngine(paths)
        seen = engine.active_facts()
        assert isinstance(seen, quiet.QuietFacts)
        assert answers(engine.recaller(seen)) == expected


@pytest.fixture()
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EnginePaths:
    settle_all(monkeypatch)
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=tmp_path / "ws")
    for i in range(24):
        write(paths.project_store, f"f{i:02}.md", [*COMMON, RARE[i % 8], f"only{i}"])
    write(paths.global_store, "g.md", [*COMMON, "vault"], scope="global")
    return paths


STEPS = [
    ("edit", 3, ["docker", "cache", "kernel", "edited3"]),  # drops release, keeps two common
    ("delete", 5, []),
    ("create", 30, [*COMMON, "socket", "new30"]),  # into the slot f05 left
    ("edit", 3, [*COMMON, "vault", "edited3b"]),  # the same fact again: patches compose
    ("create", 5, [*COMMON, "retry", "back5"]),  # f05 back, in another slot
    ("delete", 30, []),
    ("edit", 7, ["cache"]),
    ("delete", 7, []),
    ("create", 7, ["docker", "only7"]),  # removed and re-added between saves
    ("edit", 0, [*COMMON, "budget", "only0"]),  # same terms, new tf order
]


@pytest.mark.slow
def test_changes_write_patches_and_every_step_equals_a_fresh_build(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold_turn(paths)
    ups: list[int] = []
    real = delta.brought_up
    monkeypatch.setattr(delta, "brought_up", lambda *a, **k: ups.append(1) or real(*a, **k))
    for count, (op, n, words) in enumerate(STEPS, start=1):
        target = paths.project_store / f"f{n:02}.md"
        if op == "delete":
            target.unlink()
        else:
            write(paths.project_store, target.name, [*words, f"step{count}"])
        cold_turn(paths)
        assert len(ups) == count  # brought up from the saved state, not read in full
        check(paths)
    # The common terms went in as patches, never as whole postings; the slots as slot rows.
    whole = {term for (term,) in delta_rows(paths, "SELECT term FROM postings")}
    patched_terms = {term for (term,) in delta_rows(paths, "SELECT term FROM patches")}
    assert patched_terms >= STEMS and not whole & STEMS
    assert not delta_rows(paths, "SELECT name FROM indexes")
    assert delta_rows(paths, "SELECT slot FROM slots")
    assert delta_rows(paths, "SELECT * FROM listing")
    for removed, added in delta_rows(paths, "SELECT removed, added FROM patches"):
        assert len(removed) + len(added) <= 4 * 2 * len(STEPS)  # the changes', not the store's
    # Folded: the base alone holds it all, under a new token, no delta left.
    monkeypatch.setattr(state, "DELTA_FLOOR", 0)
    monkeypatch.setattr(state, "DELTA_SHARE", 10**6)
    write(paths.project_store, "f09.md", [*COMMON, "proxy", "last"])
    cold_turn(paths)
    assert not state.delta_path(persist.recall_cache_path(paths)).exists()
    check(paths)
    write(paths.project_store, "f10.md", ["cache", "after-fold"])  # a patch over the folded base
    monkeypatch.setattr(state, "DELTA_SHARE", 4)
    monkeypatch.setattr(state, "DELTA_FLOOR", 16 << 20)
    cold_turn(paths)
    assert {t for (t,) in delta_rows(paths, "SELECT term FROM patches")} >= {"cach"}
    check(paths)


def test_a_lazy_index_reports_patches_relative_to_what_it_was_restored_with() -> None:
    from context_engine.recall.index import DocMeta

    built = SparseIndex()
    built.add_many((f"k{i}", {"common": 1 + i % 2, f"t{i}": 1}, DocMeta()) for i in range(6))
    keys, free, terms, blobs, arrays, total = built.export()  # type: ignore[misc]
    restored = dict(zip(terms, blobs, strict=True))
    lazy = SparseIndex.lazy(list(keys), list(free), restored, arrays, total)
    lazy.remove("k2", ["common", "t2"])
    lazy.add("k9", {"common": 3, "t9": 1}, DocMeta())  # into slot 2 when freed at once
    lazy.remove("k9", ["common", "t9"])  # and out again: no trace left of it
    lazy.add("k8", {"common": 2}, DocMeta())
    patches = lazy.posting_patches()
    assert patches.keys() == {"common", "t2", "t9"} and patches["t9"] == ([], [])
    for term, (removed, added) in patches.items():
        was = array("i")
        was.frombytes(restored.get(term, b""))
        pairs = dict(zip(was[0::2], was[1::2], strict=True))
        for slot in removed:
            del pairs[slot]
        pairs.update(zip(added[0::2], added[1::2], strict=True))
        now = lazy._posting(term) or array("i")  # a deferred term's patch applied on read
        assert pairs == dict(zip(now[0::2], now[1::2], strict=True)), term
    assert patches["t2"] == ([2], [])
    assert set(lazy.changed_slots()) >= {2, lazy._slot_of["k8"]}


def test_a_full_read_writes_no_unchanged_pool_rows_and_folds_a_grown_delta(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(quiet, "open_quiet", lambda *_a, **_k: None)  # the full-read path
        cold_turn(paths)
        write(paths.project_store, "f01.md", ["kernel", "only1", "again"])
        cold_turn(paths)  # a few rows differ: a delta, the pool tables' equal rows left out
        rows = delta_rows(paths, "SELECT kind, key FROM tracker")
        assert len(rows) <= 12, rows
        patch.setattr(state, "FOLD_AFTER_READ_FLOOR", 0)
        patch.setattr(state, "FOLD_AFTER_READ_SHARE", 10**6)  # any delta is a large share
        write(paths.project_store, "f02.md", ["socket", "only2", "again"])
        cold_turn(paths)  # this process read every fact: the delta is folded at once
        assert not state.delta_path(persist.recall_cache_path(paths)).exists()
    check(paths)


def test_a_whole_listing_recorded_by_a_full_read_is_folded_not_left_in_the_delta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "recall.v2.sqlite"
    assert state.StateFile(file).write({"version": 2}, {}, {})
    listing = ([f"f{i}.md" for i in range(3000)], bytes(48 * 3000))
    monkeypatch.setattr(state, "FOLD_AFTER_READ_FLOOR", 64 << 10)  # the listing is past it
    with state.StateFile(file).reading() as reader:
        assert reader is not None
        seen = reader.seen
    assert state.StateFile(file).update_meta({"unsettled": []}, seen)  # small: a delta
    assert state.delta_path(file).exists()
    with state.StateFile(file).reading() as reader:
        assert reader is not None
        seen = reader.seen
    assert state.StateFile(file).update_meta({"listing": listing}, seen)
    assert not state.delta_path(file).exists()  # folded at once
    with state.StateFile(file).reading() as reader:
        assert reader is not None
        assert reader.meta("listing", "unsettled", "version") == {
            "listing": (listing[0], listing[1]), "unsettled": [], "version": 2
        }


def test_tables_holding_large_values_are_rowid_tables_and_read_in_key_order(
    tmp_path: Path,
) -> None:
    """A key lookup in a WITHOUT ROWID table reads each overflowing cell it compares against
    whole (at 10^5 facts: the 8 MB listing for every ``meta`` value a quiet turn reads)."""
    file = tmp_path / "recall.v2.sqlite"
    big = bytes(200_000)
    records = {f"project/r{i}.md": ((1, i), bytes([i]) * 5000) for i in (3, 1, 2)}
    assert state.StateFile(file).write({"version": 2, "listing": big}, records, {})
    db = sqlite3.connect(file)
    try:
        ddl = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
    finally:
        db.close()
    for table in ("meta", "records", "indexes", "postings", "holders"):
        assert "WITHOUT ROWID" not in ddl[table].upper(), table
    for table in ("tracker", "marks", "patches", "pools", "slots", "listing"):  # small rows
        assert "WITHOUT ROWID" in ddl[table].upper(), table
    with state.StateFile(file).reading() as reader:
        assert reader is not None
        assert reader.meta("version", "listing") == {"version": 2, "listing": big}
        # Whole reads keep the key order a WITHOUT ROWID table gave, not insertion order.
        assert [ref for ref, _ in reader.records()] == sorted(records)
