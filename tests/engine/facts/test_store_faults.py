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
from support.store import make_paths, temp_files, tree


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


@pytest.mark.slow
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


def _update_with_failed_dir_fsync(
    tmp_path: Path, fs: FailDirFsync, **change: str
) -> tuple[Memory, str]:
    """Save ``x``, then update it with ``change`` while the directory fsync fails (revision 2)."""
    memory = Memory(make_paths(tmp_path), fs=fs)
    fact = memory.save(name="x", description="d", body="v1").fact
    assert fact is not None
    fs.armed = True
    with pytest.raises(DurabilityUnknown) as err:
        memory.save(id=fact.id, **change)
    assert err.value.revision == 2
    fs.armed = fs.replaced = False
    return memory, fact.id


def test_directory_fsync_failure_is_durability_unknown(tmp_path: Path) -> None:
    memory, _ = _update_with_failed_dir_fsync(tmp_path, FailDirFsync(), body="v2")
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


class FailDirFsyncAfterRenameLink(FailDirFsync):
    """Directory fsync fails once the renamed fact's new name is linked."""

    def link(self, src: str | Path, dst: str | Path) -> None:
        super().link(src, dst)
        if ".revisions" not in str(dst):
            self.replaced = self.armed


def test_rename_with_failed_dir_fsync_never_leaves_two_names(tmp_path: Path) -> None:
    fs = FailDirFsyncAfterRenameLink()
    memory, fact_id = _update_with_failed_dir_fsync(tmp_path, fs, name="y")
    assert [(f.name, f.id, f.revision) for f in memory.list_all()] == [("y", fact_id, 2)]


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
