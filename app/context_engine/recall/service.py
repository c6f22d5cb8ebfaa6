"""The one recall index service of a workspace: facts read once per store state, one index.

``active_facts()`` re-reads the stores only when their listing changed (lstat identity, ctime
included, all settled before the read began), through each store's derived index
(``facts/indexed_read.StoreReader``); ``recaller()`` brings one live index up to those facts, opened
from its persisted copy in a fresh process and updated per changed fact after that — never
rebuilt per call. The engine (turns, agent tools, hooks, MCP) and the local catalog (CLI and
app search and recall) share this object.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..defaults import RECALL_BUDGET as DEFAULT_BUDGET
from ..defaults import RECALL_LIMIT as DEFAULT_LIMIT
from ..facts.model import Diagnostic, Fact
from ..paths import EnginePaths

if TYPE_CHECKING:
    from ..facts.indexed_read import StoreReader
    from ..facts.memory import Memory, MemorySnapshot
    from ..facts.stat_listing import Listing
    from .engine import Recaller, RecallResult
    from .quiet import QuietFacts
    from .trace import TraceLog


class RecallService:
    """Facts and the live recall index of one workspace, shared by every reader in process."""

    def __init__(
        self,
        paths: EnginePaths,
        memory: Callable[[], Memory],
        *,
        through_memory: bool = False,
    ) -> None:
        self.paths = paths
        self._memory = memory
        self._through_memory = through_memory  # an injected Memory (FS seam) reads too
        self._facts: tuple[Fact, ...] | None = None
        self._diagnostics: tuple[Diagnostic, ...] = ()
        self._reader: StoreReader | None = None
        self._loaded_ns = 0
        # Whether our derived files (the fact index, the persisted recall index) may be
        # created when missing: yes for hosts that record traces anyway (hooks, MCP, the
        # engine, ``recall``); a read-only command (``search``, ``prefix``) only uses what
        # exists and writes nothing on a home without them (S2.4).
        self.keep_index = False
        self._facts_lock = threading.Lock()
        self._recaller: Recaller | None = None
        self._indexed: Sequence[Fact] | None = None
        # A cold process's first read may come from the saved recall state (recall/quiet.py)
        # without reading any fact; ``quiet=False`` (tests) always reads the stores.
        self.quiet = True
        self._quiet: QuietFacts | None = None
        self.lock = threading.Lock()  # held around every use of the live index
        self.trace_error: str | None = None  # last trace write that failed (turn went on, S8.11)

    # -- facts ---------------------------------------------------------------------------------

    def active_facts(self) -> Sequence[Fact]:
        """Every active fact of both stores as they are now (one read per store state).

        The last facts are reused only while both stores list the same files with the same
        lstat identity (ctime included), all settled before that read began; otherwise they
        are read again through the persisted snapshot cache. A quiet turn therefore costs one
        directory scan and hands back the very same tuple.
        """
        if self._through_memory:
            snapshot = self._memory().snapshot()
            with self._facts_lock:
                self._facts, self._diagnostics = snapshot.facts, snapshot.diagnostics
            return snapshot.facts
        with self._facts_lock:  # tool calls and relayed hooks arrive on worker threads
            scanned = self._first_scan()
            quiet = self._quiet_facts(scanned)
            if quiet is not None:
                return quiet
            return self._read_stores(scanned)

    def _first_scan(self) -> tuple[tuple[Listing, Listing], int] | None:
        """A process's first read: the listings, scanned once for the quiet check and the read."""
        if not (self.quiet and self._reader is None and self._quiet is None):
            return None
        from ..facts.stat_listing import scan_listings

        started = time.time_ns()  # before the scan: every lstat and read comes after it
        return scan_listings(self.paths), started

    def _quiet_facts(
        self, scanned: tuple[tuple[Listing, Listing], int] | None = None
    ) -> QuietFacts | None:
        """The saved state's facts while the stores still list what it was saved under."""
        if self._quiet is not None:
            if self._quiet.unchanged(self.paths):
                return self._quiet
            self._quiet = None  # something moved: from now on the stores are read
            return None
        if not (self.quiet and self._reader is None):
            return None
        self.quiet = False  # one try per process: after that, the stores are read
        from .quiet import open_quiet

        self._quiet = open_quiet(
            self.paths, self._materialize, may_write=self.keep_index, scanned=scanned
        )
        return self._quiet

    def _materialize(self) -> Sequence[Fact]:
        """Every fact, read from the stores (a quiet view asked for all of them)."""
        with self._facts_lock:
            return self._read_stores()

    def _read_stores(
        self, scanned: tuple[tuple[Listing, Listing], int] | None = None
    ) -> Sequence[Fact]:
        """Both stores through their derived indexes (lock held)."""
        from ..facts.indexed_read import StoreReader

        if self._reader is None:
            self._reader = StoreReader(self.paths, keep_index=self.keep_index)
        facts, diagnostics, loaded_ns = self._reader.read(scanned)
        self._facts, self._diagnostics, self._loaded_ns = facts, diagnostics, loaded_ns
        return facts

    def snapshot(self) -> MemorySnapshot:
        """``active_facts()`` with the diagnostics of the same read, sorted as S4.10 says."""
        from ..facts.memory import MemorySnapshot

        with self._facts_lock:
            facts = self._read_stores()  # every fact and its diagnostics, never a quiet view
            diagnostics = self._diagnostics if facts is self._facts else ()
        ordered = tuple(sorted(facts, key=lambda f: (f.name, f.scope, f.id)))
        return MemorySnapshot(ordered, tuple(diagnostics))

    # -- the index -----------------------------------------------------------------------------

    def recaller(self, facts: Sequence[Fact] | None = None) -> Recaller:
        """The live recall index, brought up to ``facts`` (default: read now)."""
        current = self.active_facts() if facts is None else facts
        quiet = self._quiet
        if quiet is not None and current is quiet:
            return quiet.recaller  # the saved index, as the stores still vouch for it
        # Unreadable files of that snapshot are reported in the trace (S8.11).
        diagnostics = self._diagnostics if current is self._facts else ()
        with self.lock:
            if self._recaller is None:
                self._recaller = self._first_recaller(current, diagnostics)
            elif current is not self._indexed:  # the very same snapshot needs no diff
                self._recaller.sync(current, diagnostics)
            self._indexed = current
            return self._recaller

    def _first_recaller(
        self, current: Sequence[Fact], diagnostics: Sequence[Diagnostic]
    ) -> Recaller:
        """The index from the persisted copy when the facts came from the stores' files.

        Only facts this service read itself have a known lstat identity; any other fact list
        (an injected ``Memory``, facts handed in by the host) is indexed from scratch.
        """
        from ..facts.derived_index import RACY_NS
        from .engine import Recaller
        from .persist import RecallCache, recall_cache_path

        with self._facts_lock:  # the reader, facts and read time of one and the same read
            reader, facts, loaded_ns = self._reader, self._facts, self._loaded_ns
        if reader is None or current is not facts or not reader.keep_index:
            return Recaller(current, diagnostics=diagnostics)
        from .quiet import quiet_marks, quiet_meta

        known = reader.identities()
        cache = RecallCache(recall_cache_path(self.paths))
        quiet = quiet_meta(self.paths, current, diagnostics, reader.listing(), loaded_ns)
        return cache.open(
            current,
            diagnostics,
            identity_of=lambda fact: known.get(id(fact)),
            settled_before=loaded_ns - RACY_NS,
            quiet=quiet,
            quiet_more=lambda: quiet_marks(current),
        )

    def recall(
        self,
        message: str,
        facts: Sequence[Fact] | None = None,
        *,
        limit: int = DEFAULT_LIMIT,
        budget: int = DEFAULT_BUDGET,
        clean: Callable[[str], str] | None = None,
    ) -> RecallResult:
        """S8 over ``facts`` (default: read now); the trace is recorded, best effort (S8.11).

        ``clean`` scrubs local paths from titles and snippets before the block escapes (S7.4).
        """
        if facts is None and self._reader is None:
            self.keep_index = True  # this records a trace: our derived files may be made too
        recaller = self.recaller(facts)
        with self.lock:
            result = recaller.recall(message, limit=limit, budget=budget, clean=clean)
        try:
            self.trace_log().record(result.trace)
        except OSError as exc:  # a read-only or full state dir must not fail the turn (S8.11)
            self.trace_error = f"recall trace not recorded: {exc.strerror or exc}"
            sys.stderr.write(f"context-engine: {self.trace_error}\n")
        return result

    def trace_log(self) -> TraceLog:
        """The workspace's recall traces, where ``recall`` and ``/memory recall`` keep them."""
        from .trace import TraceLog

        stores = (self.paths.project_store, self.paths.global_store)
        return TraceLog(self.paths.workspace_data / "recall", stores=stores)
