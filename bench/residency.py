"""How much of a file the page cache holds (Linux ``mincore``), for the benches' notes.

A whole-process figure that reads a large index is only comparable between runs when that
index is in the page cache: a cold ``list --json`` at 100,000 facts costs ~5× a warm one, and
something outside the bench can drop the cache between runs. The bench prints the share
resident before its timed runs instead of guessing.
"""

from __future__ import annotations

import ctypes
import mmap
from pathlib import Path

_PAGE = mmap.PAGESIZE
# The process's own symbols, libc's among them (``find_library`` would start ``ldconfig``).
_LIBC = ctypes.CDLL(None, use_errno=True)


def resident_share(path: Path) -> float | None:
    """The share (0–1) of ``path``'s pages in the page cache; ``None`` where it cannot tell."""
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size == 0:
        return 1.0
    pages = (size + _PAGE - 1) // _PAGE
    vector = (ctypes.c_ubyte * pages)()
    with path.open("rb") as file:
        try:
            # A private copy-on-write mapping: writable for ctypes, never written.
            mapped = mmap.mmap(file.fileno(), size, access=mmap.ACCESS_COPY)
        except (OSError, ValueError):
            return None
        try:
            # Mapping a file reads none of it: mincore only reports what is already cached.
            view = ctypes.c_char.from_buffer(mapped)
            try:
                failed = _LIBC.mincore(
                    ctypes.c_void_p(ctypes.addressof(view)), ctypes.c_size_t(size), vector
                )
            finally:
                del view
        finally:
            mapped.close()
    if failed != 0:
        return None
    return sum(byte & 1 for byte in vector) / pages

