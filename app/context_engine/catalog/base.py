"""One catalog interface over a workspace's context, local or remote (issue 8, S11.6, S13.6).

The CLI and the app talk to a ``Catalog``; ``LocalCatalog`` wraps the in-process engine and
``RemoteCatalog`` asks a ``context-engine serve --stdio`` process. Every value here is plain,
immutable and made of engine types (``Fact``, ``ArchivedEntry``, ``RecallTrace``,
``Resolution``, ``Suggestions``), so both implementations return equal values for equal stores.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:  # the CLI imports this module on every start: keep it free of heavy parts
    from ..facts.archive import ArchivedEntry
    from ..facts.memory import MemorySnapshot
    from ..facts.model import Fact
    from ..instructions import Resolution
    from ..recall.trace import RecallTrace
    from ..suggestions.accept import Edits
    from ..suggestions.model import Suggestions

# What a catalog can do; a server may be started without some (``--without``).
FACTS = "facts"
ARCHIVE = "archive"
INSTRUCTIONS = "instructions"
RECALL = "recall"
SUGGESTIONS = "suggestions"
WRITES = "writes"
COMPLETION = "completion"
WATCH = "watch"
CAPABILITIES: tuple[str, ...] = (
    FACTS,
    ARCHIVE,
    INSTRUCTIONS,
    RECALL,
    SUGGESTIONS,
    WRITES,
    COMPLETION,
    WATCH,
)

CompletionKind = Literal["refs", "archives"]
COMPLETION_KINDS: tuple[CompletionKind, ...] = ("refs", "archives")
WriteDecision = Literal["auto", "confirm", "denied", "explicit"]


@dataclass(frozen=True, slots=True)
class LoadedFact:
    """An active fact with the sha256 of the bytes read (``save`` checks it, RELIABILITY C6)."""

    fact: Fact
    digest: str


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One BM25 search result (S9.1): the fact, its score and a snippet."""

    fact: Fact
    score: float
    snippet: str


@dataclass(frozen=True, slots=True)
class History:
    """The active fact and its earlier revisions, newest first, active excluded."""

    active: Fact
    revisions: tuple[Fact, ...]


@dataclass(frozen=True, slots=True)
class InstructionsView:
    """A resolution (documents, imports, diagnostics) and the exact provider block."""

    resolution: Resolution
    block: str


@dataclass(frozen=True, slots=True)
class RecallRun:
    """One recall: the provider block and its (recorded) trace."""

    block: str
    trace: RecallTrace


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """What one write did: the policy's decision, whether it wrote, the fact and archives.

    ``explicit`` is a person's own restore or recover (S10.5: the action is the confirmation).
    ``ran`` is False when the operation was refused or failed (CLI exit 1). ``warnings`` are
    what ``Changes.warnings`` reported in process; they are not sent over the wire.
    """

    decision: WriteDecision
    reason: str
    written: bool
    result: str
    fact: Fact | None = None
    archived: tuple[str, ...] = ()
    ran: bool = True
    warnings: tuple[str, ...] = ()  # post-commit problems (a MEMORY.md not rewritten), local only


@dataclass(frozen=True, slots=True)
class Accepted:
    """An accepted suggestion: the saved fact, or the path of the new SKILL.md."""

    fact: Fact | None = None
    path: str | None = None


class Catalog(Protocol):
    """Everything the CLI and the app read and write for one workspace."""

    @property
    def name(self) -> str:
        """What the title and status bar show: ``local`` or the remote's name."""
        ...

    def capabilities(self) -> frozenset[str]:
        """The capabilities this catalog offers now (a subset of ``CAPABILITIES``)."""
        ...

    def list_facts(self) -> MemorySnapshot:
        """Active facts of both stores, sorted by (name, scope, id), with file diagnostics."""
        ...

    def read(self, ref: str) -> LoadedFact:
        """The active fact an id, reference or bare name resolves to."""
        ...

    def search(
        self, query: str, *, fact_type: str | None = None, scope: str | None = None, limit: int = 5
    ) -> tuple[SearchHit, ...]:
        """BM25 search over both stores, as the memory tool sees it."""
        ...

    def revisions(self, ref: str) -> History:
        """The fact ``ref`` names and its history."""
        ...

    def archived(self) -> tuple[ArchivedEntry, ...]:
        """Archive entries of both stores, newest first."""
        ...

    def instructions(self, target: str | None = None) -> InstructionsView:
        """The instruction resolution for the workspace (or ``target``) with diagnostics."""
        ...

    def last_trace(self) -> RecallTrace | None:
        """The last recorded recall trace, ``None`` before the first recall."""
        ...

    def recent_traces(self, limit: int = 20) -> tuple[RecallTrace, ...]:
        """Recent recall traces, newest first."""
        ...

    def recall(self, message: str, *, limit: int = 4, budget: int = 2400) -> RecallRun:
        """Run S8 recall on ``message`` and record the trace."""
        ...

    def suggestions(self) -> Suggestions:
        """Scan the workspace's recent sessions for candidates (never writes)."""
        ...

    def accept(self, candidate_id: str, edits: Edits | None = None) -> Accepted:
        """Accept one candidate of a fresh scan (an explicit user action, S11.5)."""
        ...

    def save(self, args: Mapping[str, object]) -> WriteOutcome:
        """``remember`` through the write policy; a person confirms what it requires (S10)."""
        ...

    def forget(self, ref: str) -> WriteOutcome:
        """``forget`` through the write policy: every forget asks a person (S10.4)."""
        ...

    def restore(
        self, ref: str, revision: int, expected_revision: int | None = None
    ) -> WriteOutcome:
        """Make an earlier revision the newest one (a person's own action, S10.5)."""
        ...

    def recover(self, archive_path: str) -> WriteOutcome:
        """Bring an archive entry back at a new revision (a person's own action, S10.5)."""
        ...

    def complete(self, kind: CompletionKind, prefix: str = "") -> tuple[str, ...]:
        """Completion candidates: refs (ids, then names) or archive paths."""
        ...

    def close(self) -> None:
        """Release the catalog's resources (a remote closes its connection)."""
        ...
