"""The app's backend over a ``Catalog``: what a remote workspace's window talks to (S13.6).

Same methods and return types as :class:`Backend`, so every presenter works unchanged; the data
comes only from the catalog (for a remote workspace, the server), never from this machine's
store, sessions or instruction files. A missing capability becomes the view's own
"unavailable" state (Suggestions) or a clear error; a dropped connection raises
``Disconnected`` into the views' failure paths. Writes go through the catalog's write policy,
whose confirmations reach this app's dialog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from context_engine.catalog.base import Catalog, CompletionKind, WriteOutcome
from context_engine.catalog.errors import Unavailable
from context_engine.errors import ModifiedExternally, PolicyRefused, RevisionConflict
from context_engine.facts.archive import ArchivedEntry
from context_engine.facts.changes import Changes
from context_engine.facts.model import Fact
from context_engine.policy.confirmation import ConfirmationService
from context_engine.suggestions.accept import Edits
from context_engine.suggestions.model import MemoryCandidate, SkillCandidate, Suggestions

from ..dialogs.fact_editor import FactDraft
from .backend import History, InstructionsView, RecallRun, TraceHistory
from .fact_rows import FactsSnapshot, build_rows
from .tasks import CancelToken


def _changes(outcome: WriteOutcome) -> Changes:
    """The engine's ``Changes`` shape the presenters publish, from a catalog outcome."""
    if not outcome.ran:
        raise PolicyRefused(outcome.result)
    return Changes(fact=outcome.fact, archived=tuple(Path(p) for p in outcome.archived))


class ForgetOutcome:
    """What ``WriteFlows.forget`` reads: ``written``, ``changes``, ``result``, ``decision``."""

    def __init__(self, outcome: WriteOutcome) -> None:
        self.decision = outcome.decision
        self.reason = outcome.reason
        self.written = outcome.written
        self.result = outcome.result
        self.ran = outcome.ran
        self.changes = Changes(archived=tuple(Path(p) for p in outcome.archived))


class CatalogBackend:
    """A :class:`Backend` twin reading and writing only through ``catalog``."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    @property
    def name(self) -> str:
        """The catalog's display name (the remote's ``host:root``)."""
        return self.catalog.name

    # -- reads ---------------------------------------------------------------------------------

    def facts(self, token: CancelToken | None = None) -> FactsSnapshot:
        """Both stores' facts as rows, plus the archive count."""
        snap = self.catalog.list_facts()
        if token is not None:
            token.check()
        try:
            archived = len(self.catalog.archived())
        except Unavailable:
            archived = 0
        return FactsSnapshot(build_rows(snap.facts), snap.diagnostics, archived)

    def draft_for(self, ref: str) -> FactDraft:
        """A draft of the active fact with the revision and digest it was read at."""
        loaded = self.catalog.read(ref)
        return FactDraft.of(loaded.fact, loaded.digest)

    def history(self, ref: str) -> History:
        """The active fact and its revisions."""
        found = self.catalog.revisions(ref)
        return History(found.active, found.revisions)

    def archived(self) -> tuple[ArchivedEntry, ...]:
        """Archive entries, newest first."""
        return self.catalog.archived()

    def instructions(
        self, token: CancelToken | None = None, target: str | None = None
    ) -> InstructionsView:
        """The resolution for ``target`` (relative to the workspace root there) and the block."""
        view = self.catalog.instructions(target or None)
        return InstructionsView(view.resolution, view.block)

    def recall(self, message: str, limit: int = 4, budget: int = 2400) -> RecallRun:
        """Recall on the catalog's side; the trace is recorded there."""
        run = self.catalog.recall(message, limit=limit, budget=budget)
        return RecallRun(run.block, run.trace)

    def trace_history(self, token: CancelToken | None = None) -> TraceHistory:
        """The last and recent traces, newest first."""
        return TraceHistory(self.catalog.last_trace(), self.catalog.recent_traces())

    def suggestions(self, token: CancelToken | None = None) -> Suggestions:
        """The catalog's scan; without the capability the tab says unavailable (S11.6)."""
        try:
            return self.catalog.suggestions()
        except Unavailable:
            return Suggestions(available=False)

    def complete(self, kind: CompletionKind, prefix: str = "") -> tuple[str, ...]:
        """Completion candidates from the catalog (the CLI's ``complete``)."""
        return self.catalog.complete(kind, prefix)

    # -- writes --------------------------------------------------------------------------------

    def save(self, draft: FactDraft) -> Changes:
        """Create or update through the catalog's write policy (confirmed by a person)."""
        args: dict[str, Any] = {
            "title": draft.title,
            "description": draft.description,
            "body": draft.body,
            "type": draft.type,
            "scope": draft.scope,
        }
        if draft.is_new:
            args["name"] = draft.name or draft.title
        else:
            self._check_unchanged(draft)
            args["id"] = draft.id
            args["expected_revision"] = draft.base_revision
        return _changes(self.catalog.save({k: v for k, v in args.items() if v is not None}))

    def _check_unchanged(self, draft: FactDraft) -> None:
        """Raise what the local store would, so a stale edit opens the conflict dialog.

        The policy path reports a conflict as a refused outcome; asking first gives the app
        the exception it handles (the server still checks the revision when it writes).
        """
        current = self.catalog.read(str(draft.id))
        found = current.fact.revision
        if draft.base_revision is not None and found != draft.base_revision:
            raise RevisionConflict(draft.base_revision, found)
        if draft.digest is not None and current.digest != draft.digest:
            raise ModifiedExternally("the fact changed on the remote workspace since it was read")

    def forget(self, fact_id: str, confirmation: ConfirmationService) -> ForgetOutcome:
        """Forget by id through the policy; the catalog's confirmation asks the person."""
        return ForgetOutcome(self.catalog.forget(fact_id))

    def restore(self, fact_id: str, revision: int, expected_revision: int) -> Changes:
        """Restore an earlier revision (the person's click is the confirmation)."""
        return _changes(self.catalog.restore(fact_id, revision, expected_revision))

    def recover(self, archive_path: Path | str) -> Changes:
        """Recover an archive entry by its (server) path."""
        return _changes(self.catalog.recover(str(archive_path)))

    def accept_skill(self, candidate: SkillCandidate) -> Path:
        """Write a skill candidate on the catalog's side (never over an existing skill)."""
        accepted = self.catalog.accept(candidate.id)
        if accepted.path is None:
            raise PolicyRefused("the suggestion was not written as a skill")
        return Path(accepted.path)

    def accept(self, candidate: MemoryCandidate, draft: FactDraft) -> Fact:
        """Accept a memory candidate, edited, on the catalog's side."""
        edits = Edits(
            name=draft.name or None,
            title=draft.title,
            description=draft.description,
            type=draft.type,  # type: ignore[arg-type]
            scope=draft.scope,  # type: ignore[arg-type]
            body=draft.body,
        )
        accepted = self.catalog.accept(candidate.id, edits)
        if accepted.fact is None:
            raise PolicyRefused("the suggestion was not saved as a fact")
        return accepted.fact
