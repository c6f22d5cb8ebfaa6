"""Long-lived readers: a cheap check before reading the stores again (issue 14).

``scan_listings`` is one ``scandir`` + ``lstat`` per store: the identity of every candidate
fact file. Two equal listings whose every identity had settled before the earlier read began
prove nothing changed in between (the same racy rule as the derived index).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..paths import EnginePaths
from . import derived_index
from .derived_index import Identity
from .model import Diagnostic, Fact
from .store import identity_of, is_fact_file_name

if TYPE_CHECKING:
    from .memory import Memory

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
            if not is_fact_file_name(entry.name):
                continue
            try:
                found[entry.name] = identity_of(entry.stat(follow_symlinks=False))
            except OSError:
                found[entry.name] = _UNREADABLE
    return found


def scan_listings(paths: EnginePaths) -> tuple[Listing, Listing]:
    """The project and the global store's listings."""
    return scan_listing(paths.project_store), scan_listing(paths.global_store)


def listing_settled(listings: tuple[Listing, ...], read_ns: int) -> bool:
    """Every identity's mtime and ctime older than ``read_ns - RACY_NS``."""
    settled = read_ns - derived_index.RACY_NS
    return all(max(i[3], i[4]) < settled for files in listings for i in files.values())


class StoreReader:
    """Both stores as a long-lived reader sees them: read again only when a listing changed.

    Reads go through each store's derived index (trusted rows, a parse only for what
    changed) and its in-process cache (unchanged facts stay the very same objects). With
    ``keep_index`` the index is created when missing (hosts that record traces anyway);
    without, only an existing one is used (S2.4).
    """

    def __init__(self, paths: EnginePaths, *, keep_index: bool) -> None:
        self.paths = paths
        self.keep_index = keep_index
        self._memory: Memory | None = None
        self._facts: tuple[Fact, ...] | None = None
        self._diagnostics: tuple[Diagnostic, ...] = ()
        self._listing: tuple[Listing, Listing] | None = None
        self._loaded_ns = 0
        self._lock = threading.Lock()

    def read(self) -> tuple[tuple[Fact, ...], tuple[Diagnostic, ...], int]:
        """(facts, diagnostics, when that read began); the same tuple while nothing changed."""
        with self._lock:
            started = time.time_ns()  # before the scan: every lstat and read comes after it
            listings = scan_listings(self.paths)
            if (
                self._facts is not None
                and listings == self._listing
                and listing_settled(listings, self._loaded_ns)
            ):
                return self._facts, self._diagnostics, self._loaded_ns
            snapshot = self._reader().snapshot()
            self._facts, self._diagnostics = snapshot.facts, snapshot.diagnostics
            self._listing, self._loaded_ns = listings, started
            return self._facts, self._diagnostics, started

    def identities(self) -> dict[int, Identity]:
        """``id(fact)`` → the lstat identity it was read under (facts of the last read)."""
        with self._lock:
            return {} if self._memory is None else self._memory.file_identities()

    def _reader(self) -> Memory:
        from .memory import Memory

        if self._memory is None:
            self._memory = Memory(self.paths)
            for store in self._memory.stores.all():
                if store.index is not None:
                    store.index.create = self.keep_index
        return self._memory
