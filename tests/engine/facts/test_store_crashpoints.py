"""Crash-point enumeration (RELIABILITY C1, C2): the process dies at every fs op of an operation.

A forked child runs the operation with an FS whose k-th mutating call does ``os._exit(137)``
(no ``finally`` runs, like SIGKILL); k = 1, 2, … until the child completes. After every crash
the store must be consistent and a retry must succeed without manual repair.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from context_engine.facts.fs import FS
from context_engine.facts.memory import Memory
from support.store import make_paths, temp_files


class CrashAt(FS):
    """Exit the process (like SIGKILL: no cleanup) at the k-th mutating fs call."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.n = 0

    def _tick(self) -> None:
        self.n += 1
        if self.n == self.k:
            os._exit(137)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        self._tick()
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        self._tick()
        super().fsync(fd)

    def replace(self, src: str | Path, dst: str | Path) -> None:
        self._tick()
        super().replace(src, dst)

    def link(self, src: str | Path, dst: str | Path) -> None:
        self._tick()
        super().link(src, dst)

    def unlink(self, path: str | Path, *, dir_fd: int | None = None) -> None:
        self._tick()
        super().unlink(path, dir_fd=dir_fd)

    def rename(self, src: str | Path, dst: str | Path) -> None:
        self._tick()
        super().rename(src, dst)


@pytest.mark.slow
def test_crash_point_enumeration_over_update(tmp_path: Path) -> None:
    """C1: crash at every fs op of an update; the store stays consistent and retryable."""
    k = 0
    while True:
        k += 1
        base = tmp_path / f"run{k}"
        memory = Memory(make_paths(base))
        fact = memory.save(name="x", description="d", body="old").fact
        assert fact is not None
        pid = os.fork()
        if pid == 0:  # child: crash at the k-th op
            child = Memory(make_paths(base), fs=CrashAt(k))
            child.save(id=fact.id, body="new")
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        active = Memory(make_paths(base)).resolve("x")
        assert active.id == fact.id
        assert (active.revision, active.body) in {(1, "old"), (2, "new")}
        history = [f.revision for f in Memory(make_paths(base)).revisions("x")]
        assert history in ([], [1])
        retried = Memory(make_paths(base)).save(id=fact.id, body="again").fact
        assert retried is not None and retried.revision == active.revision + 1
        if os.waitstatus_to_exitcode(status) == 0:
            break
        assert k < 40
    assert k > 5


def _crash_loop(tmp_path: Path, setup, op, check) -> int:  # type: ignore[no-untyped-def]
    """Run ``op`` in a forked child that dies at fs op k = 1, 2, … until it completes."""
    k = 0
    while True:
        k += 1
        base = tmp_path / f"run{k}"
        state = setup(Memory(make_paths(base)))
        pid = os.fork()
        if pid == 0:
            try:
                op(Memory(make_paths(base), fs=CrashAt(k)), state)
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        check(Memory(make_paths(base)), state)
        assert temp_files(base / "home") == [] or all(
            n.endswith(".partial") for n in temp_files(base / "home")
        )
        if os.waitstatus_to_exitcode(status) == 0:
            return k
        assert k < 60


@pytest.mark.slow
def test_crash_points_create(tmp_path: Path) -> None:
    def op(m: Memory, _: object) -> None:
        m.save(name="n", description="d", body="new")

    def check(m: Memory, _: object) -> None:
        facts = m.list_all()
        assert [(f.name, f.body) for f in facts] in ([], [("n", "new")])
        assert m.save(name="n", description="d", body="retry").fact is not None

    assert _crash_loop(tmp_path, lambda m: None, op, check) > 3


@pytest.mark.slow
def test_crash_points_forget(tmp_path: Path) -> None:
    def setup(m: Memory) -> bytes:
        m.save(name="x", description="d", body="b")
        return (m.paths.project_store / "x.md").read_bytes()

    def check(m: Memory, data: bytes) -> None:
        active = (m.paths.project_store / "x.md").exists()
        archived = [e.path.read_bytes() for e in m.list_archived()]
        assert active != bool(archived)  # in exactly one place
        assert archived in ([], [data])
        m.forget("x")
        assert [e.path.read_bytes() for e in m.list_archived()] == [data]

    assert _crash_loop(tmp_path, setup, lambda m, _: m.forget("x"), check) > 2


@pytest.mark.slow
def test_crash_points_recover(tmp_path: Path) -> None:
    def setup(m: Memory) -> tuple[str, str]:
        fact = m.save(name="x", description="d", body="b").fact
        assert fact is not None
        (entry,) = m.forget("x").archived
        return fact.id, str(entry)

    def check(m: Memory, state: tuple[str, str]) -> None:
        fact_id, entry = state
        active = m.list_all()
        assert active or Path(entry).exists()  # never in neither place
        if active:
            assert [(f.id, f.revision, f.body) for f in active] == [(fact_id, 2, "b")]
        else:
            assert m.recover(entry).fact.revision == 2  # type: ignore[union-attr]

    assert _crash_loop(tmp_path, setup, lambda m, s: m.recover(s[1]), check) > 5


@pytest.mark.slow
def test_crash_points_restore(tmp_path: Path) -> None:
    def setup(m: Memory) -> str:
        fact = m.save(name="x", description="d", body="v1").fact
        assert fact is not None
        m.save(id=fact.id, body="v2")
        return fact.id

    def check(m: Memory, fact_id: str) -> None:
        active = m.resolve(fact_id)
        assert (active.revision, active.body) in {(2, "v2"), (3, "v1")}
        assert m.restore(fact_id, 1).fact.body == "v1"  # type: ignore[union-attr]

    assert _crash_loop(tmp_path, setup, lambda m, i: m.restore(i, 1), check) > 5


@pytest.mark.slow
def test_crash_points_migration(tmp_path: Path) -> None:
    legacy = b"---\nname: old\ndescription: legacy\n---\nbody\n"

    def setup(m: Memory) -> None:
        m.paths.project_store.mkdir(parents=True)
        (m.paths.project_store / "old.md").write_bytes(legacy)

    def check(m: Memory, _: object) -> None:
        data = (m.paths.project_store / "old.md").read_bytes()
        assert data == legacy or data.startswith(b"---\nid: legacy-")
        m.migrate()
        assert m.migrate() == 0
        assert m.resolve("old").body == "body"

    assert _crash_loop(tmp_path, setup, lambda m, _: m.migrate(), check) > 2
