"""The public API for agent hosts: open an engine, start a session, run turns and tools.

    engine = ContextEngine.open(workspace="~/proj")
    session = engine.start_session(controller="headless")
    system_prompt += session.stable_prefix          # built once, unchanged all session
    turn = session.process_user_turn("why does the release build fail?")
    send(turn.text_for_provider)                    # user text + recall block + notes
    outcome = session.call_tool("remember", {...})  # through the write policy (S10)

Every text this API hands out is provider-safe (S7.4): no absolute, store or home path, no
diagnostics; facts are named by reference.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .facts.model import Diagnostic, Fact
from .paths import EnginePaths
from .policy.confirmation import default_confirmation
from .session.core import (
    InstructionView,
    RecallOutcome,
    TurnResult,
    open_prefix,
    run_turn,
)
from .session.notes import Baseline
from .session.privacy import Scrubber

if TYPE_CHECKING:
    from .facts.memory import Memory
    from .facts.snapshot_cache import StoreView
    from .policy.confirmation import ConfirmationService
    from .recall import Recaller, TraceLog
    from .tools.write import ToolOutcome

ControllerName = Literal["interactive", "headless", "subagent"]
Mode = Literal["ask", "auto", "yolo"]
RECALL_LIMIT = 4
RECALL_BUDGET = 2400


class ContextEngine:
    """Instructions, memory and recall for one workspace and home."""

    def __init__(self, paths: EnginePaths, *, memory: Memory | None = None) -> None:
        self.paths = paths
        self._memory = memory
        self._reads_through_memory = memory is not None  # an injected Memory (FS seam) reads too
        self._facts: tuple[Fact, ...] | None = None
        self._diagnostics: tuple[Diagnostic, ...] = ()
        self._listing: object = None
        self._views: list[StoreView] | None = None
        self._loaded_ns = 0
        self._facts_lock = threading.Lock()
        self._scrub = Scrubber.for_paths(paths)
        self._recaller: Recaller | None = None
        self._indexed: Sequence[Fact] | None = None
        self._lock = threading.Lock()
        self._recall_lock = threading.Lock()
        self.trace_error: str | None = None  # last trace write that failed (turn went on, S8.11)
        self.upgrade_notices: list[str] = []  # one-time S5.4 notices, for the host to show

    @classmethod
    def open(
        cls,
        workspace: str | Path | None = None,
        home: str | Path | None = None,
        *,
        root: str | Path | None = None,
    ) -> ContextEngine:
        """Open the engine for ``workspace`` (default: cwd) and ``home`` (default: S1 rules)."""
        return cls(EnginePaths.resolve(home=home, workspace=workspace, root=root))

    # -- sources (SessionSources protocol) ----------------------------------------------------

    @property
    def memory(self) -> Memory:
        """The two stores (upgraded on first use, S5.1)."""
        with self._lock:  # tool calls may arrive on several threads (MCP server)
            if self._memory is None:
                from .facts.memory import Memory
                from .upgrade.config_key import remove_retired_config_keys

                self._memory = Memory.open(self.paths)
                # The retired key goes with the store upgrade (S5.4); removing it is what
                # makes the notice one-time.
                self.upgrade_notices.extend(remove_retired_config_keys(self.paths))
            return self._memory

    def active_facts(self) -> Sequence[Fact]:
        """Every active fact of both stores as they are now.

        The last facts are reused only while both stores list the same files with the same
        lstat identity (ctime included), all settled before that read began; otherwise they
        are read again through the persisted snapshot cache (``facts/snapshot_cache.py``).
        A quiet turn therefore costs one directory scan and hands back the very same tuple.
        """
        if self._reads_through_memory:
            snapshot = self.memory.snapshot()
            with self._facts_lock:
                self._facts, self._diagnostics = snapshot.facts, snapshot.diagnostics
            return snapshot.facts
        from .facts import snapshot_cache as cache

        with self._facts_lock:  # tool calls and relayed hooks arrive on worker threads
            # Taken before the scan: every file's read and listing is at or after this moment.
            started = time.time_ns()
            listings = (cache.scan(self.paths.project_store), cache.scan(self.paths.global_store))
            settled = self._loaded_ns - cache.RACY_NS
            if (
                self._facts is not None
                and listings == self._listing
                and all(max(i[3], i[4]) < settled for files in listings for i in files.values())
            ):
                return self._facts
            if self._views is None:
                # One scan per turn: the cache validates against the listing just taken.
                loaded = cache.SnapshotCache(self.paths).load(listings)
                roots = (self.paths.project_store, self.paths.global_store)
                if loaded.views is not None:
                    self._views = list(loaded.views)
                else:
                    self._views = cache.views_from(loaded, listings, roots)
                self._facts, self._diagnostics = loaded.facts, loaded.diagnostics
            else:
                # Long-lived: keep what is unchanged in memory, read only what changed.
                self._views = [
                    cache.refresh_view(self.paths, scope, view, listing, settled)
                    for scope, view, listing in zip(
                        ("project", "global"), self._views, listings, strict=True
                    )
                ]
                self._facts, self._diagnostics = cache.view_items(self._views)
            self._listing, self._loaded_ns = listings, started
            return self._facts

    def instructions(self) -> InstructionView:
        """The S6.7 block and each document's body by label, resolved now."""
        from .instructions import render_provider_block, resolve_instructions

        resolution = resolve_instructions(self.paths)
        documents = {doc.label: doc.body for doc in resolution.documents}
        return InstructionView(render_provider_block(resolution), documents)

    def recaller(self, facts: Sequence[Fact] | None = None) -> Recaller:
        """The engine's live recall index, brought up to ``facts`` (default: read now)."""
        current = self.active_facts() if facts is None else facts
        # Unreadable files of that snapshot are reported in the trace (S8.11).
        diagnostics = self._diagnostics if current is self._facts else ()
        with self._recall_lock:
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

        Only facts this engine read itself have a known lstat identity; any other fact list
        (an injected ``Memory``, facts handed in by the host) is indexed from scratch.
        """
        from .facts.snapshot_cache import RACY_NS
        from .recall import Recaller
        from .recall.persist import RecallCache, recall_cache_path

        with self._facts_lock:  # the views, facts and read time of one and the same read
            views, facts, loaded_ns = self._views, self._facts, self._loaded_ns
        if views is None or current is not facts:
            return Recaller(current, diagnostics=diagnostics)
        known = {id(item): ident for view in views for ident, item in view.values()}
        cache = RecallCache(recall_cache_path(self.paths))
        return cache.open(
            current,
            diagnostics,
            identity_of=lambda fact: known.get(id(fact)),
            settled_before=loaded_ns - RACY_NS,
        )

    def recall(self, message: str, facts: Sequence[Fact]) -> RecallOutcome:
        """S8 over ``facts`` (the index is kept and updated incrementally); records the trace."""
        recaller = self.recaller(facts)
        with self._recall_lock:
            result = recaller.recall(
                message, limit=RECALL_LIMIT, budget=RECALL_BUDGET, clean=self.scrub
            )
        try:
            self.record_trace(result.trace)
        except OSError as exc:  # a read-only or full state dir must not fail the turn (S8.11)
            self.trace_error = f"recall trace not recorded: {exc.strerror or exc}"
            sys.stderr.write(f"context-engine: {self.trace_error}\n")
        return RecallOutcome(result.block, result.trace)

    def trace_log(self) -> TraceLog:
        """The workspace's recall traces, where ``recall`` and ``/memory recall`` keep them."""
        from .recall import TraceLog

        stores = (self.paths.project_store, self.paths.global_store)
        return TraceLog(self.paths.workspace_data / "recall", stores=stores)

    def record_trace(self, trace: object) -> None:
        """Persist a recall trace for ``/memory recall``, the CLI and the app (S8.10)."""
        from .recall import RecallTrace

        if isinstance(trace, RecallTrace):
            self.trace_log().record(trace)

    def scrub(self, text: str) -> str:
        """Provider-visible text with every local path removed (S7.4)."""
        return self._scrub(text)

    # -- sessions and tools -------------------------------------------------------------------

    def stable_prefix(self) -> str:
        """The stable prefix a new session would get now (S7.1)."""
        return open_prefix(self)[0]

    def start_session(
        self,
        controller: ControllerName = "interactive",
        *,
        confirmation: ConfirmationService | None = None,
        mode: Mode = "ask",
        owns_project_store: bool = True,
    ) -> Session:
        """Start a session: the stable prefix is built now and never changes (S7.1)."""
        return Session(self, controller, confirmation, mode, owns_project_store)

    def run_tool(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        controller: ControllerName,
        confirmation: ConfirmationService | None = None,
        mode: Mode = "ask",
        owns_project_store: bool = True,
    ) -> ToolOutcome:
        """Run ``memory``, ``remember`` or ``forget`` as ``controller`` (S9, S10)."""
        from .policy.write_policy import Controller
        from .tools.write import run_agent_tool

        if name == "memory":
            outcome = self._search_tool(args)
        else:
            who = Controller(controller, owns_project_store=owns_project_store)
            service = confirmation if confirmation is not None else default_confirmation(controller)
            outcome = run_agent_tool(self.memory, name, dict(args), who, mode, service)
        clean = self.scrub
        return replace(outcome, result=clean(outcome.result), reason=clean(outcome.reason))


    def _search_tool(self, args: Mapping[str, Any]) -> ToolOutcome:
        """The read-only ``memory`` tool over the live index (no rebuild per call)."""
        from .errors import ContextEngineError
        from .tools.memory import run_memory_tool
        from .tools.write import READ_ONLY_REASON, ToolOutcome, public_message

        recaller = self.recaller()
        try:
            with self._recall_lock:
                answer = run_memory_tool(recaller, dict(args), clean=self.scrub)
        except ContextEngineError as exc:
            error = f"Error: {public_message(exc)}"
            return ToolOutcome("auto", READ_ONLY_REASON, False, error, False)
        return ToolOutcome("auto", READ_ONLY_REASON, False, answer, True)


