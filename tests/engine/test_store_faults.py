"""Fault injection through the FS seam (RELIABILITY C1, C9, C12, C14, C15, C17)."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
import time
from pathlib import Path

import pytest
from context_engine.errors import DurabilityUnknown, StoreIOError
from context_engine.facts.fs import FS, store_lock
from context_engine.facts.memory import Memory
from store_helpers import make_paths, temp_files, tree


class ShortThenFull(FS):
    """The first write is short; the next raises ENOSPC (once armed)."""

    def __init__(self, skip: int = 0) -> None:
        self.armed = False
        self.skip = skip
        self.calls = 0

    def write(self, fd: int, data: bytes | memoryview) -> int:
        if not self.armed:
            return super().write(fd, data)
        if self.skip:
            self.skip -= 1
            return super().write(fd, data)
        self.calls += 1
        if self.calls == 1:
            return super().write(fd, bytes(data[: max(1, len(data) // 2)]))
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize(
    ("op", "skip"),
    [
        ("update", 0),
        ("update", 1),
        ("create", 0),
        ("restore", 0),
        ("restore", 1),
        ("recover", 0),
        ("recover", 1),
    ],
)
def test_enospc_after_short_write_leaves_store_identical(
    tmp_path: Path, op: str, skip: int
) -> None:
    """skip=0 fails on the revision snapshot; skip=1 on the fact itself (snapshot undone)."""
    fs = ShortThenFull(skip)
    memory = Memory(make_paths(tmp_path), fs=fs)
    fact = memory.save(name="x", description="d", body="v1" * 1000).fact
    assert fact is not None
    memory.save(id=fact.id, body="v2" * 1000)
    (entry,) = memory.forget(memory.save(name="gone", description="d", body="g").fact.id).archived  # type: ignore[union-attr]
    before = tree(memory.paths.state)
    fs.armed = True
    with pytest.raises(StoreIOError) as err:
        if op == "update":
            memory.save(id=fact.id, body="v3" * 1000)
        elif op == "create":
            memory.save(name="new", description="d", body="n" * 5000)
        elif op == "restore":
            memory.restore(fact.id, 1)
        else:
            memory.recover(entry)
    assert err.value.errno == errno.ENOSPC
    assert fs.calls >= 2  # the short write really happened before the failure
    assert tree(memory.paths.state) == before
    assert temp_files(memory.paths.state) == []
    fs.armed = False
    assert memory.save(id=fact.id, body="v3").fact.revision == 3  # type: ignore[union-attr]


class FailDirFsync(FS):
    """Directory fsync fails with EIO after the commit point (the replace)."""

    def __init__(self) -> None:
        self.armed = False
        self.replaced = False

    def replace(self, src: str | Path, dst: str | Path) -> None:
        super().replace(src, dst)
        self.replaced = self.armed

    def fsync(self, fd: int) -> None:
        if self.replaced and stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EIO, "Input/output error")
        super().fsync(fd)


def test_directory_fsync_failure_is_durability_unknown(tmp_path: Path) -> None:
    fs = FailDirFsync()
    memory = Memory(make_paths(tmp_path), fs=fs)
    fact = memory.save(name="x", description="d", body="v1").fact
    assert fact is not None
    fs.armed = True
    with pytest.raises(DurabilityUnknown) as err:
        memory.save(id=fact.id, body="v2")
    assert err.value.revision == 2
    fs.armed = fs.replaced = False
    assert memory.resolve("x").body == "v2"
    assert [f.revision for f in memory.revisions("x")] == [1]


def test_planted_lock_symlink_fails_and_victim_is_untouched(tmp_path: Path) -> None:
    memory = Memory(make_paths(tmp_path))
    store = memory.paths.project_store
    store.mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (store / ".lock").symlink_to(victim)
    with pytest.raises(StoreIOError) as err:
        memory.save(name="x", description="d", body="b")
    assert err.value.errno == errno.ELOOP
    assert victim.read_bytes() == b"precious"
    assert not (store / "x.md").exists()


def test_stale_temp_files_are_swept_under_the_lock(tmp_path: Path) -> None:
    memory = Memory(make_paths(tmp_path))
    store = memory.paths.project_store
    store.mkdir(parents=True)
    (store / ".tmp-deadbeef.partial").write_bytes(b"half")
    (store / ".tmp-keep.txt").write_bytes(b"not ours")
    (store / "keep.partial").write_bytes(b"not ours")
    memory.save(name="x", description="d", body="b")
    assert not (store / ".tmp-deadbeef.partial").exists()
    assert (store / ".tmp-keep.txt").exists() and (store / "keep.partial").exists()


def test_lock_blocks_a_second_thread(tmp_path: Path) -> None:
    root = tmp_path / "store"
    fs = FS()
    entered = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def holder() -> None:
        with store_lock(fs, root):
            order.append("first")
            entered.set()
            release.wait(5)
            order.append("first-out")

    thread = threading.Thread(target=holder)
    thread.start()
    entered.wait(5)

    def second() -> None:
        with store_lock(fs, root):
            order.append("second")

    other = threading.Thread(target=second)
    other.start()
    time.sleep(0.2)
    assert order == ["first"]
    release.set()
    thread.join(5)
    other.join(5)
    assert order == ["first", "first-out", "second"]
    assert (root / ".lock").exists()


def test_lock_timeout(tmp_path: Path) -> None:
    from context_engine.errors import LockTimeout

    memory = Memory(make_paths(tmp_path), lock_timeout=0.1)
    store = memory.paths.project_store
    store.mkdir(parents=True)
    fd = os.open(store / ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(LockTimeout):
            memory.save(name="x", description="d", body="b")
    finally:
        os.close(fd)
    assert not (store / "x.md").exists()


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


class FailDirFsyncAfterRenameLink(FailDirFsync):
    """Directory fsync fails once the renamed fact's new name is linked."""

    def link(self, src: str | Path, dst: str | Path) -> None:
        super().link(src, dst)
        if ".revisions" not in str(dst):
            self.replaced = self.armed


