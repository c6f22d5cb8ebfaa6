"""A wider pipe for a long listing written to another program (``list --json | jq``)."""

from __future__ import annotations

import os
import stat
from typing import Any

# Linux lets an unprivileged process raise its pipe to 1 MiB (``/proc/sys/fs/pipe-max-size``).
WIDE_PIPE = 1 << 20
# Output shorter than this fits a default pipe (64 KiB) in a few writes: left alone.
WIDE_OUTPUT = 256 * 1024


def widen_pipe(binary: Any) -> None:
    """Raise the capacity of the pipe ``binary`` writes to, where that is possible.

    A 54 MB listing through the default 64 KiB pipe is ~850 round trips between writer and
    reader, each a block and a wake-up: ~40 ms of system time at 100,000 facts, a fifth of the
    command. Nothing else about the pipe changes; any failure (not Linux, not a pipe, over the
    user's pipe quota) leaves it as it was.
    """
    try:
        import fcntl

        setter = fcntl.F_SETPIPE_SZ  # Linux only (and its getter below)
        fd = binary.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return
        if fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) < WIDE_PIPE:
            fcntl.fcntl(fd, setter, WIDE_PIPE)
    except (ImportError, AttributeError, OSError, ValueError):
        return
