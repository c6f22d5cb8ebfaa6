"""A hook answers within its budget, also when a store's derived state must be built first.

The agents kill a hook after 30 s (Claude Code, Codex; Gemini's 30000 ms). With no usable
derived state — a fresh install, an upgrade that changed the code tags, a deleted or damaged
index — the first hook of a large store would have to parse and index every fact (100,000
facts: about 34 s of CPU for the derived index and 115 s for the recall state), be killed, and
the next hook would start over. So a hook runs under a budget (``CONTEXT_ENGINE_HOOK_BUDGET``
seconds of wall time, default 15; ``0`` turns it off):

* no usable recall state (SessionStart: no usable derived index) and more fact files than a
  hook indexes in a fraction of its budget (``INLINE_PER_SECOND``, ``INLINE_START_PER_SECOND``
  files per second of budget) → the build is handed to one detached builder
  (``hooks/builder.py``) and the turn is answered at once without memory;
* a builder of this workspace still running → the same answer, unless the saved state already
  vouches for the stores (then the turn is answered from it, as always);
* anything else runs as before, in a worker thread; past the budget the hook hands the rest to
  the builder and answers without memory (what was committed so far is kept).

"Without memory" is said, never pretended: the turn gets an explicit ``<memory-status>`` note
(constant text: no path, no fact, nothing local) instead of a recall block, SessionStart gets
that note in place of the memory block (with the instruction block as usual when asked), and
no session baseline moves, so pending turn-tail notes still ride a later turn.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

from .protocol import Agent, HookPayload

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..engine import ContextEngine
    from ..paths import EnginePaths

ENV = "CONTEXT_ENGINE_HOOK_BUDGET"
DEFAULT_BUDGET = 15.0  # seconds of wall time: half the agents' 30 s timeout
# With no usable state, a hook builds inline only for a store it indexes well within budget:
# a turn needs the derived index and the recall state (~1.5 ms a fact here), SessionStart the
# derived index alone (~0.35 ms a fact); files per second of budget, with room for a loaded
# machine.
INLINE_PER_SECOND = 200
INLINE_START_PER_SECOND = 1000

PREPARING_TURN = (
    "<memory-status>\n"
    "Memory recall is being prepared: this workspace's memory index is being built in the"
    " background (first use, an upgrade, or a rebuilt index). No facts were recalled for this"
    " turn; recall resumes automatically once the index is ready.\n"
    "</memory-status>"
)
PREPARING_START = (
    "<memory-status>\n"
    "Memory is being prepared: this workspace's memory index is being built in the background"
    " (first use, an upgrade, or a rebuilt index), so this session starts without the memory"
    " block. Recall on later turns resumes automatically once the index is ready.\n"
    "</memory-status>"
)

# No builder can run (its lock or process could not be made): said as it is.
UNAVAILABLE_TURN = (
    "<memory-status>\n"
    "Memory recall is not available for this turn: this workspace's memory index could not be"
    " built in time. No facts were recalled for this turn.\n"
    "</memory-status>"
)
UNAVAILABLE_START = (
    "<memory-status>\n"
    "Memory is not available at the start of this session: this workspace's memory index could"
    " not be built in time, so this session starts without the memory block.\n"
    "</memory-status>"
)
SUPPRESSED = "memory recall is being prepared"  # the trace's reason for such a turn
SUPPRESSED_UNAVAILABLE = "memory index not built in time"


class NotReady(Exception):
    """No usable derived state for this turn: answered without memory."""


def budget() -> float | None:
    """The hook's wall-time budget in seconds (``None``: no budget, build inline as before)."""
    raw = os.environ.get(ENV, "")
    if not raw:
        return DEFAULT_BUDGET
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_BUDGET
    return value if value > 0 else None


def recall_state_usable(paths: EnginePaths) -> bool:
    """Whether a recall state of this code and these stores is saved (brought up, never rebuilt)."""
    import sqlite3

    from ..recall.persist import VERSION, code_tag, recall_cache_path
    from ..recall.state import StateFile

    try:
        with StateFile(recall_cache_path(paths)).reading() as reader:
            if reader is None:
                return False
            meta = reader.meta("version", "code", "roots")
    except (sqlite3.Error, OSError, EOFError, ValueError, TypeError):
        return False
    roots = [str(paths.project_store), str(paths.global_store)]
    return meta == {"version": VERSION, "code": code_tag(), "roots": roots}


def indexes_usable(paths: EnginePaths) -> bool:
    """Whether both stores have a derived index of this code (read-only check, nothing reset)."""
    import sqlite3

    from ..facts.derived_index import _uri_path, store_index

    for scope in ("project", "global"):
        index = store_index(paths, scope)
        if not index.path.is_file():
            return False
        try:
            db = sqlite3.connect(f"file:{_uri_path(index.path)}?mode=ro", uri=True, timeout=1.0)
            try:
                meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            finally:
                db.close()
        except sqlite3.Error:
            return False
        if meta != index._meta():
            return False
    return True


