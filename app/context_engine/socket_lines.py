"""Newline-framed messages over a Unix socket: the one reader of the hook relay and the monitor.

Both sides send one JSON document (which never holds a raw newline) followed by ``\\n``. Kept
free of imports: it runs in every relayed hook and every cold command that asks the monitor.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket


def read_line(conn: _socket.socket, limit: int) -> bytes:
    """The bytes up to the first newline or the end of the stream; ``ValueError`` past ``limit``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n"):
            break
        if size > limit:
            raise ValueError("message too large")
    return b"".join(chunks)
