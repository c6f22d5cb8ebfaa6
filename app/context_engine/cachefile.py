"""One writer for the derived cache files of our own (snapshot cache, recall index; S2.4).

A cache is optional: written atomically (temp file in the same directory, ``os.replace``),
0600 whatever the umask (S2.6, it holds user text), and a failure only means no cache.
"""

from __future__ import annotations

import os
from pathlib import Path

from .filemodes import make_private_dirs


def write_cache(path: Path, *chunks: bytes, prefix: str = ".tmp-") -> bool:
    """Atomically replace ``path`` with ``chunks``; ``False`` when it could not be written."""
    import tempfile  # only when a cache changes: not on a quiet hook turn's import path

    try:
        make_private_dirs(path.parent)  # 0700 whatever the umask (S2.6)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".marshal")
        try:
            with os.fdopen(fd, "wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return False
    return True
