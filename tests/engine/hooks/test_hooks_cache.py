"""The hook snapshot cache never answers differently from a fresh load (issue 9)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from context_engine.facts import snapshot_cache
from context_engine.facts import store as store_module
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from context_engine.facts.snapshot_cache import SnapshotCache
from context_engine.paths import EnginePaths


def full(fact: Fact) -> tuple[object, ...]:
    return (fact, fact.path, fact.stamp)  # path and stamp are compare=False on Fact


def fresh(paths: EnginePaths) -> list[tuple[object, ...]]:
    return [full(f) for f in Memory(paths).snapshot().facts]


def fresh_diagnostics(paths: EnginePaths) -> list[tuple[object, ...]]:
    return [(d.code, d.path, d.message, d.line) for d in Memory(paths).snapshot().diagnostics]


@pytest.fixture()
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EnginePaths:
    # Everything written by the test is "settled" at once; racy handling has its own test.
    monkeypatch.setattr(snapshot_cache, "RACY_NS", -(10**18))
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    memory = Memory(paths)
    for i in range(5):
        memory.save(
            name=f"fact-{i}", description=f"Fact {i}", body=f"Body {i}.", type="project"
        )
    memory.save(name="pref", description="Pref", body="Tabs.", type="user", scope="global")
    return paths


def load(paths: EnginePaths) -> tuple[list[tuple[object, ...]], snapshot_cache.CachedSnapshot]:
    snap = SnapshotCache(paths).load()
    return [full(f) for f in snap.facts], snap


def test_name_filter_agrees_with_the_store() -> None:
    for name in ("a.md", "MEMORY.md", ".hidden.md", "x.txt", ".tmp-1.md", "记忆.md"):
        assert snapshot_cache._is_fact_name(name) == store_module.is_fact_file_name(name)


def test_second_load_reuses_everything_and_matches(paths: EnginePaths) -> None:
    first, snap1 = load(paths)
    assert first == fresh(paths) and snap1.parsed_stores == ("project", "global")
    second, snap2 = load(paths)
    assert second == fresh(paths)
    assert snap2.parsed_stores == () and snap2.reused == 6


def test_every_kind_of_change_is_seen(paths: EnginePaths) -> None:
    load(paths)
    memory = Memory(paths)
    memory.save(name="fact-1", body="Changed body.")  # atomic replace: new inode
    memory.forget("fact-2")
    memory.save(name="fact-9", description="New", body="New.", type="project")
    got, snap = load(paths)
    assert got == fresh(paths)
    # Only the changed files were read: global (1) and the 3 untouched project facts reused.
    assert snap.parsed_stores == ("project",) and snap.reused == 4


def test_in_place_edit_with_same_size_and_mtime_is_seen(paths: EnginePaths) -> None:
    load(paths)
    target = paths.project_store / "fact-3.md"
    before = os.stat(target)
    data = target.read_bytes()
    edited = data.replace(b"Body 3.", b"Body X.")
    assert len(edited) == len(data)
    with open(target, "r+b") as handle:  # same inode, same size
        handle.write(edited)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # same mtime too
    got, snap = load(paths)
    assert got == fresh(paths)
    assert any("Body X." in f[0].body for f in got)  # type: ignore[attr-defined]
    assert snap.parsed_stores == ("project",)


def test_recent_files_are_not_trusted(paths: EnginePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot_cache, "RACY_NS", 10**18)  # everything counts as "just written"
    load(paths)
    got, snap = load(paths)
    assert got == fresh(paths)
    assert snap.parsed_stores == ("project", "global") and snap.reused == 0


def test_corrupt_or_foreign_cache_is_ignored(paths: EnginePaths) -> None:
    load(paths)
    cache = snapshot_cache.cache_path(paths)
    cache.write_bytes(b"\x00garbage")
    got, snap = load(paths)
    assert got == fresh(paths) and snap.reused == 0
    os.chmod(cache, 0o666)
    got, snap = load(paths)
    assert got == fresh(paths) and snap.reused == 0


def test_partial_refresh_reads_odd_files_like_the_store(paths: EnginePaths) -> None:
    load(paths)
    store = paths.project_store
    (store / "broken.md").write_bytes(b"---\nname: [unclosed\n---\nBody\n")
    (store / "folder.md").mkdir()
    (store / "link.md").symlink_to(store / "fact-0.md")
    (store / "latin1.md").write_bytes("---\nname: café\n---\nTr\xe8s bien\n".encode("latin-1"))
    for _ in range(2):  # the refresh, then a load from what it recorded
        got, snap = load(paths)
        assert got == fresh(paths)
        diags = [(d.code, d.path, d.message, d.line) for d in snap.diagnostics]
        assert diags == fresh_diagnostics(paths) and diags


def test_long_lived_engine_refreshes_in_memory_like_a_fresh_load(paths: EnginePaths) -> None:
    from context_engine.engine import ContextEngine

    engine = ContextEngine(paths)
    first = engine.active_facts()
    assert [full(f) for f in first] == fresh(paths)
    memory = Memory(paths)
    memory.save(name="fact-1", body="Changed body.")
    memory.forget("fact-2")
    memory.save(name="fact-9", description="New", body="New.", type="project")
    (paths.project_store / "broken.md").write_bytes(b"---\nname: [oops\n---\nbody\n")
    target = paths.project_store / "fact-3.md"
    before = os.stat(target)
    data = target.read_bytes()
    with open(target, "r+b") as handle:  # same inode, size and restored mtime
        handle.write(data.replace(b"Body 3.", b"Body X."))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = engine.active_facts()
    assert [full(f) for f in second] == fresh(paths)
    kept = {f.name: f for f in first}
    assert any(f is kept.get(f.name) for f in second)  # unchanged facts are the same objects
    diagnostics = engine.catalog.index.snapshot().diagnostics
    assert [(d.code, d.path.name) for d in diagnostics] == [("yaml_syntax", "broken.md")]
    assert engine.active_facts() is second  # nothing changed since: the same snapshot
