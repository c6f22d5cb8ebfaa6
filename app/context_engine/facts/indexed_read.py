"""Long-lived readers: a cheap check before reading the stores again (issue 14).

``scan_listings`` (facts/listing.py) is one ``scandir`` + ``lstat`` per store: the identity of
every candidate fact file. Two equal listings whose every identity had settled before the
earlier read began prove nothing changed in between (the same racy rule as the derived index).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from ..paths import EnginePaths
from .derived_index import Identity
from .model import Diagnostic, Fact
from .stat_listing import Listing, listing_settled, scan_listing, scan_listings

if TYPE_CHECKING:
    from .memory import Memory

__all__ = ["Listing", "StoreReader", "listing_settled", "scan_listing", "scan_listings"]

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

    def read(
        self, scanned: tuple[tuple[Listing, Listing], int] | None = None
    ) -> tuple[tuple[Fact, ...], tuple[Diagnostic, ...], int]:
        """(facts, diagnostics, when that read began); the same tuple while nothing changed.

        ``scanned``: listings the caller has just taken and when it began taking them (one
        lstat per file instead of two).
        """
        with self._lock:
            if scanned is not None:
                listings, started = scanned
            else:
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

    def listing(self) -> tuple[Listing, Listing] | None:
        """The stores' listings the last read began with (``None`` before any read)."""
        with self._lock:
            return self._listing

    def identities(self) -> dict[int, Identity]:
        """``id(fact)`` → the lstat identity it was read under (facts of the last read)."""
        with self._lock:
            return {} if self._memory is None else self._memory.file_identities()

    def close(self) -> None:
        """Close the stores' derived index files (they reopen on next use)."""
        with self._lock:
            if self._memory is not None:
                self._memory.close()

    def memory(self) -> Memory:
        """The stores this reader reads (one ``Memory``, made on first use)."""
        with self._lock:
            return self._reader()

    def _reader(self) -> Memory:
        from .memory import Memory

        if self._memory is None:
            self._memory = Memory(self.paths)
            for store in self._memory.stores.all():
                if store.index is not None:
                    store.index.create = self.keep_index
        return self._memory
