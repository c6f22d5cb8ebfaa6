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

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .facts.model import Fact
from .paths import EnginePaths
from .records import replace
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
    from .catalog.ops import WriteOutcome
    from .facts.memory import Memory
    from .instructions.model import Resolution
    from .policy.confirmation import ConfirmationService
    from .recall import Recaller, TraceLog

ControllerName = Literal["interactive", "headless", "subagent"]
Mode = Literal["ask", "auto", "yolo"]


class ContextEngine:
    """Instructions, memory and recall for one workspace and home, over one local catalog."""

    def __init__(
        self,
        paths: EnginePaths,
        *,
        memory: Memory | None = None,
        keep_index: bool = True,
        watch: bool = False,
    ) -> None:
        """``keep_index``: create our derived files (fact index, persisted recall index) when
        missing, as a host that records traces does; ``False`` for a read-only command.
        ``watch``: a long-lived host (MCP server, an agent embedding the engine) learns of
        store changes from the kernel instead of checking every file each turn
        (``recall/live.py``); a one-shot process leaves it off."""
        from .catalog.local import LocalCatalog

        self.paths = paths
        self.catalog = LocalCatalog(paths, memory=memory)
        if keep_index:
            self.catalog.index.keep_index = True
        if watch:
            self.catalog.index.watch_changes = True
        self._scrub = Scrubber.for_paths(paths)
        self._lock = threading.Lock()
        self._instructions: tuple[Resolution, InstructionView] | None = None
        self.upgrade_notices: list[str] = []  # one-time S5.4 notices, for the host to show

    @classmethod
    def open(
        cls,
        workspace: str | Path | None = None,
        home: str | Path | None = None,
        *,
        root: str | Path | None = None,
    ) -> ContextEngine:
        """Open the engine for ``workspace`` (default: cwd) and ``home`` (default: S1 rules),
        as a long-lived host: store changes are watched."""
        return cls(EnginePaths.resolve(home=home, workspace=workspace, root=root), watch=True)

    def close(self) -> None:
        """Release the store watch and the open index files (a host shutting down)."""
        self.catalog.close()

    def __enter__(self) -> ContextEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sources (SessionSources protocol) ----------------------------------------------------

    @property
    def memory(self) -> Memory:
        """The two stores (upgraded on first use, S5.1), for reading; writes go through apply."""
        with self._lock:  # tool calls may arrive on several threads (MCP server)
            self.upgrade_notices.extend(self.catalog.upgrade())
        return self.catalog.memory

    @property
    def trace_error(self) -> str | None:
        """The last trace write that failed (the turn went on, S8.11)."""
        return self.catalog.index.trace_error

    def active_facts(self) -> Sequence[Fact]:
        """Every active fact of both stores as they are now (the one read path, S8)."""
        return self.catalog.index.active_facts()

    def instructions(self) -> InstructionView:
        """The S6.7 block and each document's body by label, as the files are now.

        Resolved again only when a file the last resolution read or looked for changed (one
        ``stat`` each, git's racy rule: ``instructions/watch.py``); a host asks every turn.
        """
        from .instructions import changed_paths, render_provider_block, resolve_instructions
        from .instructions.model import RESOLVER_ERROR, WORKSPACE_UNREADABLE

        kept = self._instructions
        if kept is not None and not changed_paths(kept[0]):
            return kept[1]
        resolution = resolve_instructions(self.paths)
        documents = {doc.label: doc.body for doc in resolution.documents}
        view = InstructionView(render_provider_block(resolution), documents)
        # A resolution that failed or could not open the workspace watched too little to vouch
        # for itself later: resolved again next time.
        unwatchable = (RESOLVER_ERROR, WORKSPACE_UNREADABLE)
        blind = any(d.code in unwatchable for d in resolution.diagnostics)
        self._instructions = None if blind else (resolution, view)
        return view

    def recaller(self, facts: Sequence[Fact] | None = None) -> Recaller:
        """The live recall index, brought up to ``facts`` (default: read now)."""
        return self.catalog.index.recaller(facts)

    def recall(self, message: str, facts: Sequence[Fact]) -> RecallOutcome:
        """S8 over ``facts`` (the index is kept and updated incrementally); records the trace."""
        result = self.catalog.index.recall(message, facts, clean=self.scrub)
        return RecallOutcome(result.block, result.trace)

    def trace_log(self) -> TraceLog:
        """The workspace's recall traces, where ``recall`` and ``/memory recall`` keep them."""
        return self.catalog.index.trace_log()

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
    ) -> WriteOutcome:
        """Run ``memory``, ``remember`` or ``forget`` as ``controller`` (S9, S10).

        ``memory`` reads the live index (never rebuilt per call); the write tools are an op for
        the catalog's one door with an ``Agent`` actor. ``confirmation`` defaults to a terminal
        prompt for a person at a TTY, else fail closed (``default_confirmation``).
        """
        if name == "memory":
            outcome = self._search_tool(args)
        else:
            # Imported here: the terminal prompt (policy.confirmation) pulls in click, which a
            # hook turn never needs.
            from .catalog.ops import Agent
            from .policy.confirmation import default_confirmation
            from .tools.write import run_write_tool

            service = confirmation if confirmation is not None else default_confirmation(controller)
            self.memory  # noqa: B018 - the stores are upgraded before the first write (S5.1)
            agent = Agent(controller, mode, owns_project_store)
            outcome = run_write_tool(self.catalog.using(service), name, dict(args), agent)
        clean = self.scrub
        return replace(outcome, result=clean(outcome.result), reason=clean(outcome.reason))

    def _search_tool(self, args: Mapping[str, Any]) -> WriteOutcome:
        """The read-only ``memory`` tool over the live index (no rebuild per call)."""
        from .catalog.ops import WriteOutcome
        from .errors import ContextEngineError, public_message
        from .tools.memory import run_memory_tool
        from .tools.write import READ_ONLY_REASON

        index = self.catalog.index
        recaller = index.recaller()
        try:
            with index.lock:
                answer = run_memory_tool(recaller, dict(args), clean=self.scrub)
        except ContextEngineError as exc:
            error = f"Error: {public_message(exc)}"
            return WriteOutcome("auto", READ_ONLY_REASON, False, error, False)
        return WriteOutcome("auto", READ_ONLY_REASON, False, answer, True)


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

    def call_tool(self, name: str, args: Mapping[str, Any]) -> WriteOutcome:
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
