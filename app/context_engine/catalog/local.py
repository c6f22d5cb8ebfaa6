"""``LocalCatalog``: the ``Catalog`` of one workspace read and written in this process.

It is the only place the stores are opened (``Memory``) and the only code that writes them:
``apply(op, actor)`` runs ``door.apply`` (policy → confirmation → store → ``Changes``). Reads
are one call each into the module the engine uses for the same thing: the store for facts and
archives, the one ``RecallService`` for search, recall and traces (shared with the engine's
turns and tools), the instruction resolver and the suggestion scanner. The server wraps
exactly this class. Heavy modules load on first use: hooks and the CLI start with this class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..defaults import RECALL_BUDGET as DEFAULT_BUDGET
from ..defaults import RECALL_LIMIT as DEFAULT_LIMIT
from ..facts.model import utc_now
from ..paths import EnginePaths
from .base import CAPABILITIES, CompletionKind, History, InstructionsView, LoadedFact, RecallRun
from .base import SearchHit as Hit
from .errors import Unavailable

if TYPE_CHECKING:  # the write types load with the first write (a hook turn never writes)
    from ..facts.archive import ArchivedEntry
    from ..facts.fs import FS
    from ..facts.listing import Listing
    from ..facts.memory import Memory, MemorySnapshot
    from ..facts.printed_listing import PrintedFacts
    from ..policy.confirmation import ConfirmationService
    from ..recall.service import RecallService
    from ..recall.trace import RecallTrace
    from ..suggestions.model import Suggestions
    from .ops import Actor, Op, WriteOutcome


class _Shared:
    """What every view of one catalog shares: the stores (opened on first use), the index."""

    __slots__ = ("clock", "fs", "notices", "paths", "service", "store", "through_memory",
                 "upgraded")

    def __init__(
        self,
        paths: EnginePaths,
        clock: Callable[[], datetime],
        fs: FS | None = None,
        store: Memory | None = None,
        through_memory: bool = False,
    ) -> None:
        self.paths = paths
        self.clock = clock
        self.fs = fs
        self.store = store
        self.through_memory = through_memory
        self.service: RecallService | None = None
        self.upgraded = False
        self.notices: list[str] = []

    @property
    def memory(self) -> Memory:
        """The two stores, constructed here and nowhere else."""
        if self.store is None:
            from ..facts.memory import Memory

            self.store = Memory(self.paths, clock=self.clock, fs=self.fs)
        return self.store

    @property
    def index(self) -> RecallService:
        """The one recall index service, started on first use (recall loads only then)."""
        if self.service is None:
            from ..recall.service import RecallService

            self.service = RecallService(
                self.paths, lambda: self.memory, through_memory=self.through_memory
            )
        return self.service


class LocalCatalog:
    """The catalog of one workspace and home, read and written in this process."""

    def __init__(
        self,
        paths: EnginePaths,
        *,
        confirmation: ConfirmationService | None = None,
        memory: Memory | None = None,
        without: Iterable[str] = (),
        clock: Callable[[], datetime] = utc_now,
        fs: FS | None = None,
        _shared: _Shared | None = None,
    ) -> None:
        self.paths = paths
        # An injected Memory (an FS seam in tests) is also what every read goes through.
        self._shared = _shared or _Shared(paths, clock, fs, memory, memory is not None)
        self._confirmation = confirmation
        self._capabilities = frozenset(CAPABILITIES) - frozenset(without)

    @property
    def memory(self) -> Memory:
        """The two stores (the catalog's own; read through it, write through ``apply``)."""
        return self._shared.memory

    @property
    def index(self) -> RecallService:
        """The one recall index service of this workspace."""
        return self._shared.index

    @property
    def confirmation(self) -> ConfirmationService:
        """Who answers when the policy asks a person (default: fail closed, S10.6)."""
        if self._confirmation is None:
            from ..policy.confirmation import FailClosedConfirmation

            self._confirmation = FailClosedConfirmation()
        return self._confirmation

    def confirm_with(self, confirmation: ConfirmationService) -> None:
        """Who answers from now on when the policy asks a person."""
        self._confirmation = confirmation

    def using(self, confirmation: ConfirmationService) -> LocalCatalog:
        """The same catalog (stores, index) whose confirmations ``confirmation`` answers."""
        view = LocalCatalog(self.paths, confirmation=confirmation, _shared=self._shared)
        view._capabilities = self._capabilities
        return view

    def upgrade(self) -> list[str]:
        """Upgrade both stores and retired config keys once (S5.1, S5.4); the new notices."""
        if self._shared.upgraded:
            return []
        from ..upgrade.config_key import remove_retired_config_keys

        self.memory.migrate()
        self._shared.upgraded = True
        # The retired key goes with the store upgrade (S5.4): removing it makes it one-time.
        notices = remove_retired_config_keys(self.paths)
        self._shared.notices.extend(notices)
        return notices

    def rebuild_indexes(self) -> None:
        """Rewrite both MEMORY.md files' managed lines from the fact files (S4.9)."""
        self.memory.rebuild_indexes()

    def migrate(self) -> int:
        """Upgrade legacy fact files of both stores (S5.1); how many were rewritten."""
        return self.memory.migrate()

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
        """Active facts of both stores, sorted by (name, scope, id), with diagnostics."""
        self.require("facts")
        return self.memory.snapshot()

    def listing(self) -> Listing:
        """What ``list_facts`` lists, without bodies: list fields from the derived index."""
        from ..facts.listing import list_memory

        self.require("facts")
        return list_memory(self.memory)

    def printed_facts(
        self,
        form: str,
        now: datetime,
        edges: dict[str, tuple[datetime, datetime]],
        default: tuple[datetime, datetime],
        sink: Callable[[bytes], None] | None = None,
    ) -> PrintedFacts | None:
        """``listing()``'s facts printed by the derived index (``facts/printed_listing.py``)."""
        from ..facts.printed_listing import printed_facts

        self.require("facts")
        return printed_facts(self.memory, form, now, edges, default, sink)

    def read(self, ref: str) -> LoadedFact:
        """The fact ``ref`` resolves to (``facts/refs.py``) and the digest of its bytes."""
        self.require("facts")
        loaded = self.memory.load(ref)
        return LoadedFact(loaded.fact, loaded.digest)

    def search(
        self, query: str, *, fact_type: str | None = None, scope: str | None = None, limit: int = 5
    ) -> tuple[Hit, ...]:
        """BM25 search over the live index, with the memory tool's snippets (S9.1)."""
        from ..tools.memory import search_hits

        self.require("facts")
        recaller = self.index.recaller()
        with self.index.lock:
            hits = search_hits(recaller, query, fact_type=fact_type, scope=scope, limit=limit)
        return tuple(Hit(fact, score, snippet) for fact, score, snippet in hits)

    def revisions(self, ref: str) -> History:
        """The fact ``ref`` names and its earlier revisions, newest first."""
        self.require("facts")
        from . import journal

        active = self.memory.resolve(ref)
        return History(active, self.memory.revisions(active.id),
                       journal.writers(self.paths, active.scope, active.id))

    def archived(self) -> tuple[ArchivedEntry, ...]:
        """Archive entries of both stores, newest first."""
        self.require("archive")
        return self.memory.list_archived()

    def archive_count(self) -> int:
        """How many archive entries both stores hold (counted, not parsed)."""
        from ..facts.archive import list_entries

        self.require("archive")
        return sum(len(list_entries(store.root)) for store in self.memory.stores.all())

    def instructions(self, target: str | None = None) -> InstructionsView:
        """The resolution for ``target`` (relative to the workspace root) and the block."""
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
        return self.index.trace_log().last()

    def recent_traces(self, limit: int = 20) -> tuple[RecallTrace, ...]:
        """Recorded traces, newest first."""
        self.require("recall")
        history = self.index.trace_log().history()
        return tuple(reversed(history[-limit:] if limit > 0 else []))

    def recall(
        self, message: str, *, limit: int = DEFAULT_LIMIT, budget: int = DEFAULT_BUDGET
    ) -> RecallRun:
        """S8 over the live index; the trace is recorded (best effort, S8.11)."""
        self.require("recall")
        from ..session.privacy import Scrubber  # the block as the provider would see it (S7.4)

        clean = Scrubber.for_paths(self.paths)
        result = self.index.recall(message, limit=limit, budget=budget, clean=clean)
        return RecallRun(result.block, result.trace)

    def suggestions(self) -> Suggestions:
        """Scan the 12 most recent sessions for candidates, never writing (S11.1)."""
        from ..suggestions.scanner import scan

        self.require("suggestions")
        return scan(self.paths)

    def complete(self, kind: CompletionKind, prefix: str = "") -> tuple[str, ...]:
        """Refs (ids, then names) or archive paths starting with ``prefix``."""
        from .completion import complete_archives, complete_refs

        self.require("completion")
        if kind == "archives":
            return complete_archives(self.memory.list_archived(), prefix)
        return complete_refs(self.memory.snapshot().facts, prefix)

    # -- the one write door --------------------------------------------------------------------

    def apply(self, op: Op, actor: Actor) -> WriteOutcome:
        """Policy → confirmation when asked → store → ``Changes``, as one ``WriteOutcome``."""
        from .door import apply
        from .ops import Accept

        self.require("writes")
        if isinstance(op, Accept):
            self.require("suggestions")
        outcome = apply(self.memory, self.paths, op, actor, lambda: self.confirmation)
        fact = outcome.fact
        if outcome.ran and outcome.written and fact is not None:
            from . import journal  # who wrote it, beside the index (never in the fact file)

            journal.record(self.paths, fact.scope, fact.id, fact.revision, actor)
        return outcome

    def close(self) -> None:
        """Close the index service's watch and files and the stores' index files (a host
        shutting down; the catalog still works after, reopening what it needs)."""
        shared = self._shared
        if shared.service is not None:
            shared.service.close()
        if shared.store is not None:
            shared.store.close()
