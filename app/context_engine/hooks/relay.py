"""Answer hooks from a running ``context-engine mcp`` server, which keeps the index warm.

A hook is one cold process per prompt; rebuilding the recall index of a large store costs most
of its time. When the agent also runs our MCP server for the same workspace and home (the
set-up ``docs/agents.md`` describes), that server listens on a Unix socket and the hook hands
it the payload instead: the answer comes from the same :func:`hooks.runner.handle` over a warm
engine whose facts are re-validated on every request. Anything unusual — no server, another
workspace, a socket path too long, an error, a platform without Unix sockets — and the hook
answers in its own process as before.

The socket lives in a private directory (0700, ours) under the state root's data directory, or,
when that path is too long for a Unix socket, in a private per-user directory in the temp dir.
"""

from __future__ import annotations

import _socket  # the C module: ``socket`` builds its enums at import, ~4 ms a hook here
import json
import os
from pathlib import Path

from .. import bounded_json
from ..digests import sha256 as _sha256
from ..socket_lines import private_dir, read_line

# The client side runs in every hook process while a server is up: it imports no ``typing``,
# ``dataclasses`` or OpenSSL-backed ``hashlib`` (about a third of such a process, issue 14).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..paths import EnginePaths

    Answer = Callable[[Mapping[str, Any]], str | None]


PROTOCOL = 1
MAX_MESSAGE = 64 * 1024 * 1024
CONNECT_TIMEOUT = 0.25
# A turn at 10,000 facts takes well under a second warm; past this the hook has failed anyway.
REPLY_TIMEOUT = 45.0
_UNIX_PATH_LIMIT = 100  # sun_path is 104 bytes on macOS, 108 on Linux


def socket_path(paths: EnginePaths) -> Path | None:
    """Where the server for this state root and workspace root listens; None if unusable."""
    if not hasattr(_socket, "AF_UNIX"):
        return None
    key = _sha256(f"{paths.state}\0{paths.root}".encode()).hexdigest()[:20]
    # Our data directory first; a deep state root falls back to a per-user private directory
    # in the system temp dir (``private_dir`` refuses one that someone else created).
    path = paths.global_data / "run" / f"{key}.sock"
    if len(os.fsencode(path)) <= _UNIX_PATH_LIMIT:
        return path
    import tempfile  # only for a deep state root: a hook process need not load it otherwise

    user = os.getuid() if hasattr(os, "getuid") else 0
    path = Path(tempfile.gettempdir()) / f"ce-{user}" / f"{key}.sock"
    if len(os.fsencode(path)) <= _UNIX_PATH_LIMIT:
        return path
    return None


def identity(paths: EnginePaths) -> dict[str, str]:
    """What must match between hook and server: same home, stores and workspace."""
    return {
        "home": str(paths.home),
        "state": str(paths.state),
        "root": str(paths.root),
        "workspace": str(paths.workspace),
    }


def ask(paths: EnginePaths, request: Mapping[str, Any]) -> str | None:
    """The server's answer for one hook call, or None to answer in this process."""
    path = socket_path(paths)
    if path is None or not private_dir(path.parent):
        return None
    message = {"v": PROTOCOL, "who": identity(paths), **request}
    try:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(os.fspath(path))
            conn.settimeout(REPLY_TIMEOUT)
            conn.sendall(json.dumps(message).encode("utf-8") + b"\n")
            reply = read_line(conn, MAX_MESSAGE)
        finally:
            conn.close()
    except (OSError, ValueError):  # ValueError: a reply past MAX_MESSAGE
        return None
    try:
        data = bounded_json.loads(reply, what="relay reply")
    except ValueError:
        return None
    out = data.get("out") if isinstance(data, dict) else None
    return out if isinstance(out, str) else None


async def serve(paths: EnginePaths, answer: Answer) -> None:
    """Listen for hook calls until cancelled; return at once if another server has the socket."""
    import anyio

    path = socket_path(paths)
    if path is None or not private_dir(path.parent):
        return
    if path.exists() or path.is_symlink():
        if _alive(path):
            return  # another server of this workspace answers; it stays the one
        path.unlink(missing_ok=True)
    try:
        listener = await anyio.create_unix_listener(path, mode=0o600)
    except (OSError, NotImplementedError):
        return  # no Unix sockets here: hooks answer in their own process
    lock = anyio.Lock()

    async def one(stream: Any) -> None:
        # Nothing a client sends (or fails to send) may stop the server: every error ends
        # only this connection, and the hook then answers in its own process.
        async with stream:
            try:
                request = bounded_json.loads(await _receive_line(stream), what="relay request")
                out = None
                if (
                    isinstance(request, dict)
                    and request.get("v") == PROTOCOL
                    and request.get("who") == identity(paths)
                ):
                    async with lock:  # one turn at a time keeps baselines in order
                        out = await anyio.to_thread.run_sync(answer, request)
                await stream.send(json.dumps({"out": out}).encode("utf-8") + b"\n")
            except Exception:
                return

    try:
        async with listener:
            await listener.serve(one)
    finally:
        path.unlink(missing_ok=True)


async def _receive_line(stream: Any) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await stream.receive(65536)
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n") or size > MAX_MESSAGE:
            return b"".join(chunks)


def _alive(path: Path) -> bool:
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(os.fspath(path))
        return True
    except OSError:
        return False
