"""The store monitor process: inotify watches, a generation counter, one answer per request.

Each request names the directories it wants and the token it holds. The monitor first reads
its inotify queue without blocking (the kernel queues an event while the writer's call runs,
so every write completed before the request is in it), then answers per directory the names
changed since the token's generation — or ``null`` (unknown) when it cannot say: the token is
from another monitor instance or older than the watch, the queue overflowed, the directory
was moved, deleted or replaced, it is on a network or FUSE filesystem, or too many names
changed. Directories are watched from the first request naming them.

It exits after ``CONTEXT_ENGINE_MONITOR_IDLE`` seconds (default 600) without a request, when
its queue cannot be read, or when asked to. One per (user, state root): it holds a lock beside
its socket, so a second one started in a race exits at once. It imports nothing of the engine
but the watch, and answers with names only, never file contents.
"""

from __future__ import annotations

import _socket
import contextlib
import fcntl
import json
import os
import select
import sys
import time
from collections.abc import Sequence

from ..facts.dir_watch import DirWatch, sees_every_change
from ..socket_lines import read_line
from . import client

MAX_DIRS = 64  # directories watched at once (the least recently asked for goes first)
MAX_NAMES = 200_000  # names remembered per directory before it restarts as "unknown"
MAX_REPLY_NAMES = 4096  # more changed names than this: "unknown" (a walk is as cheap)
_REQUEST_TIMEOUT = 1.0  # a client that sends nothing is dropped after this
_MAX_REQUEST = 1024 * 1024


class Watched:
    """One watched directory: its identity, since when it is watched, its changed names."""

    __slots__ = ("changed", "epoch", "ident", "path", "used", "wd")

    def __init__(self, path: str, wd: int, ident: tuple[int, int], epoch: int) -> None:
        self.path = path
        self.wd = wd
        self.ident = ident
        self.epoch = epoch  # tokens older than this generation know nothing of it
        # name -> generation of its last change, oldest first (a change moves it to the end)
        self.changed: dict[str, int] = {}
        self.used = time.monotonic()


class Monitor:
    """The watches and the generation counter; no socket (tested on its own)."""

    def __init__(self, watch: DirWatch) -> None:
        self.watch = watch
        self.instance = os.urandom(8).hex()
        self.generation = 0
        self.by_path: dict[str, Watched] = {}
        self.by_wd: dict[int, set[str]] = {}
        self.broken: str | None = None

    def drain(self) -> None:
        """Take every queued event: its names get a new generation."""
        drained = self.watch.drain()
        if not (drained.names or drained.selves or drained.rescan):
            return
        self.generation += 1
        gen = self.generation
        if drained.rescan:
            if drained.rescan != "queue overflow":
                self.broken = drained.rescan  # the queue cannot be read: nothing to vouch for
            for watched in self.by_path.values():
                self._restart(watched)
        for wd, names in drained.names.items():
            for path in self.by_wd.get(wd, ()):
                watched = self.by_path[path]
                changed = watched.changed
                for name in names:
                    changed.pop(name, None)
                    changed[name] = gen
                if len(changed) > MAX_NAMES:
                    self._restart(watched)
        for wd in drained.selves:
            for path in list(self.by_wd.get(wd, ())):
                self._drop(self.by_path[path])

    def _restart(self, watched: Watched) -> None:
        """Forget what is known of ``watched``: tokens before now read "unknown" for it."""
        watched.epoch = self.generation
        watched.changed.clear()

    def _drop(self, watched: Watched) -> None:
        del self.by_path[watched.path]
        paths = self.by_wd.get(watched.wd)
        if paths is not None:
            paths.discard(watched.path)
            if not paths:
                del self.by_wd[watched.wd]
                self.watch.remove(watched.wd)

    def _ensure(self, path: str) -> Watched | None:
        """The watch of ``path`` as it is now (set up, or set again if replaced); None: none."""
        try:
            st = os.stat(path)
        except OSError:
            st = None
        watched = self.by_path.get(path)
        ident = None if st is None else (st.st_dev, st.st_ino)
        if watched is not None:
            if watched.ident == ident:
                watched.used = time.monotonic()
                return watched
            self._drop(watched)  # moved away, deleted or replaced (a parent renamed, too)
        if ident is None or not os.path.isabs(path) or not sees_every_change(path):
            return None
        if len(self.by_path) >= MAX_DIRS:
            self._drop(min(self.by_path.values(), key=lambda w: w.used))
        wd = self.watch.add(path)
        if wd is None:
            return None  # not a directory, or the per-user watch limit
        try:
            again = os.stat(path)
        except OSError:
            again = None
        watched = Watched(path, wd, ident, self.generation)
        self.by_path[path] = watched
        self.by_wd.setdefault(wd, set()).add(path)
        if again is None or (again.st_dev, again.st_ino) != ident:
            self._drop(watched)  # replaced while it was being watched
            return None
        return watched

    def answer(self, dirs: Sequence[str], since: object) -> dict[str, object]:
        """The reply to one request (the queue read first)."""
        self.drain()
        known = (
            isinstance(since, list) and len(since) == 2 and since[0] == self.instance
            and isinstance(since[1], int) and 0 <= since[1] <= self.generation
        )
        after = since[1] if known and isinstance(since, list) else -1
        out: list[list[str] | None] = []
        for path in dirs:
            watched = self._ensure(path)
            if watched is None or not known or after < watched.epoch:
                out.append(None)
                continue
            names: list[str] = []
            for name in reversed(watched.changed):
                if watched.changed[name] <= after:
                    break
                names.append(name)
                if len(names) > MAX_REPLY_NAMES:
                    break
            out.append(None if len(names) > MAX_REPLY_NAMES else names)
        return {
            "v": client.PROTOCOL,
            "token": [self.instance, self.generation],
            "pid": os.getpid(),
            "dirs": out,
        }


