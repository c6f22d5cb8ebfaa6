"""The app's one door to the engine. Every method runs on a worker thread, never the GUI.

Writes call exactly the engine methods the CLI calls (``Memory.save/forget/restore/recover``),
so the app can never take a path around the store's checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from context_engine.facts.archive import ArchivedEntry
from context_engine.facts.changes import Changes
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from context_engine.paths import EnginePaths, slugify

from ..dialogs.fact_editor import FactDraft
from .fact_rows import FactsSnapshot, build_rows
from .tasks import CancelToken

if TYPE_CHECKING:  # the heavier engine parts load on first use, on a worker thread
    from context_engine.instructions import Resolution
    from context_engine.policy.confirmation import ConfirmationService
    from context_engine.recall import RecallTrace, TraceLog
    from context_engine.recall.source import WorkspaceRecall
    from context_engine.suggestions import MemoryCandidate, SkillCandidate, Suggestions
    from context_engine.tools.write import ToolOutcome


@dataclass(frozen=True, slots=True)
class History:
    """The active fact and its revisions (newest first, active excluded)."""

    active: Fact
    revisions: tuple[Fact, ...]


@dataclass(frozen=True, slots=True)
class InstructionsView:
    """The resolution and the exact provider-visible block."""

    resolution: Resolution
    block: str


@dataclass(frozen=True, slots=True)
class RecallRun:
    """One recall as the CLI prints it: the block and its trace."""

    block: str
    trace: RecallTrace


@dataclass(frozen=True, slots=True)
class TraceHistory:
    """The last trace and recent ones (newest first)."""

    last: RecallTrace | None
    recent: tuple[RecallTrace, ...]


class Backend:
    """Engine objects of one workspace: the two stores today; recall, instructions, scans."""

    def __init__(self, paths: EnginePaths) -> None:
        self.paths = paths
        self.memory = Memory(paths)
        self._recall: WorkspaceRecall | None = None

    @property
    def workspace_recall(self) -> WorkspaceRecall:
        """The CLI's own recall adapter: incremental index plus the trace log (S8.10)."""
        if self._recall is None:
            from context_engine.recall.source import WorkspaceRecall

            self._recall = WorkspaceRecall(self.paths, memory=self.memory)
        return self._recall

    @property
    def traces(self) -> TraceLog:
        """Where ``context-engine recall`` and ``/memory recall`` keep traces."""
        return self.workspace_recall.traces

    # -- reads ---------------------------------------------------------------------------------

    def facts(self, token: CancelToken | None = None) -> FactsSnapshot:
        """Both stores read now, as Facts-tab rows with overrides and duplicates explained."""
        snap = self.memory.snapshot()
        if token is not None:
            token.check()
        # The archive is listed by the Archive tab (on archive changes only), not per reload.
        return FactsSnapshot(build_rows(snap.facts), snap.diagnostics)

    def draft_for(self, ref: str) -> FactDraft:
        """A draft of the active fact ``ref`` with the revision and digest it was read at."""
        loaded = self.memory.load(ref)
        return FactDraft.of(loaded.fact, loaded.digest)

    def history(self, ref: str) -> History:
        """The active fact ``ref`` names and its history."""
        return History(self.memory.resolve(ref), self.memory.revisions(ref))

    def archived(self) -> tuple[ArchivedEntry, ...]:
        """Archive entries of both stores, newest first."""
        return self.memory.list_archived()

    def instructions(
        self, token: CancelToken | None = None, target: str | None = None
    ) -> InstructionsView:
        """Resolve the instructions for ``target`` (relative to the workspace root; default:
        the workspace) and render the provider block."""
        from context_engine.instructions import render_provider_block, resolve_instructions

        where = None
        if target:
            where = Path(target) if Path(target).is_absolute() else self.paths.root / target
        resolution = resolve_instructions(self.paths, where)
        return InstructionsView(resolution, render_provider_block(resolution))

    def recall(self, message: str, limit: int = 4, budget: int = 2400) -> RecallRun:
        """Run S8 recall exactly as ``context-engine recall`` does and record the trace."""
        workspace = self.workspace_recall
        workspace.refresh()  # applies only the facts that changed since the last run
        result = workspace.recaller.recall(message, limit=limit, budget=budget)
        workspace.traces.record(result.trace)
        return RecallRun(result.block, result.trace)

    def trace_history(self, token: CancelToken | None = None) -> TraceHistory:
        """The last recorded trace and the recent ones, newest first."""
        recent = tuple(reversed(self.traces.history()))
        return TraceHistory(self.traces.last(), recent)

    def suggestions(self, token: CancelToken | None = None) -> Suggestions:
        """Scan recent sessions for candidates (reads only; the scan never writes)."""
        from context_engine.suggestions import scan

        return scan(self.paths)

    # -- writes (serial writer thread only) ----------------------------------------------------

    def save(self, draft: FactDraft) -> Changes:
        """Create or update from the editor; an update checks the revision and bytes it read."""
        if draft.is_new:
            # Named by reference: created in exactly the chosen scope; a same-named fact in the
            # other scope is kept (an override pair), never archived behind the person's back.
            name = f"{draft.scope}/{slugify(draft.name or draft.title)}.md"
            return self.memory.save(
                name=name,
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

    def forget(self, fact_id: str, confirmation: ConfirmationService) -> ToolOutcome:
        """Forget through the write policy: every forget asks a person (S10.4).

        The same engine path as the agent's and the CLI's ``forget`` tool; by id, so exactly
        this identity is archived, never another scope's copy of the name.
        """
        from context_engine.policy.write_policy import Controller
        from context_engine.tools.write import run_write_tool

        return run_write_tool(
            self.memory, "forget", {"name": fact_id}, Controller("interactive"), "ask",
            confirmation,
        )

    def restore(self, fact_id: str, revision: int, expected_revision: int) -> Changes:
        """Snapshot ``revision`` becomes a new revision (S4.6)."""
        return self.memory.restore(fact_id, revision, expected_revision)

    def recover(self, archive_path: Path) -> Changes:
        """Bring an archive entry back (S4.8)."""
        return self.memory.recover(archive_path)

    def accept_skill(self, candidate: SkillCandidate) -> Path:
        """Write a skill candidate to ``<workspace>/.reasonix/skills/<name>/SKILL.md``, O_EXCL."""
        from context_engine.suggestions.accept import accept_skill

        return accept_skill(self.paths, candidate)

    def accept(self, candidate: MemoryCandidate, draft: FactDraft) -> Fact:
        """Save an (edited) memory candidate as a new fact, create-only (S11.5)."""
        from context_engine.suggestions.accept import Edits, accept_memory

        edits = Edits(
            name=draft.name or None,
            title=draft.title,
            description=draft.description,
            type=draft.type,  # type: ignore[arg-type]
            scope=draft.scope,  # type: ignore[arg-type]
            body=draft.body,
        )
        return accept_memory(self.memory, candidate, edits)
