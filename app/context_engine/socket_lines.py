"""Unix-socket pieces shared by the hook relay and the store monitor: newline-framed messages
and the private directory a socket lives in.

Both sides send one JSON document (which never holds a raw newline) followed by ``\\n``. Kept
free of imports: it runs in every relayed hook and every cold command that asks the monitor.
"""

from __future__ import annotations

import os
import stat

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


def private_dir(directory: str | os.PathLike[str]) -> bool:
    """Create ``directory`` as 0700 if needed; True only if it is ours and private."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        st = os.lstat(directory)
    except OSError:
        return False
    owned = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return stat.S_ISDIR(st.st_mode) and owned and not st.st_mode & 0o077
