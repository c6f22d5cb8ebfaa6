"""Cheap checks a long-lived reader makes before it reads a store again (issue 14).

``scan_listings`` is one ``scandir`` + ``lstat`` per store: the identity of every candidate
fact file. Two equal listings whose every identity had settled before the earlier read began
prove nothing changed in between (the same racy rule as the derived index).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..paths import EnginePaths
from . import derived_index
from .derived_index import Identity
from .store import INDEX_NAME

Listing = dict[str, Identity]
_UNREADABLE: Identity = (-1, -1, -1, -1, -1, -1)  # never equal to a real identity


def scan_listing(root: Path) -> Listing:
    """lstat identity of every candidate fact file directly in ``root`` (missing → empty)."""
    found: Listing = {}
    try:
        entries = os.scandir(root)
    except (FileNotFoundError, NotADirectoryError):
        return found
    with entries:
        for entry in entries:
            name = entry.name
            if name[-3:] != ".md" or name[0] == "." or name == INDEX_NAME:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                found[name] = _UNREADABLE
                continue
            found[name] = (
                st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode
            )
    return found


def scan_listings(paths: EnginePaths) -> tuple[Listing, Listing]:
    """The project and the global store's listings."""
    return scan_listing(paths.project_store), scan_listing(paths.global_store)


def listing_settled(listings: tuple[Listing, ...], read_ns: int) -> bool:
    """Every identity's mtime and ctime older than ``read_ns - RACY_NS``."""
    settled = read_ns - derived_index.RACY_NS
    return all(max(i[3], i[4]) < settled for files in listings for i in files.values())
