"""S4.1–S4.3, S4.6, S4.10, S4.11 and RELIABILITY C5/C6 on a real temp store."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from context_engine.errors import (
    AlreadyExists,
    FactNotFound,
    ModifiedExternally,
    NameInUse,
    RevisionConflict,
)
from context_engine.facts.memory import Memory
from support.store import make_paths, tree


@pytest.fixture()
def memory(tmp_path: Path) -> Memory:
    return Memory(make_paths(tmp_path))


def save(memory: Memory, name: str, body: str = "body", **kw: object) -> object:
    return memory.save(name=name, description=f"about {name}", body=body, **kw)  # type: ignore[arg-type]


def test_create_defaults_and_files(memory: Memory) -> None:
    fact = memory.save(name="Release Target", description="Release branch", body="main-v2").fact
    assert fact is not None
    assert fact.id.startswith("mem-") and len(fact.id) == 36
    assert (fact.revision, fact.name, fact.type, fact.scope) == (
        1,
        "release-target",
        "project",
        "project",
    )
    assert (memory.paths.project_store / "release-target.md").is_file()
    assert memory.resolve("project/release-target.md").id == fact.id
    assert memory.resolve(fact.id).body == "main-v2"


def test_rename_keeps_id_bumps_revision_and_snapshots(memory: Memory) -> None:
    first = memory.save(name="old-name", description="d", body="b").fact
    assert first is not None
    old_bytes = (memory.paths.project_store / "old-name.md").read_bytes()
    changes = memory.save(id=first.id, name="new-name")
    assert changes.fact is not None
    assert (changes.fact.id, changes.fact.revision, changes.fact.name) == (first.id, 2, "new-name")
    assert not (memory.paths.project_store / "old-name.md").exists()
    assert changes.removed == (memory.paths.project_store / "old-name.md",)
    snap = memory.paths.project_store / ".revisions" / first.id / "000000001.md"
    assert snap.read_bytes() == old_bytes
    assert [f.name for f in memory.list_all()] == ["new-name"]


def test_update_keeps_created_at_and_inherits_scope(memory: Memory) -> None:
    first = memory.save(name="g", description="d", body="b", scope="global", type="user").fact
    assert first is not None
    second = memory.save(name="g", body="b2").fact
    assert second is not None
    assert (second.scope, second.type, second.id) == ("global", "user", first.id)
    assert second.created_at == first.created_at
    assert second.revision == 2


def test_stale_expected_revision_changes_nothing(memory: Memory) -> None:
    fact = memory.save(name="x", description="d", body="v1").fact
    assert fact is not None
    memory.save(id=fact.id, body="v2")
    before = tree(memory.paths.state)
    with pytest.raises(RevisionConflict) as err:
        memory.save(id=fact.id, body="v3", expected_revision=1)
    assert err.value.message == "memory revision conflict: expected 1, found 2"
    assert tree(memory.paths.state) == before


def test_expected_digest_detects_hand_edit(memory: Memory) -> None:
    fact = memory.save(name="x", description="d", body="v1").fact
    assert fact is not None
    loaded = memory.load("x")
    assert loaded.digest == hashlib.sha256(loaded.data).hexdigest()
    path = memory.paths.project_store / "x.md"
    edited = path.read_bytes().replace(b"v1", b"hand edit")
    path.write_bytes(edited)
    with pytest.raises(ModifiedExternally):
        memory.save(id=fact.id, body="v2", expected_revision=1, expected_digest=loaded.digest)
    assert path.read_bytes() == edited
    ok = memory.save(id=fact.id, body="v2", expected_digest=memory.load("x").digest).fact
    assert ok is not None and ok.revision == 2


def test_restore_makes_a_new_revision(memory: Memory) -> None:
    fact = memory.save(name="x", description="d1", body="v1").fact
    assert fact is not None
    memory.save(id=fact.id, description="d2", body="v2")
    restored = memory.restore(fact.id, 1).fact
    assert restored is not None
    assert (restored.revision, restored.body, restored.description) == (3, "v1", "d1")
    assert [f.revision for f in memory.revisions("x")] == [2, 1]
    assert [f.body for f in memory.revisions("x")] == ["v2", "v1"]
    noop = memory.restore("x", 3)
    assert not noop.changed and noop.fact is not None and noop.fact.revision == 3
    with pytest.raises(RevisionConflict):
        memory.restore("x", 1, expected_revision=2)
    with pytest.raises(FactNotFound):
        memory.restore("x", 9)


def test_exact_error_messages(memory: Memory) -> None:
    a = memory.save(name="a", description="d", body="b").fact
    memory.save(name="b", description="d", body="b")
    assert a is not None
    with pytest.raises(FactNotFound, match=r'^memory id "mem-0+" not found$'):
        memory.save(id="mem-" + "0" * 32, body="x")
    with pytest.raises(AlreadyExists) as exists:
        memory.save(name="a", description="d", body="b", create_only=True)
    assert exists.value.message == 'memory "a" already exists; automatic writes are create-only'
    with pytest.raises(NameInUse) as used:
        memory.save(id=a.id, name="b")
    b_id = memory.resolve("b").id
    assert used.value.message == f'memory name "b" is already used by id "{b_id}"'


def test_create_only_refuses_a_name_active_in_the_other_store(memory: Memory) -> None:
    memory.save(name="shared", description="d", body="b", scope="global")
    with pytest.raises(AlreadyExists):
        memory.save(name="shared", description="d", body="b", scope="project", create_only=True)
    assert [f.scope for f in memory.list_all()] == ["global"]


def test_one_active_copy_per_name(memory: Memory) -> None:
    g = memory.save(name="dup", description="global copy", body="g", scope="global").fact
    assert g is not None
    changes = memory.save(name="dup", description="project copy", body="p", scope="project")
    assert len(changes.archived) == 1
    assert changes.archived[0].parent == memory.paths.global_store / ".archive"
    assert [(f.name, f.scope) for f in memory.list_all()] == [("dup", "project")]
    archived = memory.list_archived()
    assert archived[0].fact is not None and archived[0].fact.id == g.id
    # A qualified save (a reference) keeps the other scope's copy.
    again = memory.save(name="global/dup.md", description="g2", body="g2")
    assert again.archived == ()
    assert [(f.name, f.scope) for f in memory.list_all()] == [("dup", "global"), ("dup", "project")]


def test_list_orders(memory: Memory) -> None:
    memory.save(name="b", description="d", body="b", scope="global")
    memory.save(name="global/a.md", description="d", body="b")
    memory.save(name="project/a.md", description="d", body="b")
    assert [(f.name, f.scope) for f in memory.list_all()] == [
        ("a", "global"),
        ("a", "project"),
        ("b", "global"),
    ]
    assert [(f.name, f.scope) for f in memory.list_legacy()] == [("a", "project"), ("b", "global")]
    assert memory.resolve("a").scope == "project"
    assert memory.resolve("global/a.md").scope == "global"


def test_move_to_other_scope_keeps_history(memory: Memory) -> None:
    fact = memory.save(name="m", description="d", body="v1").fact
    assert fact is not None
    moved = memory.save(id=fact.id, scope="global", body="v2").fact
    assert moved is not None
    assert (moved.scope, moved.revision, moved.id) == ("global", 2, fact.id)
    assert not (memory.paths.project_store / "m.md").exists()
    assert [f.revision for f in memory.revisions(fact.id)] == [1]


def test_never_writes_through_a_symlinked_fact(memory: Memory, tmp_path: Path) -> None:
    victim = tmp_path / "victim.md"
    victim.write_bytes(b"---\nname: x\n---\nprecious\n")
    store = memory.paths.project_store
    store.mkdir(parents=True)
    (store / "x.md").symlink_to(victim)
    from context_engine.errors import PathEscape

    with pytest.raises(PathEscape, match=r"^memory path escapes store: x\.md$"):
        memory.save(name="x", description="d", body="overwrite")
    with pytest.raises(PathEscape):
        memory.forget("x")
    assert victim.read_bytes() == b"---\nname: x\n---\nprecious\n"
    assert (store / "x.md").is_symlink()


def test_hostile_ids_and_names_stay_inside_the_store(memory: Memory) -> None:
    from context_engine.errors import PathEscape
    from context_engine.facts.revisions import revision_dir

    with pytest.raises(PathEscape, match=r"^memory path escapes store: "):
        revision_dir(memory.paths.project_store, "../../outside")
    fact = memory.save(name="../../escape", description="d", body="b").fact
    assert fact is not None and fact.name == "escape"
    assert fact.path == memory.paths.project_store / "escape.md"


def test_unicode_and_case_twins_are_one_name(memory: Memory) -> None:
    import unicodedata

    nfc = unicodedata.normalize("NFC", "Café Notes")
    nfd = unicodedata.normalize("NFD", "CAFÉ notes")
    first = memory.save(name=nfc, description="d", body="one").fact
    second = memory.save(name=nfd, description="d", body="two").fact
    assert first is not None and second is not None
    assert (second.id, second.revision, second.name) == (first.id, 2, "café-notes")
    assert [f.body for f in memory.list_all()] == ["two"]
    assert memory.resolve(nfd).id == first.id
