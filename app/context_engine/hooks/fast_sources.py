"""The engine as a hook process uses it: facts come through the persisted snapshot cache."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from ..engine import ContextEngine
from ..facts.model import Fact
from ..paths import EnginePaths
from . import snapshot_cache
from .snapshot_cache import SnapshotCache, scan


class CachedEngine(ContextEngine):
    """A ``ContextEngine`` whose fact reads reuse the last process's parses when still valid."""

    def __init__(self, paths: EnginePaths) -> None:
        super().__init__(paths)
        self._cache = SnapshotCache(paths)
        self._facts: tuple[Fact, ...] | None = None

    def active_facts(self) -> Sequence[Fact]:
        """Both stores, read once per hook process (a hook handles exactly one event)."""
        if self._facts is None:
            self._facts = self._cache.load().facts
        return self._facts


class WarmEngine(CachedEngine):
    """A long-lived ``CachedEngine`` (the MCP server's): facts re-validated on every request.

    The facts of the last load are reused only while both stores list exactly the same files
    with the same lstat identity, all settled before that load began (the snapshot cache's
    rule); otherwise they are loaded again through the snapshot cache.
    """

    def __init__(self, paths: EnginePaths) -> None:
        super().__init__(paths)
        self._listing: object = None
        self._loaded_ns = 0
        self._facts_lock = threading.Lock()

    def active_facts(self) -> Sequence[Fact]:
        """Both stores as they are now."""
        with self._facts_lock:  # tool calls and relayed hooks arrive on worker threads
            return self._current()

    def _current(self) -> Sequence[Fact]:
        listing = (scan(self.paths.project_store), scan(self.paths.global_store))
        settled = self._loaded_ns - snapshot_cache.RACY_NS
        if (
            self._facts is not None
            and listing == self._listing
            and all(max(i[3], i[4]) < settled for files in listing for i in files.values())
        ):
            return self._facts
        started = time.time_ns()
        self._facts = self._cache.load().facts
        self._listing, self._loaded_ns = listing, started
        return self._facts
