"""Shared helpers for the store tests: a Memory on a temp home, tree digests, process workers.

Workers live here (not in a test module) so ``multiprocessing`` spawn children can import them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from context_engine.errors import AlreadyActive, AlreadyExists, ArchiveNotFound, RevisionConflict
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths


def make_paths(tmp: Path) -> EnginePaths:
    """Engine paths with home ``tmp/home`` and workspace root ``tmp/ws``."""
    ws = tmp / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    return EnginePaths.resolve(home=tmp / "home", workspace=ws, root=ws)


def git_paths(tmp: Path) -> EnginePaths:
    """Engine paths with home ``tmp/home`` and a git workspace ``tmp/proj`` (root found by .git)."""
    workspace = tmp / "proj"
    (workspace / ".git").mkdir(parents=True, exist_ok=True)
    return EnginePaths.resolve(home=tmp / "home", workspace=workspace)


def tree(root: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every entry under ``root`` (recursively): relative path → (bytes or link target, inode).

    ``.lock`` files are left out: taking a store lock may create one (it is never removed);
    so is the derived index (``context-center/index/``): any process may refresh it.
    """
    found: dict[str, tuple[bytes | str, int]] = {}
    if not root.exists():
        return found
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = Path(dirpath) / name
            if name == ".lock" or Path(dirpath).parts[-2:] == ("context-center", "index"):
                continue
            rel = str(path.relative_to(root))
            st = os.lstat(path)
            if path.is_symlink():
                found[rel] = (os.readlink(path), st.st_ino)
            else:
                found[rel] = (path.read_bytes(), st.st_ino)
    return found


def temp_files(root: Path) -> list[str]:
    """Names of temp files left anywhere under ``root``."""
    return [name for _, _, names in os.walk(root) for name in names if name.startswith(".tmp-")]


def _wait_until(start_at: float) -> None:
    delay = start_at - time.time()
    if delay > 0:
        time.sleep(delay)


def cas_worker(tmp: str, fact_id: str, worker: int, attempts: int, start_at: float) -> list[str]:
    """Read-modify-write ``attempts`` times with expected_revision; returns successful bodies."""
    memory = Memory(make_paths(Path(tmp)), lock_timeout=60)
    _wait_until(start_at)
    won: list[str] = []
    for i in range(attempts):
        current = memory.resolve(fact_id)
        body = f"worker {worker} attempt {i}"
        try:
            memory.save(id=fact_id, body=body, expected_revision=current.revision)
        except RevisionConflict:
            continue
        won.append(body)
    return won


def create_worker(tmp: str, worker: int, start_at: float) -> str:
    """Create-only save of the same name; returns ``won`` or ``exists``."""
    memory = Memory(make_paths(Path(tmp)), lock_timeout=60)
    _wait_until(start_at)
    try:
        memory.save(
            name="shared", description=f"by {worker}", body=f"body {worker}", create_only=True
        )
    except AlreadyExists:
        return "exists"
    return "won"


def recover_worker(tmp: str, archive_path: str, start_at: float) -> str:
    """Recover one archive entry; returns ``won`` or the error code."""
    memory = Memory(make_paths(Path(tmp)), lock_timeout=60)
    _wait_until(start_at)
    try:
        memory.recover(archive_path)
    except (AlreadyActive, ArchiveNotFound) as exc:
        return exc.code
    return "won"


def hammer_worker(tmp: str, fact_id: str, size: int) -> None:
    """Update one fact forever with big bodies (the parent SIGKILLs this process)."""
    memory = Memory(make_paths(Path(tmp)), lock_timeout=60)
    i = 0
    while True:
        i += 1
        letter = "abcdefghijklmnopqrstuvwxyz"[i % 26]
        memory.save(id=fact_id, body=letter * size)
        if i == 1:
            (Path(tmp) / "hammer-ready").touch()  # the parent kills only once writes flow


def reader_worker(tmp: str, size: int, stop_file: str) -> tuple[int, int]:
    """Read the fact ``big`` without any lock until ``stop_file`` exists; (reads, torn)."""
    from context_engine.errors import FactFormatError

    memory = Memory(make_paths(Path(tmp)))
    reads = torn = 0
    while not os.path.exists(stop_file) or reads == 0:
        try:
            body = memory.resolve("project/big.md").body
            whole = len(body) == size and len(set(body)) == 1
        except FactFormatError:
            whole = False
        reads += 1
        torn += 0 if whole else 1
        if reads == 1:  # the writer starts once every reader is reading
            Path(f"{stop_file}.ready-{os.getpid()}").touch()
    return reads, torn


def fsize_limited_worker(tmp: str, fact_id: str) -> int | None:
    """Update with RLIMIT_FSIZE = 4096 (a real kernel short write, then EFBIG); returns errno."""
    import resource

    from context_engine.errors import StoreIOError

    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    try:
        Memory(make_paths(Path(tmp))).save(id=fact_id, body="x" * 20_000)
    except StoreIOError as exc:
        return exc.errno
    return None


def settle_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as settled at once (racy handling has its own tests)."""
    from context_engine.facts import derived_index, stat_listing
    from context_engine.facts import store as store_module

    for module in (store_module, derived_index, stat_listing):
        monkeypatch.setattr(module, "RACY_NS", -(10**18))


def parsed_snapshot(paths: EnginePaths) -> list[tuple[object, ...]]:
    """Both stores read by parsing every file (no derived index): (fact, path, stamp) rows."""
    memory = Memory(paths)
    for store in memory.stores.all():
        store.index = None
    return [(f, f.path, f.stamp) for f in memory.snapshot().facts]


def parsed_diagnostics(paths: EnginePaths) -> list[tuple[object, ...]]:
    """The diagnostics of a snapshot that parses every file."""
    memory = Memory(paths)
    for store in memory.stores.all():
        store.index = None
    return [(d.code, d.path, d.message, d.line) for d in memory.snapshot().diagnostics]
