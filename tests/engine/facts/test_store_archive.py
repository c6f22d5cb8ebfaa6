"""Forget (S4.7), recover with every ownership check (S4.8, RELIABILITY S8), ListArchived."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from context_engine.errors import AlreadyActive, ArchiveNotFound
from context_engine.facts.memory import Memory
from support.store import make_paths, tree


@pytest.fixture()
def memory(tmp_path: Path) -> Memory:
    return Memory(make_paths(tmp_path))


def _forgotten(memory: Memory, name: str = "x", scope: str = "project") -> Path:
    memory.save(name=name, description="d", body="b", scope=scope)  # type: ignore[arg-type]
    archived = memory.forget(f"{scope}/{name}.md").archived
    assert len(archived) == 1
    return archived[0]


def test_forget_moves_into_archive_with_time_prefix(memory: Memory) -> None:
    fact = memory.save(name="x", description="d", body="b").fact
    assert fact is not None
    data = (memory.paths.project_store / "x.md").read_bytes()
    changes = memory.forget("x")
    (entry,) = changes.archived
    assert re.fullmatch(r"\d{8}-\d{6}\.\d{3}-x\.md", entry.name)
    assert entry.read_bytes() == data
    assert changes.ids == (fact.id,)
    assert memory.list_all() == ()
    assert memory.forget("x").archived == ()  # missing is not an error


def test_archive_name_clash_gets_a_counter(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    fixed = datetime(2026, 7, 1, 12, 0, 0, 123000, tzinfo=UTC)
    memory = Memory(make_paths(tmp_path), clock=lambda: fixed)
    first = _forgotten(memory)
    second = _forgotten(memory)
    assert first.name == "20260701-120000.123-x.md"
    assert second.name == "20260701-120000.123-x-1.md"


def test_forget_scopes(memory: Memory) -> None:
    memory.save(name="global/n.md", description="d", body="g")
    memory.save(name="project/n.md", description="d", body="p")
    assert len(memory.forget("global/n.md").archived) == 1
    assert [f.scope for f in memory.list_all()] == ["project"]
    memory.save(name="global/n.md", description="d", body="g")
    assert len(memory.forget("n").archived) == 2  # a bare name: from every store
    memory.save(name="global/n.md", description="d", body="g")
    p = memory.save(name="project/n.md", description="d", body="p").fact
    assert p is not None
    assert len(memory.forget(p.id).archived) == 1  # an id: only that identity
    assert [f.scope for f in memory.list_all()] == ["global"]


def test_bare_name_forget_of_dotdot_touches_nothing_outside(memory: Memory) -> None:
    memory.save(name="keep", description="d", body="b")
    outside = memory.paths.project_store.parent / "outside.md"
    outside.write_bytes(b"---\nname: outside\n---\nsecret\n")
    before = tree(memory.paths.project_store.parent)
    changes = memory.forget("../outside")
    assert changes.archived == ()
    assert outside.read_bytes() == b"---\nname: outside\n---\nsecret\n"
    after = tree(memory.paths.project_store.parent)
    assert {k: v for k, v in after.items() if "MEMORY" not in k} == {
        k: v for k, v in before.items() if "MEMORY" not in k
    }


def test_read_only_fact_is_still_archived(memory: Memory) -> None:
    memory.save(name="ro", description="d", body="b")
    path = memory.paths.project_store / "ro.md"
    path.chmod(0o444)
    (entry,) = memory.forget("ro").archived
    assert not path.exists() and entry.is_file()


def test_forget_then_recover_keeps_id_at_revision_2(memory: Memory) -> None:
    fact = memory.save(name="x", description="d", body="b").fact
    assert fact is not None
    (entry,) = memory.forget("x").archived
    archived_bytes = entry.read_bytes()
    changes = memory.recover(entry)
    assert changes.fact is not None
    assert (changes.fact.id, changes.fact.revision, changes.fact.body) == (fact.id, 2, "b")
    assert not entry.exists()
    snap = memory.paths.project_store / ".revisions" / fact.id / "000000001.md"
    assert snap.read_bytes() == archived_bytes
    assert [f.revision for f in memory.revisions("x")] == [1]
    # Again: revision is one above the highest ever seen.
    (entry2,) = memory.forget("x").archived
    assert memory.recover(str(entry2)).fact.revision == 3  # type: ignore[union-attr]


def test_recover_writes_a_fresh_inode(memory: Memory) -> None:
    entry = _forgotten(memory)
    inode = entry.stat().st_ino
    changes = memory.recover(entry)
    assert changes.fact is not None and changes.fact.path is not None
    assert os.stat(changes.fact.path).st_ino != inode
    assert os.stat(changes.fact.path).st_nlink == 1


def _refused(memory: Memory, path: str | Path) -> None:
    before = tree(memory.paths.state)
    with pytest.raises(ArchiveNotFound) as err:
        memory.recover(path)
    assert err.value.message == "archived memory not found"
    assert tree(memory.paths.state) == before


def test_recover_refuses_outside_path(memory: Memory, tmp_path: Path) -> None:
    _forgotten(memory)
    fake = tmp_path / "elsewhere" / ".archive"
    fake.mkdir(parents=True)
    (fake / "20260101-000000.000-evil.md").write_text("---\nname: evil\n---\nevil\n")
    _refused(memory, fake / "20260101-000000.000-evil.md")
    _refused(memory, tmp_path / "elsewhere.md")
    store = memory.paths.project_store
    _refused(memory, store / "x.md")  # an active file is not an archive entry
    _refused(memory, store / ".archive" / ".." / ".." / "outside.md")


def test_recover_refuses_symlinked_entry(memory: Memory, tmp_path: Path) -> None:
    _forgotten(memory)
    victim = tmp_path / "victim.md"
    victim.write_text("---\nname: victim\n---\nsecret\n")
    link = memory.paths.project_store / ".archive" / "20260101-000000.000-victim.md"
    link.symlink_to(victim)
    _refused(memory, link)
    assert not (memory.paths.project_store / "victim.md").exists()


def test_recover_refuses_symlinked_archive_dir(memory: Memory, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "20260101-000000.000-evil.md").write_text("---\nname: evil\n---\nevil\n")
    memory.paths.global_store.mkdir(parents=True)
    (memory.paths.global_store / ".archive").symlink_to(elsewhere, target_is_directory=True)
    _refused(memory, memory.paths.global_store / ".archive" / "20260101-000000.000-evil.md")
    assert not (memory.paths.global_store / "evil.md").exists()
    assert memory.list_archived() == ()


def test_recover_refuses_non_md_directory_and_hard_link(memory: Memory, tmp_path: Path) -> None:
    entry = _forgotten(memory)
    archive = entry.parent
    (archive / "notes.txt").write_text("---\nname: notes\n---\nb\n")
    _refused(memory, archive / "notes.txt")
    (archive / "20260101-000000.000-dir.md").mkdir()
    _refused(memory, archive / "20260101-000000.000-dir.md")
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: hard\n---\nsecret\n")
    os.link(outside, archive / "20260101-000000.000-hard.md")
    _refused(memory, archive / "20260101-000000.000-hard.md")
    _refused(memory, archive / "20260101-000000.000-missing.md")


def test_recover_refuses_active_id_or_name(memory: Memory) -> None:
    fact = memory.save(name="x", description="d", body="b").fact
    assert fact is not None
    (entry,) = memory.forget("x").archived
    memory.save(name="x", description="new", body="new")  # the name is active again
    with pytest.raises(AlreadyActive, match="is already active"):
        memory.recover(entry)
    assert entry.exists()
    memory.forget("x")
    # Same id active under another name.
    memory.recover(entry)
    (entry_b,) = memory.forget(fact.id).archived
    restored = memory.recover(entry_b).fact
    assert restored is not None
    memory.save(id=fact.id, name="renamed")
    copy = entry_b.parent / "20260101-000000.000-x.md"
    copy.write_bytes(
        (memory.paths.project_store / ".revisions" / fact.id / "000000001.md").read_bytes()
    )
    with pytest.raises(AlreadyActive, match="is already active"):
        memory.recover(copy)
    assert copy.exists()


def test_list_archived_newest_first(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    times = iter(
        [
            datetime(2026, 1, 1, tzinfo=UTC),
            datetime(2026, 1, 1, tzinfo=UTC),
            datetime(2026, 3, 1, tzinfo=UTC),
            datetime(2026, 3, 1, tzinfo=UTC),
            datetime(2026, 3, 1, tzinfo=UTC),
            datetime(2026, 3, 1, tzinfo=UTC),
        ]
    )
    memory = Memory(make_paths(tmp_path), clock=lambda: next(times))
    _forgotten(memory, "old")
    _forgotten(memory, "new", "global")
    entries = memory.list_archived()
    assert [e.fact.name for e in entries if e.fact] == ["new", "old"]
    assert entries[0].archived_at == datetime(2026, 3, 1, tzinfo=UTC)


def test_longest_names_can_be_forgotten_and_recovered(memory: Memory) -> None:
    name = "记" * 84  # 252 bytes: the longest slug; its archive name must still fit 255 bytes
    fact = memory.save(name=name, description="d", body="b").fact
    assert fact is not None and len(fact.name.encode()) == 252
    (entry,) = memory.forget(fact.id).archived
    assert len(entry.name.encode()) <= 255
    recovered = memory.recover(entry).fact
    assert recovered is not None and (recovered.name, recovered.id) == (fact.name, fact.id)
