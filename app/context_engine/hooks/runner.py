"""One hook invocation: read the agent's payload, add the prefix or the turn's context, reply.

``SessionStart`` builds the stable prefix — the memory block, plus our instruction block when
asked (the agents load their own CLAUDE.md / AGENTS.md / GEMINI.md) — and records the baseline
for that agent session; ``UserPromptSubmit`` / ``BeforeAgent`` adds the recall block
and the turn-tail notes for the prompt, records the trace and moves the baseline. A generic
turn with nothing pending adds nothing. A hook never breaks the agent: any failure prints
``{}`` (add nothing) and one line on stderr.
"""

from __future__ import annotations

import os
import sys

from ..bounded_json import FrameError
from .protocol import AGENTS, Agent, HookPayload

# A hook the running server answers (``relay.py``) loads none of the session machinery, nor
# ``typing``: the heavy imports are inside the functions that answer here (issue 14).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..paths import EnginePaths
    from ..session.core import SessionSources

    SourcesFactory = Callable[[EnginePaths], SessionSources]


def default_sources(paths: EnginePaths) -> SessionSources:
    """The engine (its fact reads go through the derived index, which it keeps)."""
    from ..engine import ContextEngine

    return ContextEngine(paths)


def hook_paths(payload: HookPayload, home: str | None, workspace: str | None) -> EnginePaths:
    """``--workspace`` wins, then the payload's ``cwd``, then the process's cwd."""
    from pathlib import Path

    from ..paths import EnginePaths

    chosen = workspace or payload.cwd or None
    return EnginePaths.resolve(home=home, workspace=Path(chosen) if chosen else None)


def handle(
    agent: Agent,
    event: str | None,
    stdin_text: str,
    *,
    home: str | None = None,
    workspace: str | None = None,
    with_instructions: bool = False,
    sources: SourcesFactory = default_sources,
    keep_baselines: bool = False,
    commit: Callable[[], bool] | None = None,
) -> str:
    """The stdout JSON for one hook call (raises on bad input; see :func:`run`).

    ``keep_baselines``: a long-lived process (the relay) keeps the session baselines it read or
    wrote in memory, re-read only when their file changed (``hooks/state.py``). ``commit``:
    asked before the baseline is saved; ``False`` (the hook's budget already answered,
    ``hooks/budget.py``) stops here with nothing saved."""
    from ..session.core import open_prefix, run_turn
    from .protocol import event_kind, render_output
    from .state import BaselineStore

    payload = HookPayload.parse(stdin_text)
    resolved = event_kind(agent, event or payload.event or "")
    if resolved is None:
        return "{}"
    name, kind = resolved
    paths = hook_paths(payload, home, workspace)
    engine = sources(paths)
    states = BaselineStore(paths.workspace_data / "agent-sessions", keep=keep_baselines)
    if kind == "start":
        prefix, baseline = open_prefix(engine, with_instructions=with_instructions)
        _committed(commit)
        states.save(agent, payload.session_id, baseline)
        return render_output(name, prefix)
    previous = states.load(agent, payload.session_id)
    result, following = run_turn(engine, previous, payload.prompt)
    _committed(commit)
    if previous is None or result.notes or following.digest != previous.digest:
        # No note means nothing moved: the baseline on disk is already the one that follows
        # (save it once more when it newly carries the recall state's digest).
        states.save(agent, payload.session_id, following)
    return render_output(name, result.added_context)


def _committed(commit: Callable[[], bool] | None) -> None:
    """Past this point the turn is this worker's to finish (``hooks/budget.py``'s gate)."""
    if commit is not None and not commit():
        raise TimeoutError("answered without memory: over the hook's budget")


def run(
    agent: Agent,
    event: str | None,
    *,
    home: str | None,
    workspace: str | None,
    with_instructions: bool = False,
) -> int:
    """CLI entry: stdin → stdout; always exit 0 so a broken hook never blocks the agent.

    A running ``context-engine mcp`` of the same workspace answers with its warm index when it
    can (``hooks/relay.py``; ``CONTEXT_ENGINE_HOOK_RELAY=0`` turns that off). Otherwise the turn
    is answered within ``CONTEXT_ENGINE_HOOK_BUDGET`` seconds (``hooks/budget.py``).
    """
    try:
        from .protocol import MAX_HOOK_INPUT

        text = sys.stdin.read(MAX_HOOK_INPUT + 1)  # the parser refuses anything longer
        out = None
        if os.environ.get("CONTEXT_ENGINE_HOOK_RELAY", "1") != "0":
            out = _relayed(agent, event, text, home, workspace, with_instructions)
            if out is not None and os.environ.get("CONTEXT_ENGINE_HOOK_VERBOSE") == "1":
                sys.stderr.write("context-engine hook: answered by the running MCP server\n")
        if out is None:
            from .budget import answer, budget

            limit = budget()
            if limit is None:
                out = handle(
                    agent,
                    event,
                    text,
                    home=home,
                    workspace=workspace,
                    with_instructions=with_instructions,
                )
            else:
                out, abandoned = answer(
                    agent, event, text, home=home, workspace=workspace,
                    with_instructions=with_instructions, limit=limit,
                )
                if abandoned:  # the turn's worker is still building: leave it behind
                    sys.stdout.write(out + "\n")
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(0)
    except FrameError as exc:  # a payload over the size or depth limit: say which
        sys.stderr.write(f"context-engine hook: nothing added ({exc})\n")
        out = "{}"
    except Exception as exc:  # a hook must never block the prompt
        sys.stderr.write(f"context-engine hook: nothing added ({type(exc).__name__})\n")
        out = "{}"
    sys.stdout.write(out + "\n")
    sys.stdout.flush()
    return 0


def _relayed(
    agent: Agent,
    event: str | None,
    text: str,
    home: str | None,
    workspace: str | None,
    with_instructions: bool,
) -> str | None:
    """The running MCP server's answer, or None (then this process answers)."""
    from . import relay

    try:
        paths = hook_paths(HookPayload.parse(text), home, workspace)
    except ValueError:
        return None
    request = {
        "agent": agent,
        "event": event,
        "stdin": text,
        "home": home,
        "workspace": workspace,
        "with_instructions": with_instructions,
    }
    return relay.ask(paths, request)


def answer_relayed(request: Mapping[str, Any], engine: SessionSources) -> str:
    """What the MCP server's relay runs for one hook call, over its warm ``engine``."""
    agent = next(name for name in AGENTS if name == request["agent"])
    return handle(
        agent,
        request.get("event"),
        str(request["stdin"]),
        home=request.get("home"),
        workspace=request.get("workspace"),
        with_instructions=bool(request.get("with_instructions")),
        sources=lambda _paths: engine,
        keep_baselines=True,
    )
