"""``LocalCatalog``: the ``Catalog`` interface over the in-process engine, no logic of its own.

Each method is one call into the module the CLI uses for the same command: ``Memory`` for
facts and archives, ``WorkspaceRecall`` for search, recall and traces, the instruction resolver,
the suggestion scanner and ``accept``, and ``run_write_tool`` for ``save``/``forget`` (the S10
policy with this catalog's confirmation service). The server wraps exactly this class.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..facts.archive import ArchivedEntry
from ..facts.changes import Changes
from ..facts.memory import Memory, MemorySnapshot
from ..paths import EnginePaths
from ..policy.confirmation import ConfirmationService, FailClosedConfirmation
from ..policy.write_policy import Controller
from .base import (
    CAPABILITIES,
    Accepted,
    CompletionKind,
    History,
    InstructionsView,
    LoadedFact,
    RecallRun,
    SearchHit,
    WriteOutcome,
)
from .completion import complete_archives, complete_refs
from .errors import Unavailable

if TYPE_CHECKING:
    # Recall (numpy), suggestions and the agent tools load only in the methods that use them,
    # so a command that lists or reads facts starts without them (S12 start-up).
    from ..recall.source import WorkspaceRecall
    from ..recall.trace import RecallTrace
    from ..suggestions.accept import Edits
    from ..suggestions.model import Suggestions
    from ..tools.write import ToolOutcome

EXPLICIT_REASON = "a person's own action is the confirmation (S10.5)"


class LocalCatalog:
    """The catalog of one workspace and home, read and written in this process."""

    def __init__(
        self,
        paths: EnginePaths,
        *,
        confirmation: ConfirmationService | None = None,
        memory: Memory | None = None,
        without: Iterable[str] = (),
    ) -> None:
        self.paths = paths
        self.memory = memory or Memory(paths)
        self.confirmation: ConfirmationService = confirmation or FailClosedConfirmation()
        self._recall: WorkspaceRecall | None = None
        self._capabilities = frozenset(CAPABILITIES) - frozenset(without)

    @property
    def _workspace(self) -> WorkspaceRecall:
        """Search, recall and traces of this workspace, built on first use."""
        if self._recall is None:
            from ..recall.source import WorkspaceRecall

            self._recall = WorkspaceRecall(self.paths, self.memory)
        return self._recall

    @property
    def name(self) -> str:
        """``local``."""
        return "local"

    def capabilities(self) -> frozenset[str]:
        """Every capability, less those switched off with ``without``."""
        return self._capabilities

    def require(self, capability: str) -> None:
        """Raise ``Unavailable`` unless ``capability`` is offered."""
        if capability not in self._capabilities:
            raise Unavailable(capability)

    # -- reads ---------------------------------------------------------------------------------

    def list_facts(self) -> MemorySnapshot:
        """``Memory.snapshot()``."""
        self.require("facts")
        return self.memory.snapshot()

    def read(self, ref: str) -> LoadedFact:
        """``Memory.load(ref)``: the fact and the digest of its bytes."""
        self.require("facts")
        loaded = self.memory.load(ref)
        return LoadedFact(loaded.fact, loaded.digest)

    def search(
        self, query: str, *, fact_type: str | None = None, scope: str | None = None, limit: int = 5
    ) -> tuple[SearchHit, ...]:
        """``Recaller.search`` over a refreshed index, with the memory tool's snippets."""
        from ..recall.snippet import make_snippet
        from ..recall.tokenize import tokens
        from ..tools.memory import TOOL_SNIPPET

        self.require("facts")
        self._workspace.refresh()
        hits = self._workspace.recaller.search(
            query, fact_type=fact_type, scope=scope, limit=max(1, min(limit, 20))
        )
        terms = list(dict.fromkeys(tokens(query)))
        return tuple(
            SearchHit(
                h.fact,
                h.score,
                make_snippet(
                    "\n".join(p for p in (h.fact.description, h.fact.body) if p.strip()),
                    query,
                    terms,
                    TOOL_SNIPPET,
                ),
            )
            for h in hits
        )

    def revisions(self, ref: str) -> History:
        """``Memory.resolve`` then ``Memory.revisions`` by id."""
        self.require("facts")
        active = self.memory.resolve(ref)
        return History(active, self.memory.revisions(active.id))

    def archived(self) -> tuple[ArchivedEntry, ...]:
        """``Memory.list_archived()``."""
        self.require("archive")
        return self.memory.list_archived()

    def instructions(self, target: str | None = None) -> InstructionsView:
        """``resolve_instructions`` for ``target`` (relative to the workspace root), the block."""
        from ..instructions import render_provider_block, resolve_instructions

        self.require("instructions")
        where = None
        if target:  # a client's cwd means nothing here: relative targets start at the root
            where = Path(target) if Path(target).is_absolute() else self.paths.root / target
        resolution = resolve_instructions(self.paths, where)
        return InstructionsView(resolution, render_provider_block(resolution))

    def last_trace(self) -> RecallTrace | None:
        """The workspace's last recorded trace."""
        self.require("recall")
        return self._workspace.traces.last()

    def recent_traces(self, limit: int = 20) -> tuple[RecallTrace, ...]:
        """Recorded traces, newest first."""
        self.require("recall")
        history = self._workspace.traces.history()
        return tuple(reversed(history[-limit:] if limit > 0 else []))

    def recall(self, message: str, *, limit: int = 4, budget: int = 2400) -> RecallRun:
        """S8 over a refreshed index; the trace is recorded like ``context-engine recall``."""
        self.require("recall")
        self._workspace.refresh()
        result = self._workspace.recaller.recall(message, limit=limit, budget=budget)
        self._workspace.traces.record(result.trace)
        return RecallRun(result.block, result.trace)

    def suggestions(self) -> Suggestions:
        """``scan(paths)``: the 12 most recent sessions, never writing."""
        from ..suggestions.scanner import scan

        self.require("suggestions")
        return scan(self.paths)

    def accept(self, candidate_id: str, edits: Edits | None = None) -> Accepted:
        """Accept a candidate of a fresh scan: a fact, or a project SKILL.md (S11.5)."""
        from ..suggestions.accept import Edits, accept_memory, accept_skill, find_candidate
        from ..suggestions.model import MemoryCandidate
        from ..suggestions.scanner import scan

        self.require("suggestions")
        self.require("writes")
        candidate = find_candidate(scan(self.paths), candidate_id)
        edits = edits or Edits()
        if isinstance(candidate, MemoryCandidate):
            return Accepted(fact=accept_memory(self.memory, candidate, edits))
        return Accepted(path=str(accept_skill(self.paths, candidate, edits)))

    def complete(self, kind: CompletionKind, prefix: str = "") -> tuple[str, ...]:
        """Refs (ids, then names) or archive paths starting with ``prefix``."""
        self.require("completion")
        if kind == "archives":
            return complete_archives(self.memory.list_archived(), prefix)
        return complete_refs(self.memory.snapshot().facts, prefix)

    # -- writes --------------------------------------------------------------------------------

    def save(self, args: Mapping[str, object]) -> WriteOutcome:
        """The ``remember`` tool as an interactive controller in ``ask`` mode (S10)."""
        self.require("writes")
        return _from_tool(self._tool("remember", args))

    def forget(self, ref: str) -> WriteOutcome:
        """The ``forget`` tool: every forget asks this catalog's confirmation service."""
        self.require("writes")
        return _from_tool(self._tool("forget", {"name": ref}))

    def restore(
        self, ref: str, revision: int, expected_revision: int | None = None
    ) -> WriteOutcome:
        """``Memory.restore`` (S4.6)."""
        self.require("writes")
        changes = self.memory.restore(ref, revision, expected_revision=expected_revision)
        verb = "Restored" if changes.changed else "Already at"
        return _explicit(changes, verb)

    def recover(self, archive_path: str) -> WriteOutcome:
        """``Memory.recover`` (S4.8)."""
        self.require("writes")
        return _explicit(self.memory.recover(archive_path), "Recovered")

    def close(self) -> None:
        """Nothing to release in process."""

    def _tool(self, tool: str, args: Mapping[str, object]) -> ToolOutcome:
        from ..tools.write import run_write_tool

        who = Controller("interactive")
        return run_write_tool(self.memory, tool, args, who, "ask", self.confirmation)


def _from_tool(outcome: ToolOutcome) -> WriteOutcome:
    changes = outcome.changes
    return WriteOutcome(
        decision=outcome.decision,
        reason=outcome.reason,
        written=outcome.written,
        result=outcome.result,
        fact=changes.fact if changes is not None else None,
        archived=tuple(str(p) for p in changes.archived) if changes is not None else (),
        ran=outcome.ran,
    )


def _explicit(changes: Changes, verb: str) -> WriteOutcome:
    fact = changes.fact
    what = f" {fact.reference} (revision {fact.revision})" if fact is not None else ""
    return WriteOutcome(
        decision="explicit",
        reason=EXPLICIT_REASON,
        written=changes.changed,
        result=f"{verb}{what}.",
        fact=fact,
        archived=tuple(str(p) for p in changes.archived),
        warnings=tuple(changes.warnings),
    )
