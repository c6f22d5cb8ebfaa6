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
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..defaults import RECALL_BUDGET as DEFAULT_BUDGET
from ..defaults import RECALL_LIMIT as DEFAULT_LIMIT
from ..facts.model import Diagnostic, Fact, Scope
from ..paths import EnginePaths

if TYPE_CHECKING:
    from ..facts.indexed_read import StoreReader
    from ..facts.memory import Memory, MemorySnapshot
    from ..facts.probe import Probe
    from ..facts.stat_listing import Listing
    from ..facts.store import Store
    from .engine import Recaller, RecallResult
    from .live import LiveStores
    from .quiet import QuietFacts
    from .saved_live import SavedLive
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
        self._probe: Probe | None = None  # the first read's listings (and monitor token)
        self._saved_live: SavedLive | None = None  # a watched host's changes on that state
        self.lock = threading.Lock()  # held around every use of the live index
        # A long-lived host (MCP server, ``serve``, an engine embedded in an agent) sets this
        # before its first read: the stores are then watched (recall/live.py) and a turn
        # re-reads only what the kernel says changed; elsewhere, or if watching fails, every
        # read checks the listings as before.
        self.watch_changes = False
        self._live: LiveStores | None = None
        self._watch_failed = False
        self._current: Sequence[Fact] | None = None  # what the last watched read handed out
        self._current_diagnostics: tuple[Diagnostic, ...] = ()
        self._current_read: tuple[Fact, ...] | None = None  # the full read ``_current`` wraps
        self._trace_log: TraceLog | None = None
        self.watch_stats: dict[str, int] = {"quiet": 0, "applied": 0, "rescans": 0}
        self.last_rescan: str | None = None
        self.trace_error: str | None = None  # last trace write that failed (turn went on, S8.11)
        # Called once, when the first read finds no saved state vouching for the stores and is
        # about to read them; it may raise to stop (a hook's budget, hooks/budget.py).
        self.cold_check: Callable[[], None] | None = None

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
            if self.watch_changes and not self._watch_failed:
                return self._watched_facts()
            return self._unwatched_facts()

    def _unwatched_facts(self) -> Sequence[Fact]:
        """Today's read: the saved state while the listings vouch for it, else the stores."""
        probe = self._first_probe()
        quiet = self._quiet_facts(probe)
        if quiet is not None:
            return quiet
        check, self.cold_check = self.cold_check, None
        if check is not None:
            check()  # a budgeted hook: may raise instead of building everything (hooks/budget.py)
        return self._read_stores(None if probe is None else probe.scanned())

    def _watched_facts(self) -> Sequence[Fact]:
        """The facts of a watched host: the last ones while the kernel reports nothing."""
        live = self._live
        if live is None:
            from .live import LiveStores

            # Armed before the first scan: whatever changes after it is queued.
            live = self._live = LiveStores.start(self.paths, self._stores)
            if live is None:
                self._watch_failed = True
                return self._unwatched_facts()
        elif self._current is not None:
            changed = live.poll()
            if live.broken:
                self._stop_watching()
                return self._unwatched_facts()
            if changed is None:
                self.watch_stats["quiet"] += 1
                return self._current
            if isinstance(changed, str):
                self.watch_stats["rescans"] += 1
                self.last_rescan = changed
                sys.stderr.write(f"context-engine: reading the stores again ({changed})\n")
            elif live.based:
                applied = self._apply_changes(live, changed)
                if applied is not None:
                    self.watch_stats["applied"] += 1
                    return applied
            elif self._quiet is not None and self._current is self._quiet:
                on_state = self._apply_to_state(changed)
                if on_state is not None:
                    self.watch_stats["applied"] += 1
                    return on_state
            self._quiet = self._saved_live = None  # the saved state no longer vouches
        facts = self._unwatched_facts()
        self._current, self._current_diagnostics, self._current_read = facts, (), None
        if facts is self._facts and self._facts is not None:  # a full read: the entries now
            self._current_diagnostics = tuple(self._diagnostics)
            if live.rebase(facts, self._diagnostics):
                view = live.view(self._facts)
                if view is not None:
                    self._current, self._current_read = view, self._facts
        return self._current

    def _apply_changes(
        self, live: LiveStores, changed: set[tuple[Scope, str]]
    ) -> Sequence[Fact] | None:
        """Only the changed entries read again; the live index updated per changed fact.

        ``None`` while two files hold one id or reference: their order (and so which one
        recall keeps) is the directory's, which only a full read knows.
        """
        previous = self._current
        applied = live.apply(changed)
        if not applied.exact:
            return None
        # ``self.lock`` only once the index exists: its first build takes the locks the other
        # way round (``recaller`` → ``_first_recaller``); a turn then diffs in full, once.
        if self._recaller is not None:
            with self.lock:
                recaller = self._recaller
                if self._indexed is previous and previous is not None:
                    recaller.apply(applied.upserts, applied.removals, applied.diagnostics)
                    self._indexed = applied.facts
        self._current, self._current_read = applied.facts, None
        self._current_diagnostics = applied.diagnostics
        return applied.facts

    def _apply_to_state(self, changed: set[tuple[Scope, str]]) -> Sequence[Fact] | None:
        """The named files applied to the saved state a host opened on (recall/saved_live.py):
        its first change costs what later ones do, no fact of the stores read in full.

        ``None`` (duplicates, too many files): the caller reads the stores as before.
        """
        quiet = self._quiet
        assert quiet is not None
        saved = self._saved_live
        if saved is None or saved.base.reader is not quiet.reader:
            from .saved_live import SavedLive

            saved = self._saved_live = SavedLive(self.paths, quiet)
        # The index is the saved state's: no other reader holds it while this one changes it.
        with self.lock:
            view = saved.apply(changed)
        if view is None:
            return None
        self._quiet = self._current = view
        self._current_diagnostics, self._current_read = saved.diagnostics, None
        return view

    def _stores(self) -> tuple[Store, ...]:
        """Both stores of the reader (for reading one entry again)."""
        from ..facts.indexed_read import StoreReader

        if self._reader is None:
            self._reader = StoreReader(self.paths, keep_index=self.keep_index)
        return tuple(self._reader.memory().stores.all())

    def _stop_watching(self) -> None:
        """Back to a listing check per read (a watch could not be set again)."""
        if self._live is not None:
            self._live.close()
        self._live, self._current, self._watch_failed = None, None, True

    def close(self) -> None:
        """Release the watch and every file this service holds open (a host shutting down).

        Reads after this still work: they check the listings and reopen what they need.
        """
        with self._facts_lock:
            self._stop_watching()
            quiet, self._quiet = self._quiet, None
            if quiet is not None:
                quiet.reader.close()
            if self._reader is not None:
                self._reader.close()

    def _first_probe(self) -> Probe | None:
        """A process's first read: the listings, taken once for the quiet check and the read
        (through the store monitor when it can vouch for them, facts/probe.py)."""
        if not (self.quiet and self._reader is None and self._quiet is None):
            return None
        from ..facts.probe import Probe

        self._probe = Probe(self.paths)
        return self._probe

    def _quiet_facts(self, scanned: Probe | None = None) -> QuietFacts | None:
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
        if current is self._current and current is not self._facts:
            diagnostics = self._current_diagnostics  # the watched facts' own
        with self.lock:
            if self._recaller is None:
                read = self._current_read if current is self._current else None
                # A watched view of a full read opens the persisted index as that read would.
                self._recaller = self._first_recaller(
                    read if read is not None else current, diagnostics
                )
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
        token = None if self._probe is None else self._probe.token  # taken before the walk
        quiet = quiet_meta(self.paths, current, diagnostics, reader.listing(), loaded_ns, token)
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
        if self._trace_log is None:  # checked once: its paths are resolved on creation
            from .trace import TraceLog

            stores = (self.paths.project_store, self.paths.global_store)
            self._trace_log = TraceLog(self.paths.workspace_data / "recall", stores=stores)
        return self._trace_log