class Session:
    """One agent session: a fixed stable prefix, then user turns and tool calls."""

    def __init__(
        self,
        engine: ContextEngine,
        controller: ControllerName,
        confirmation: ConfirmationService | None,
        mode: Mode,
        owns_project_store: bool,
    ) -> None:
        self.engine = engine
        self.controller: ControllerName = controller
        self.mode: Mode = mode
        self._confirmation = confirmation
        self._owns = owns_project_store
        self._prefix, self._baseline = open_prefix(engine)
        self._lock = threading.Lock()

    @property
    def stable_prefix(self) -> str:
        """The memory block then the instruction block, as built at session start (S7.1)."""
        return self._prefix

    def process_user_turn(self, text: str) -> TurnResult:
        """The user's text plus the recall block and pending notes; the trace is recorded."""
        with self._lock:
            result, self._baseline = run_turn(self.engine, self._baseline, text)
        return result

    def call_tool(self, name: str, args: Mapping[str, Any]) -> ToolOutcome:
        """Run an agent tool as this session's controller; results name facts by reference."""
        return self.engine.run_tool(
            name,
            args,
            controller=self.controller,
            confirmation=self._confirmation,
            mode=self.mode,
            owns_project_store=self._owns,
        )

    @property
    def baseline(self) -> Baseline:
        """What the provider has been told so far (for hosts that persist sessions)."""
        return self._baseline
