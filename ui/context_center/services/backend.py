"""The app's one door to the engine. Every method runs on a worker thread, never the GUI.

Writes call exactly the engine methods the CLI calls (``Memory.save/forget/restore/recover``),
so the app can never take a path around the store's checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from context_engine.facts.archive import ArchivedEntry
from context_engine.facts.changes import Changes
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from context_engine.paths import EnginePaths

from ..dialogs.fact_editor import FactDraft
from .fact_rows import FactsSnapshot, build_rows
from .tasks import CancelToken


@dataclass(frozen=True, slots=True)
class History:
    """The active fact and its revisions (newest first, active excluded)."""

    active: Fact
    revisions: tuple[Fact, ...]


class Backend:
    """Engine objects of one workspace: the two stores today; recall, instructions, scans."""

    def __init__(self, paths: EnginePaths) -> None:
        self.paths = paths
        self.memory = Memory(paths)

    # -- reads ---------------------------------------------------------------------------------

    def facts(self, token: CancelToken | None = None) -> FactsSnapshot:
        """Both stores read now, as Facts-tab rows with overrides and duplicates explained."""
        snap = self.memory.snapshot()
        if token is not None:
            token.check()
        archived = len(self.memory.list_archived())
        return FactsSnapshot(build_rows(snap.facts), snap.diagnostics, archived)

    def draft_for(self, ref: str) -> FactDraft:
        """A draft of the active fact ``ref`` with the revision and digest it was read at."""
        loaded = self.memory.load(ref)
        fact = loaded.fact
        return FactDraft(
            name=fact.name,
            title=fact.title,
            description=fact.description,
            type=fact.type,
            scope=fact.scope,
            body=fact.body,
            id=fact.id,
            base_revision=fact.revision,
            digest=loaded.digest,
        )

    def history(self, ref: str) -> History:
        """The active fact ``ref`` names and its history."""
        return History(self.memory.resolve(ref), self.memory.revisions(ref))

    def archived(self) -> tuple[ArchivedEntry, ...]:
        """Archive entries of both stores, newest first."""
        return self.memory.list_archived()

    # -- writes (serial writer thread only) ----------------------------------------------------

    def save(self, draft: FactDraft) -> Changes:
        """Create or update from the editor; an update checks the revision and bytes it read."""
        if draft.is_new:
            return self.memory.save(
                name=draft.name or draft.title,
                title=draft.title,
                description=draft.description,
                body=draft.body,
                type=draft.type,  # type: ignore[arg-type]
                scope=draft.scope,  # type: ignore[arg-type]
                create_only=True,
            )
        return self.memory.save(
            id=draft.id,
            title=draft.title,
            description=draft.description,
            body=draft.body,
            type=draft.type,  # type: ignore[arg-type]
            scope=draft.scope,  # type: ignore[arg-type]
            expected_revision=draft.base_revision,
            expected_digest=draft.digest,
        )

    def forget(self, fact_id: str) -> Changes:
        """Archive exactly this identity (an id never archives another scope's copy)."""
        return self.memory.forget(fact_id)

    def restore(self, fact_id: str, revision: int, expected_revision: int) -> Changes:
        """Snapshot ``revision`` becomes a new revision (S4.6)."""
        return self.memory.restore(fact_id, revision, expected_revision)

    def recover(self, archive_path: Path) -> Changes:
        """Bring an archive entry back (S4.8)."""
        return self.memory.recover(archive_path)