def test_rename_with_failed_dir_fsync_never_leaves_two_names(tmp_path: Path) -> None:
    fs = FailDirFsyncAfterRenameLink()
    memory = Memory(make_paths(tmp_path), fs=fs)
    fact = memory.save(name="x", description="d", body="v1").fact
    assert fact is not None
    fs.armed = True
    with pytest.raises(DurabilityUnknown) as err:
        memory.save(id=fact.id, name="y")
    assert err.value.revision == 2
    fs.armed = fs.replaced = False
    assert [(f.name, f.id, f.revision) for f in memory.list_all()] == [("y", fact.id, 2)]


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


def test_crash_points_create(tmp_path: Path) -> None:
    def op(m: Memory, _: object) -> None:
        m.save(name="n", description="d", body="new")

    def check(m: Memory, _: object) -> None:
        facts = m.list_all()
        assert [(f.name, f.body) for f in facts] in ([], [("n", "new")])
        assert m.save(name="n", description="d", body="retry").fact is not None

    assert _crash_loop(tmp_path, lambda m: None, op, check) > 3


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


class CreatorBeforeLink(FS):
    """Another writer (a text editor, say) creates the target just before our link (C8)."""

    def link(self, src: str | Path, dst: str | Path) -> None:
        if str(dst).endswith("/raced.md"):
            Path(dst).write_bytes(b"---\nname: raced\n---\nsomeone else's\n")
        super().link(src, dst)


def test_create_only_never_overwrites_a_file_created_meanwhile(tmp_path: Path) -> None:
    from context_engine.errors import AlreadyExists

    memory = Memory(make_paths(tmp_path), fs=CreatorBeforeLink())
    with pytest.raises(AlreadyExists):
        memory.save(name="raced", description="d", body="ours", create_only=True)
    path = memory.paths.project_store / "raced.md"
    assert path.read_bytes() == b"---\nname: raced\n---\nsomeone else's\n"
    assert temp_files(memory.paths.state) == []


def test_index_failure_after_commit_is_a_warning_not_an_error(tmp_path: Path) -> None:
    fs = ShortThenFull(skip=1)  # the fact's write succeeds, MEMORY.md's fails
    memory = Memory(make_paths(tmp_path), fs=fs)
    fs.armed = True
    changes = memory.save(name="n", description="d", body="b")
    assert changes.fact is not None and changes.fact.revision == 1
    assert len(changes.warnings) == 1 and "MEMORY.md was not updated" in changes.warnings[0]
    assert temp_files(memory.paths.state) == []
    fs.armed = False
    memory.save(name="m", description="d", body="b")
    assert "(n.md)" in (memory.paths.project_store / "MEMORY.md").read_text()
