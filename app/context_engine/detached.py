"""Start a detached helper process: new session, stdio on ``/dev/null``, no inherited pipe.

Used for the store monitor (``monitor/client.py``) and the first-use builder
(``hooks/builder.py``). A hook runs under ``subprocess.run(capture_output=True)`` in the agent,
which waits until every copy of its pipes is closed: a helper that kept one would hold the hook
(and the agent's turn) for its whole life. So every inheritable descriptor above 2 is closed in
the child except the ones asked for (``keep``), and the child gets a session of its own, so the
agent's kill of the hook's process group does not reach it. Loads no ``subprocess`` or
``typing`` (imported by every cold process that may start a monitor).
"""

from __future__ import annotations

import os
import sys

_spawned: list[int] = []  # helpers this process started (reaped once they exit)


def spawn(module_argv: list[str], keep: tuple[int, ...] = ()) -> int | None:
    """``python -P -m <module_argv>`` detached; its pid, or ``None`` when it could not start.

    ``keep``: inheritable descriptors the child gets under the same numbers (a lock it takes
    over); every other inheritable one is closed in it.
    """
    if not hasattr(os, "posix_spawn"):
        return None
    actions: list[tuple[object, ...]] = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    try:  # descriptors someone made inheritable (a pipe a caller waits on): closed in it
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd > 2 and fd not in keep and _inheritable(fd):
                actions.append((os.POSIX_SPAWN_CLOSE, fd))
    except (OSError, ValueError):
        pass
    # -P: the working directory is not put on sys.path (a stray package there is not ours).
    argv = [sys.executable, "-P", "-m", *module_argv]
    try:
        pid = os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions, setsid=True)
    except OSError:
        return None
    _spawned.append(pid)
    return pid


def _inheritable(fd: int) -> bool:
    try:
        return os.get_inheritable(fd)
    except OSError:
        return False


def reap() -> None:
    """Collect helpers this process started that have exited (no zombie in a host)."""
    for pid in list(_spawned):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _spawned.remove(pid)
