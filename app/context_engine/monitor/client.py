"""Ask the store monitor what changed since a token; start it when it is not running.

Imported by every cold process that validates a store, so it loads no ``typing``, ``socket``
(the C ``_socket`` serves), ``subprocess`` or ``tempfile``: a connect, one request line, one
reply line. Every failure — disabled, another platform, no socket, a stale socket, a slow or
confused monitor — reads as "no answer", and the caller validates by ``lstat`` as before.

The socket is ``<runtime dir>/<key>.sock``, the key a digest of the user and the state root:
one monitor per (user, state root). The runtime dir is ``$XDG_RUNTIME_DIR/context-engine``,
else ``$TMPDIR`` (or ``/tmp``) ``/ce-<uid>``; each is created 0700 and refused when someone
else owns it or others may enter it. Nothing is ever written in the home or the state root.
"""

from __future__ import annotations

import _socket
import json
import os
import sys

from .. import detached
from ..digests import sha256
from ..socket_lines import private_dir, read_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

PROTOCOL = 1
ENV = "CONTEXT_ENGINE_MONITOR"  # "0": never ask, never start one
IDLE_ENV = "CONTEXT_ENGINE_MONITOR_IDLE"  # seconds without a request before it exits
DEFAULT_IDLE = 600.0
# A monitor answers from memory after one non-blocking read of its queue: well under a
# millisecond. Past these the cold process walks the store itself (a loaded machine).
CONNECT_TIMEOUT = 0.1
REPLY_TIMEOUT = 0.5
_UNIX_PATH_LIMIT = 100  # sun_path is 104 bytes on macOS, 108 on Linux
_MAX_REPLY = 4 * 1024 * 1024

# A token: (monitor instance, generation). Recorded beside a saved view of the stores.
Token = list[object]  # [instance: str, generation: int] as JSON carries it

_spawned = detached._spawned  # monitors (and other helpers) this process started


def enabled() -> bool:
    """Whether monitors are used here: Linux, Unix sockets, not turned off."""
    return (
        os.environ.get(ENV, "1") != "0"
        and sys.platform.startswith("linux")
        and hasattr(_socket, "AF_UNIX")
    )


def runtime_dirs() -> list[str]:
    """The candidate private directories for the socket, best first."""
    out = []
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg):
        out.append(os.path.join(xdg, "context-engine"))
    tmp = os.environ.get("TMPDIR", "")
    base = tmp if tmp and os.path.isabs(tmp) else "/tmp"
    out.append(os.path.join(base, f"ce-{os.getuid()}"))
    return out


def key_of(state: str) -> str:
    """One monitor per (user, state root)."""
    return sha256(f"{os.getuid()}\0{state}".encode("utf-8", "surrogateescape")).hexdigest()[:20]


def socket_path(state: str) -> str | None:
    """Where the monitor of ``state`` listens (its private directory made); None: nowhere."""
    key = key_of(state)
    for directory in runtime_dirs():
        path = os.path.join(directory, f"{key}.sock")
        if len(os.fsencode(path)) <= _UNIX_PATH_LIMIT and private_dir(directory):
            return path
    return None


def _exchange(path: str, message: dict[str, object], reply_timeout: float) -> object:
    """Send one request line, read one reply line (raises ``OSError``/``ValueError``)."""
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_TIMEOUT)
        conn.connect(path)
        conn.settimeout(reply_timeout)
        conn.sendall(json.dumps(message).encode("utf-8") + b"\n")
        reply = read_line(conn, _MAX_REPLY)
    finally:
        conn.close()
    return json.loads(reply)


def changes_since(
    state: str, dirs: Sequence[str], since: object, *, start: bool = True
) -> tuple[Token, list[set[str] | None]] | None:
    """(the token now, per directory the names changed since ``since`` or ``None``: unknown).

    ``None``: no answer at all (disabled, not running — then started unless ``start`` is
    false —, slow or confused). The token now is what a caller records beside a view it
    validates *after* this call.
    """
    if not enabled():
        return None
    _reap()
    path = socket_path(state)
    if path is None:
        return None
    message = {"v": PROTOCOL, "state": state, "dirs": list(dirs), "since": since}
    try:
        reply = _exchange(path, message, REPLY_TIMEOUT)
    except (FileNotFoundError, ConnectionRefusedError):
        if start:
            spawn(state)
        return None
    except (OSError, ValueError):
        return None
    if not isinstance(reply, dict) or reply.get("v") != PROTOCOL:
        return None
    token, found = reply.get("token"), reply.get("dirs")
    if not (
        isinstance(token, list) and len(token) == 2 and isinstance(token[0], str)
        and isinstance(token[1], int) and isinstance(found, list) and len(found) == len(dirs)
    ):
        return None
    out: list[set[str] | None] = []
    for names in found:
        if isinstance(names, list) and all(isinstance(name, str) for name in names):
            out.append(set(names))
        else:
            out.append(None)
    return token, out


def spawn(state: str) -> int | None:
    """Start a monitor for ``state``, detached (new session, no inherited descriptors)."""
    if not enabled():
        return None
    return detached.spawn(["context_engine.monitor", state])


def _reap() -> None:
    """Collect monitors this process started that have exited (no zombie in a host)."""
    detached.reap()


def status(state: str) -> dict[str, object] | None:
    """The running monitor's pid and token (``None``: none answers)."""
    path = socket_path(state)
    if path is None or not enabled():
        return None
    try:
        reply = _exchange(path, {"v": PROTOCOL, "state": state, "dirs": [], "since": None}, 2.0)
    except (OSError, ValueError):
        return None
    return reply if isinstance(reply, dict) and reply.get("v") == PROTOCOL else None


def stop(state: str, timeout: float = 2.0) -> bool:
    """Ask the monitor of ``state`` to exit; True if one answered."""
    path = socket_path(state)
    if path is None:
        return False
    try:
        _exchange(path, {"v": PROTOCOL, "state": state, "op": "stop"}, timeout)
    except (OSError, ValueError):
        return False
    _reap()
    return True