def store_files(paths: EnginePaths) -> int:
    """Candidate fact files of both stores (names only: no ``lstat``)."""
    total = 0
    for store in (paths.project_store, paths.global_store):
        try:
            with os.scandir(store) as entries:
                total += sum(1 for e in entries if e.name.endswith(".md"))
        except OSError:
            continue
    return total


def cold_check(
    paths: EnginePaths, home: str | None, kind: str, limit: float
) -> Callable[[], None]:
    """What the engine calls when no saved state vouches for the stores and it is about to
    read them: raise ``NotReady`` (after handing the build off) when that read would not fit."""

    def check() -> None:
        from . import builder

        if builder.running(paths):
            raise NotReady("building")
        if recall_state_usable(paths):
            return  # the saved state is brought up to the stores, as on any turn
        if kind == "start" and indexes_usable(paths):
            return  # the prefix needs the facts only, and their rows are there
        rate = INLINE_START_PER_SECOND if kind == "start" else INLINE_PER_SECOND
        if store_files(paths) <= limit * rate:
            return  # small enough to build now
        if builder.hand_off(paths, home) == "unavailable":
            return  # no builder can run here (a read-only state root): the budget bounds it
        raise NotReady("handed off")

    return check


class _Gate:
    """Who finishes the turn: the worker (it commits its baseline) or the deadline."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "running"

    def commit(self) -> bool:
        """The worker is about to save the baseline: False when the deadline answered."""
        with self._lock:
            if self._state == "abandoned":
                return False
            self._state = "committed"
            return True

    def abandon(self) -> bool:
        """The deadline passed: False when the worker already committed (let it finish)."""
        with self._lock:
            if self._state == "committed":
                return False
            self._state = "abandoned"
            return True


def answer(
    agent: Agent,
    event: str | None,
    text: str,
    *,
    home: str | None,
    workspace: str | None,
    with_instructions: bool,
    limit: float,
) -> tuple[str, bool]:
    """(the stdout JSON, whether a worker was left running: exit at once after writing)."""
    from .protocol import event_kind
    from .runner import handle, hook_paths

    payload = HookPayload.parse(text)
    resolved = event_kind(agent, event or payload.event or "")
    if resolved is None:
        return "{}", False
    name, kind = resolved
    paths = hook_paths(payload, home, workspace)
    check = cold_check(paths, home, kind, limit)

    def sources(chosen: EnginePaths) -> ContextEngine:
        from ..engine import ContextEngine

        engine = ContextEngine(chosen)
        engine.catalog.index.cold_check = check
        return engine

    gate = _Gate()
    done = threading.Event()
    result: dict[str, object] = {}

    def work() -> None:
        try:
            result["out"] = handle(
                agent, event, text, home=home, workspace=workspace,
                with_instructions=with_instructions, sources=sources, commit=gate.commit,
            )
        except BaseException as exc:  # handed to the main thread
            result["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="hook-turn", daemon=True).start()
    if not done.wait(limit):
        if gate.abandon():
            from . import builder

            started = builder.hand_off(paths, home)
            _say(f"over its {limit:g} s budget; the rest of the build is {started}")
            built = started != "unavailable"
            if kind != "start":
                _traced(paths, payload.prompt, SUPPRESSED if built else SUPPRESSED_UNAVAILABLE)
            return preparing(name, kind, paths, with_instructions, built), True
        done.wait()
    error = result.get("error")
    if isinstance(error, NotReady):
        _say(f"memory is being prepared ({error})")
        if kind != "start":
            _traced(paths, payload.prompt, SUPPRESSED)
        return preparing(name, kind, paths, with_instructions), False
    if isinstance(error, BaseException):
        raise error
    out = result.get("out")
    assert isinstance(out, str)
    return out, False


def preparing(
    name: str, kind: str, paths: EnginePaths, with_instructions: bool, built: bool = True
) -> str:
    """The answer without memory: the explicit note (and the instructions, when asked);
    ``built``: a builder is on it (else the note says memory is not available now)."""
    from .protocol import render_output

    if kind != "start":
        return render_output(name, PREPARING_TURN if built else UNAVAILABLE_TURN)
    note = PREPARING_START if built else UNAVAILABLE_START
    if not with_instructions:
        return render_output(name, note + "\n")
    from ..engine import ContextEngine
    from ..session.prefix import build_stable_prefix

    engine = ContextEngine(paths)
    prefix = build_stable_prefix(note, engine.instructions().block)
    return render_output(name, engine.scrub(prefix))


def _traced(paths: EnginePaths, prompt: str, reason: str) -> None:
    """The turn's trace says recall was not run, and why (the Recall tab, ``memory recall``)."""
    from datetime import UTC, datetime

    from ..recall.trace import RecallTrace, TraceLog

    stores = (paths.project_store, paths.global_store)
    trace = RecallTrace(query=prompt.strip(), suppressed=reason,
                        at=datetime.now(UTC).isoformat())
    with contextlib.suppress(OSError):
        TraceLog(paths.workspace_data / "recall", stores=stores).record(trace)


def _say(message: str) -> None:
    """One local diagnostic line (stderr never reaches the provider)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"context-engine hook: {message}\n")
