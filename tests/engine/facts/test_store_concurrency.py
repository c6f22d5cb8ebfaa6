"""Writers in separate processes (S4.5; RELIABILITY C3, C4, C7, C13): spawn, not threads."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pytest
from context_engine.facts.fs import is_temp_name
from context_engine.facts.memory import Memory
from support.store import (
    cas_worker,
    create_worker,
    hammer_worker,
    make_paths,
    recover_worker,
    temp_files,
)

SPAWN = multiprocessing.get_context("spawn")


@pytest.mark.slow
def test_eight_processes_cas_updates_lose_nothing(tmp_path: Path) -> None:
    memory = Memory(make_paths(tmp_path))
    fact = memory.save(name="counter", description="d", body="start").fact
    assert fact is not None
    start_at = time.time() + 1.5
    with SPAWN.Pool(8) as pool:
        results = pool.starmap(
            cas_worker, [(str(tmp_path), fact.id, w, 25, start_at) for w in range(8)]
        )
    won = [body for bodies in results for body in bodies]
    final = memory.resolve(fact.id)
    assert final.revision == 1 + len(won)
    assert len(won) >= 8  # progress: some attempt wins in (nearly) every round
    history = [f.body for f in memory.revisions(fact.id)] + [final.body]
    for body in won:
        assert history.count(body) == 1
    assert temp_files(memory.paths.state) == []


@pytest.mark.slow
def test_eight_processes_create_same_name_exactly_one_wins(tmp_path: Path) -> None:
    start_at = time.time() + 1.5
    with SPAWN.Pool(8) as pool:
        results = pool.starmap(create_worker, [(str(tmp_path), w, start_at) for w in range(8)])
    assert sorted(results) == ["exists"] * 7 + ["won"]
    memory = Memory(make_paths(tmp_path))
    (fact,) = memory.list_all()
    assert fact.revision == 1
    winner = results.index("won")
    assert fact.body == f"body {winner}"


@pytest.mark.slow
def test_two_concurrent_recovers_exactly_one_succeeds(tmp_path: Path) -> None:
    memory = Memory(make_paths(tmp_path))
    memory.save(name="x", description="d", body="b")
    (entry,) = memory.forget("x").archived
    start_at = time.time() + 1.5
    with SPAWN.Pool(2) as pool:
        results = pool.starmap(recover_worker, [(str(tmp_path), str(entry), start_at)] * 2)
    assert sorted(results)[1] == "won" and results.count("won") == 1
    assert [f.revision for f in memory.list_all()] == [2]
    assert not entry.exists()


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(3))
def test_sigkill_mid_write_leaves_old_or_new_and_lock_free(tmp_path: Path, trial: int) -> None:
    size = 2 * 1024 * 1024
    memory = Memory(make_paths(tmp_path))
    fact = memory.save(name="big", description="d", body="a" * size).fact
    assert fact is not None
    proc = SPAWN.Process(target=hammer_worker, args=(str(tmp_path), fact.id, size))
    proc.start()
    deadline = time.time() + 60
    while not (tmp_path / "hammer-ready").exists() and time.time() < deadline:
        time.sleep(0.01)
    assert (tmp_path / "hammer-ready").exists()
    time.sleep(random.uniform(0.05, 0.4))  # a random point in the stream of 2 MB writes
    assert proc.pid is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(10)
    store = memory.paths.project_store
    fd = os.open(store / ".lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # C13: free at once after the kill
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    active = Memory(make_paths(tmp_path)).resolve("big")
    assert len(active.body) == size and len(set(active.body)) == 1
    assert active.revision >= 2  # at least one update landed before the kill
    leftovers = [n for n in os.listdir(store) if n.startswith(".tmp")]
    assert all(is_temp_name(n) for n in leftovers)
    after = Memory(make_paths(tmp_path)).save(id=fact.id, body="small").fact
    assert after is not None and after.revision == active.revision + 1
    assert [n for n in os.listdir(store) if n.startswith(".tmp")] == []


@pytest.mark.slow
def test_real_efbig_short_write_leaves_store_identical(tmp_path: Path) -> None:
    """C10: a child limited by RLIMIT_FSIZE gets a real short write, then EFBIG."""
    import errno

    from support.store import fsize_limited_worker, tree

    memory = Memory(make_paths(tmp_path))
    fact = memory.save(name="x", description="d", body="small").fact
    assert fact is not None
    before = tree(memory.paths.state)
    with SPAWN.Pool(1) as pool:
        code = pool.apply(fsize_limited_worker, (str(tmp_path), fact.id))
    assert code == errno.EFBIG
    assert tree(memory.paths.state) == before
    assert temp_files(memory.paths.state) == []
