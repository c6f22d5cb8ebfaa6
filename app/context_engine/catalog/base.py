"""One catalog interface over a workspace's context, local or remote (issue 8, S11.6, S13.6).

The CLI, the app, the MCP server, hooks and ``serve`` talk to a ``Catalog``; ``LocalCatalog``
is the in-process one (and the only code that writes), ``RemoteCatalog`` asks a
``context-engine serve --stdio`` process, whose server calls the same ``LocalCatalog.apply``.
Every write is ``apply(op, actor)`` (``ops.py``). Every value here is plain,
immutable and made of engine types (``Fact``, ``ArchivedEntry``, ``RecallTrace``,
``Resolution``, ``Suggestions``), so both implementations return equal values for equal stores.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

from ..defaults import RECALL_BUDGET as DEFAULT_BUDGET
from ..defaults import RECALL_LIMIT as DEFAULT_LIMIT

if TYPE_CHECKING:  # the CLI imports this module on every start: keep it free of heavy parts
    from ..facts.archive import ArchivedEntry
    from ..facts.memory import MemorySnapshot
    from ..facts.model import Fact
    from ..instructions import Resolution
    from ..policy.confirmation import ConfirmationService
    from ..recall.trace import RecallTrace
    from ..suggestions.model import Suggestions
    from .ops import Actor, Op, WriteOutcome

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


class LoadedFact(NamedTuple):
    """An active fact with the sha256 of the bytes read (``save`` checks it, RELIABILITY C6)."""

    fact: Fact
    digest: str


class SearchHit(NamedTuple):
    """One BM25 search result (S9.1): the fact, its score and a snippet."""

    fact: Fact
    score: float
    snippet: str


class History(NamedTuple):
    """The active fact and its earlier revisions, newest first, active excluded."""

    active: Fact
    revisions: tuple[Fact, ...]
    # revision → who wrote it through the door (catalog/journal.py), where known
    writers: Mapping[int, str] = MappingProxyType({})


class InstructionsView(NamedTuple):
    """A resolution (documents, imports, diagnostics) and the exact provider block."""

    resolution: Resolution
    block: str


class RecallRun(NamedTuple):
    """One recall: the provider block and its (recorded) trace."""

    block: str
    trace: RecallTrace


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

    def recall(
        self, message: str, *, limit: int = DEFAULT_LIMIT, budget: int = DEFAULT_BUDGET
    ) -> RecallRun:
        """Run S8 recall on ``message`` and record the trace."""
        ...

    def suggestions(self) -> Suggestions:
        """Scan the workspace's recent sessions for candidates (never writes)."""
        ...

    def apply(self, op: Op, actor: Actor) -> WriteOutcome:
        """The one write door: policy → confirmation when asked → store → ``Changes``."""
        ...

    def complete(self, kind: CompletionKind, prefix: str = "") -> tuple[str, ...]:
        """Completion candidates: refs (ids, then names) or archive paths."""
        ...

    def confirm_with(self, confirmation: ConfirmationService) -> None:
        """Who answers from now on when the policy asks a person (a window's dialog)."""
        ...

    def close(self) -> None:
        """Release the catalog's resources (a remote closes its connection)."""
        ...
