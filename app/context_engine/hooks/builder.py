"""The first-use builder: one detached process that builds a workspace's derived state.

A hook that finds no usable derived state for a large store (a fresh install, an upgrade that
changed the code tags, a deleted or damaged index) cannot build it inside the agent's hook
timeout (100,000 facts: minutes of CPU). It hands the build to this process and answers its
turn without memory (``hooks/budget.py``). The builder reads both stores through their derived
indexes (parses committed in batches: a killed build keeps them) and saves the recall state, as
a hook's full read would; the next hook then answers from that state.

One builder per workspace: an ``flock`` on ``<workspace data>/cache/first-build.lock``. The hook
takes the lock *before* it spawns the builder and the builder inherits the locked descriptor, so
two hooks at once start one builder (the second finds the lock held). The lock dies with its
last holder: a killed builder leaves no stale lock, and the next hook starts another, which
continues from the committed batches. Started like the store monitor (``detached.py``): new
session, stdio on ``/dev/null``, at a lower priority (``nice``), so an agent waits on nothing.

    python -m context_engine.hooks.builder --lock-fd N [--home DIR] --workspace DIR --root DIR
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from ..paths import EnginePaths

LOCK_NAME = "first-build.lock"
NICE = 10
# Waits for a store's files to settle before the read (``settle``): a store still being
# written after this many is read as it is.
SETTLE_TRIES = 5


def lock_path(paths: EnginePaths) -> Path:
    """Where a workspace's builder holds its lock (beside the recall state it builds)."""
    return paths.workspace_data / "cache" / LOCK_NAME


def _open_lock(paths: EnginePaths) -> int | None:
    """The lock file, opened (created 0600 in 0700 directories); ``None`` when it cannot be."""
    from ..filemodes import make_private_dirs

    path = lock_path(paths)
    try:
        make_private_dirs(path.parent)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None


def running(paths: EnginePaths) -> bool:
    """Whether a builder of this workspace holds its lock now."""
    try:
        fd = os.open(lock_path(paths), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False  # never made: no builder ever ran here
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def hand_off(paths: EnginePaths, home: str | None) -> str:
    """Start the builder unless one runs: ``"started"``, ``"running"`` or ``"unavailable"``
    (no lock file could be made, or no process started: the caller says memory is not ready)."""
    fd = _open_lock(paths)
    if fd is None:
        return "unavailable"
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return "running"
        from .. import detached

        argv = ["context_engine.hooks.builder", "--lock-fd", str(fd)]
        if home is not None:
            argv += ["--home", home]
        argv += ["--workspace", str(paths.workspace), "--root", str(paths.root)]
        os.set_inheritable(fd, True)
        pid = detached.spawn(argv, keep=(fd,))
        return "unavailable" if pid is None else "started"
    finally:
        os.close(fd)  # the builder holds its own copy of the locked descriptor


def settle(paths: EnginePaths, tries: int = SETTLE_TRIES) -> bool:
    """Wait until every fact file is older than git's racy window; ``False``: still changing.

    A state can vouch only for files settled before its read began (``recall/quiet.py``); past
    a few unsettled ones it keeps no listing, and the next hook reads every fact inline. Files
    written just before a hand-off (a copied, restored or checked-out store) would cost that;
    the builder runs for minutes, so it waits out those two seconds first.
    """
    from ..facts.stat_listing import RACY_NS, scan_listings

    for _ in range(tries):
        listings = scan_listings(paths)
        newest = max(
            (max(i[3], i[4]) for files in listings for i in files.values()), default=0
        )
        wait = newest + RACY_NS - time.time_ns()
        if wait < 0:
            return True
        time.sleep(wait / 1e9 + 0.01)
    return False


def build(paths: EnginePaths) -> None:
    """Read both stores (the derived indexes filled in batches) and save the recall state,
    once the files written just before have settled."""
    from ..engine import ContextEngine

    settle(paths)
    engine = ContextEngine(paths)
    try:
        service = engine.catalog.index
        service.recaller(service.active_facts())
    finally:
        engine.close()


def _stale_temps(paths: EnginePaths) -> None:
    """Remove temp files a killed writer of the recall state left (its pid is gone)."""
    directory = paths.workspace_data / "cache"
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not (name.startswith(".recall.") and name.endswith(".tmp")):
            continue
        pid = name.rsplit(".", 2)[-2].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # its writer still runs
        except ProcessLookupError:
            pass
        except OSError:
            continue
        with contextlib.suppress(OSError):
            os.unlink(directory / name)


def _took_over(fd: int, paths: EnginePaths) -> bool:
    """Whether ``fd`` is this workspace's lock, held (inherited from the hook that spawned us)."""
    try:
        held, named = os.fstat(fd), os.lstat(lock_path(paths))
        if (held.st_dev, held.st_ino) != (named.st_dev, named.st_ino):
            return False
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # ours already: succeeds at once
    except OSError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    """Take over the lock, build, exit (the lock goes with the process)."""
    import argparse

    from ..paths import EnginePaths

    parser = argparse.ArgumentParser(prog="python -m context_engine.hooks.builder")
    parser.add_argument("--lock-fd", type=int, required=True)
    parser.add_argument("--home")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    paths = EnginePaths.resolve(home=args.home, workspace=args.workspace, root=args.root)
    if not _took_over(args.lock_fd, paths):
        return 1
    with contextlib.suppress(OSError):
        os.nice(NICE)
    _stale_temps(paths)
    build(paths)
    return 0


if __name__ == "__main__":
    code = 1
    try:
        code = main()
    finally:
        os._exit(code)
