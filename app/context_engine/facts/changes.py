"""The ``Changes`` value every store mutation returns, so the app and sessions can react."""

from __future__ import annotations

from pathlib import Path

from ..records import record
from .model import Fact


@record
class Changes:
    """What one mutation changed on disk.

    ``fact`` is the fact the operation produced (save, restore, recover), ``written`` the fact
    files created or replaced, ``removed`` active fact files that went away (archived, renamed or
    moved), ``archived`` the new ``.archive`` entries, ``recovered`` the archive entries consumed,
    ``ids`` every fact id touched, ``migrated`` how many legacy files were upgraded, and
    ``warnings`` problems after the commit point that changed nothing about the facts (a
    MEMORY.md that could not be rewritten).
    """

    fact: Fact | None = None
    written: tuple[Path, ...] = ()
    removed: tuple[Path, ...] = ()
    archived: tuple[Path, ...] = ()
    recovered: tuple[Path, ...] = ()
    ids: tuple[str, ...] = ()
    migrated: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """False for a no-op (e.g. restoring the active revision, forgetting a missing fact)."""
        return bool(
            self.written or self.removed or self.archived or self.recovered or self.migrated
        )

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every path this mutation created, replaced or removed."""
        return self.written + self.removed + self.archived + self.recovered