def _read_request(conn: _socket.socket) -> object:
    conn.settimeout(_REQUEST_TIMEOUT)
    return json.loads(read_line(conn, _MAX_REQUEST))


def _serve_one(monitor: Monitor, conn: _socket.socket, state: str) -> bool:
    """Answer one connection; False when asked to stop."""
    try:
        request = _read_request(conn)
        if not isinstance(request, dict) or request.get("v") != client.PROTOCOL:
            return True
        if request.get("state") != state:
            conn.sendall(b'{"v": 0}\n')  # another state root's client: it walks itself
            return True
        if request.get("op") == "stop":
            conn.sendall(json.dumps({"v": client.PROTOCOL, "stopped": True}).encode() + b"\n")
            return False
        dirs = request.get("dirs")
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
            return True
        reply = monitor.answer(dirs[:MAX_DIRS], request.get("since"))
        conn.sendall(json.dumps(reply).encode("utf-8") + b"\n")
    except (OSError, ValueError):
        pass
    return True


def run(state: str, idle: float) -> int:
    """Serve the monitor of ``state`` until idle, broken or stopped (0: a clean exit)."""
    path = client.socket_path(state)
    if path is None:
        return 1
    lock_path = path[: -len(".sock")] + ".lock"
    try:
        lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return 1
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return 0  # another monitor of this state root runs: it stays the one
    watch = DirWatch.open()
    if watch is None:
        os.close(lock)
        return 1
    listener = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    bound = None
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # a stale socket of a monitor that died (we hold the lock)
        listener.bind(path)
        os.chmod(path, 0o600)
        bound = os.stat(path).st_ino
        listener.listen(64)
        return _loop(Monitor(watch), listener, state, idle)
    except OSError:
        return 1
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            if bound is not None and os.stat(path).st_ino == bound:
                os.unlink(path)
        watch.close()
        os.close(lock)


STATE_CHECK_SECONDS = 2.0


def _loop(monitor: Monitor, listener: _socket.socket, state: str, idle: float) -> int:
    last = time.monotonic()
    had_state = os.path.isdir(state)
    while True:
        left = idle - (time.monotonic() - last)
        if left <= 0:
            return 0
        watch_fd = monitor.watch.fileno()
        # Woken at least every few seconds to see that the state root still exists: a demo's
        # or a test's temporary home is removed, and nothing would be left to vouch for. (One
        # not created yet when the monitor started is waited for by the idle time alone.)
        ready, _, _ = select.select(
            [listener.fileno(), watch_fd], [], [], min(left, STATE_CHECK_SECONDS)
        )
        if watch_fd in ready:
            monitor.drain()  # keeps the kernel's queue short between requests
        if had_state and not os.path.isdir(state):
            return 0
        if monitor.broken:
            return 1
        if listener.fileno() in ready:
            try:
                fd, _ = listener._accept()  # type: ignore[attr-defined]  # reason: the C accept
            except OSError:
                continue
            conn = _socket.socket(fileno=fd)
            try:
                going_on = _serve_one(monitor, conn, state)
            finally:
                conn.close()
            last = time.monotonic()
            if not going_on:
                return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m context_engine.monitor <state root>``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        sys.stderr.write("usage: python -m context_engine.monitor <state root>\n")
        return 2
    os.umask(0o077)
    with contextlib.suppress(OSError):
        os.chdir("/")  # hold no directory busy
    try:
        idle = float(os.environ.get(client.IDLE_ENV, client.DEFAULT_IDLE))
    except ValueError:
        idle = client.DEFAULT_IDLE
    return run(args[0], idle)
