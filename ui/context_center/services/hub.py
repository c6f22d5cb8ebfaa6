"""The one broadcast of "what changed", whether from our own write or from the disk."""

from __future__ import annotations

from dataclasses import dataclass

from context_engine.areas import AREAS as ENGINE_AREAS
from PySide6.QtCore import QObject, Signal

AREAS = ENGINE_AREAS  # the one list, shared with the server (context_engine/areas.py)


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """Areas whose views must refresh, plus the engine's own change value when we wrote."""

    areas: frozenset[str]
    origin: str = "disk"  # "disk" (watcher/F5) or "app" (our own write)
    detail: object | None = None
    # The fact files that changed, when known (watcher); empty means "re-read the stores".
    paths: frozenset[str] = frozenset()

    @classmethod
    def everything(cls, origin: str = "disk") -> ChangeSet:
        """A change that refreshes every view (F5, watcher overflow)."""
        return cls(frozenset(AREAS), origin)

    def touches(self, area: str) -> bool:
        """Whether views of ``area`` must refresh."""
        return area in self.areas


class Hub(QObject):
    """Broadcasts changes once to every tab.

    Signals:
        changes_applied(object): a :class:`ChangeSet` after a write or a debounced disk change
    """

    changes_applied = Signal(object)

    def publish(self, changes: ChangeSet) -> None:
        """Broadcast ``changes`` (GUI thread)."""
        self.changes_applied.emit(changes)
