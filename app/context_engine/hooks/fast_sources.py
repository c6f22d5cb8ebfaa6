"""The engine as a hook process uses it: facts come through the persisted snapshot cache."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine import ContextEngine
from ..facts.model import Fact
from ..paths import EnginePaths
from .snapshot_cache import SnapshotCache


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
