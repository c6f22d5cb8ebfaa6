"""MEMORY.md as derived data (S4.9, S5.2), diagnostics for bad files (S3.4), migration (S5.1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from context_engine.errors import AlreadyExists
from context_engine.facts.index_file import render_index
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from support.store import make_paths, tree


@pytest.fixture()
def memory(tmp_path: Path) -> Memory:
    return Memory(make_paths(tmp_path))


def test_index_managed_lines_and_header(memory: Memory) -> None:
    memory.save(name="b-fact", title="B title", description="second  one", body="x")
    memory.save(name="a-fact", description="first", body="x", type="reference")
    text = (memory.paths.project_store / "MEMORY.md").read_text()
    assert text == (
        "# Memory\n\n"
        "- [a fact](a-fact.md) — [project/reference] first\n"
        "- [B title](b-fact.md) — [project/project] second one\n"
    )


def test_hand_edits_survive_saves_and_forgets(memory: Memory) -> None:
    memory.save(name="a", description="first", body="x")
    index = memory.paths.project_store / "MEMORY.md"
    hand = "# My notes\r\n\nKeep this line — verbatim.\n"
    managed = index.read_text().split("\n", 2)[2]
    index.write_bytes((hand + managed + "Trailing hand line\n").encode())
    memory.save(name="b", description="second", body="x")
    memory.forget("a")
    text = index.read_bytes().decode()
    assert text.startswith(hand)
    assert text.endswith("Trailing hand line\n")
    assert "- [b](b.md) — [project/project] second\n" in text
    assert "(a.md)" not in text
    assert text.count("# Memory") == 0


def test_stale_index_line_never_reaches_the_engine(memory: Memory) -> None:
    store = memory.paths.project_store
    store.mkdir(parents=True)
    (store / "MEMORY.md").write_text("- [Ghost](ghost.md) — [project/project] not a file\n")
    assert memory.list_all() == ()
    memory.save(name="real", description="d", body="x")
    assert [f.name for f in memory.list_all()] == ["real"]
    assert "ghost" not in (store / "MEMORY.md").read_text()


def test_render_index_is_idempotent() -> None:
    fact = Fact("mem-1", 1, "n", "", "d", "project", "project", "b")
    once = render_index("intro\n", [fact])
    assert once == "intro\n\n- [n](n.md) — [project/project] d\n"
    assert render_index(once, [fact]) == once
    assert render_index("", []) == ""


def test_ignored_entries_and_diagnostics(memory: Memory) -> None:
    store = memory.paths.project_store
    memory.save(name="good", description="d", body="x")
    bad = b"---\nid: [unclosed\nname: bad\n---\nbody\n"
    (store / "bad.md").write_bytes(bad)
    (store / ".hidden.md").write_text("---\nname: hidden\n---\n")
    (store / ".tmp-abc.partial").write_text("partial")
    (store / "sub").mkdir()
    (store / "sub" / "nested.md").write_text("---\nname: nested\n---\n")
    (store / "notes.txt").write_text("text")
    snap = memory.snapshot()
    assert [f.name for f in snap.facts] == ["good"]
    assert [d.path.name for d in snap.diagnostics] == ["bad.md"]
    before = (store / "bad.md").read_bytes()
    memory.save(name="other", description="d", body="x")
    memory.migrate()
    with pytest.raises(AlreadyExists):
        memory.save(name="bad", description="d", body="overwrite?")
    memory.forget("good")
    assert (store / "bad.md").read_bytes() == before == bad
    assert "bad.md" not in (store / "MEMORY.md").read_text()


LEGACY = b"---\nname: legacy-fact\ndescription: Old style\ntype: project\n---\n\nLegacy body.\n"


def test_migration_rewrites_legacy_once_and_reads_never_write(memory: Memory) -> None:
    store = memory.paths.project_store
    store.mkdir(parents=True)
    (store / "legacy-fact.md").write_bytes(LEGACY)
    (store / "MEMORY.md").write_text("hand\n")
    before = tree(memory.paths.state)
    first = memory.resolve("legacy-fact")
    assert first.id == "legacy-0c0ec20229014fe8e310b2e1"
    memory.list_all()
    memory.list_legacy()
    memory.list_archived()
    memory.revisions("legacy-fact")
    assert memory.resolve(first.id).id == first.id
    assert tree(memory.paths.state) == before
    assert memory.migrate() == 1
    text = (store / "legacy-fact.md").read_text()
    assert text.startswith("---\nid: legacy-0c0ec20229014fe8e310b2e1\nrevision: 1\n")
    assert text.endswith("\nLegacy body.\n")
    migrated = tree(memory.paths.state)
    assert Memory(memory.paths).migrate() == 0
    assert tree(memory.paths.state) == migrated
    assert memory.resolve("legacy-fact").id == first.id


def test_first_write_migrates_the_store(memory: Memory) -> None:
    store = memory.paths.project_store
    store.mkdir(parents=True)
    (store / "legacy-fact.md").write_bytes(LEGACY)
    memory.save(name="new", description="d", body="x")
    assert b"revision: 1" in (store / "legacy-fact.md").read_bytes()
    assert os.path.exists(store / "new.md")
    assert Memory.open(memory.paths).migrate() == 0


def test_rebuild_indexes_regenerates_from_fact_files(memory: Memory) -> None:
    memory.save(name="a", description="first", body="x")
    memory.save(name="g", description="global one", body="x", scope="global")
    (memory.paths.project_store / "MEMORY.md").unlink()
    (memory.paths.global_store / "MEMORY.md").write_text(
        "hand\n- [Stale](stale.md) — [global/user] x\n"
    )
    changes = memory.rebuild_indexes()
    assert changes.warnings == ()
    assert (memory.paths.project_store / "MEMORY.md").read_text() == (
        "# Memory\n\n- [a](a.md) — [project/project] first\n"
    )
    assert (memory.paths.global_store / "MEMORY.md").read_text() == (
        "hand\n- [g](g.md) — [global/project] global one\n"
    )


def test_forgetting_an_unreadable_file_moves_it_byte_identical(memory: Memory) -> None:
    store = memory.paths.project_store
    store.mkdir(parents=True)
    bad = b"---\nid: [unclosed\nname: bad\n---\nbody\n"
    (store / "bad.md").write_bytes(bad)
    changes = memory.forget("bad")
    (entry,) = changes.archived
    assert changes.ids == () and entry.read_bytes() == bad
    assert not (store / "bad.md").exists()
    (listed,) = memory.list_archived()
    assert listed.fact is None and listed.diagnostic is not None
