"""The Recall tab's recall, run in a child process so the app's memory stays bounded.

A recall needs every fact's terms: the in-process live index holds them for the life of the
process (~225 MB more at 100,000 facts, never given back). The child runs the very same call
as ``context-engine recall`` (``LocalCatalog.recall``: the saved recall state when the stores
still vouch for it, else a full read that saves a new one; the trace recorded) and exits, so
its memory goes back to the system. The message goes over stdin (never on a command line
other users can list); the answer comes back as JSON. No Qt is imported in the child.

    python -m context_center.services.recall_child   # stdin: {"paths": …, "message": …}
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from context_engine.catalog.base import RecallRun
from context_engine.errors import ContextEngineError
from context_engine.paths import EnginePaths
from context_engine.recall.trace import RecallTrace

if TYPE_CHECKING:  # the child imports no Qt (tasks.py does)
    from .tasks import CancelToken

POLL_SECONDS = 0.05  # how often a running child checks for Cancel


class RecallFailed(ContextEngineError, code="recall_failed"):
    """The child recall could not run (its own error message, or how it ended)."""


def _code_path() -> str:
    """PYTHONPATH that imports this very engine and app in the child (a checkout or a venv)."""
    import context_engine

    import context_center

    dirs = [str(Path(m.__file__ or "").resolve().parents[1]) for m in (context_engine,
                                                                      context_center)]
    old = os.environ.get("PYTHONPATH")
    return os.pathsep.join(dict.fromkeys([*dirs, *([old] if old else [])]))


def recall_in_child(
    paths: EnginePaths, message: str, limit: int, budget: int, token: CancelToken | None = None
) -> RecallRun:
    """``LocalCatalog(paths).recall(message, …)`` in a fresh process; Cancel kills it."""
    request = json.dumps({
        "paths": {k: str(getattr(paths, k)) for k in ("home", "state", "workspace", "root")},
        "message": message, "limit": limit, "budget": budget,
    })
    env = dict(os.environ, PYTHONPATH=_code_path())
    child = subprocess.Popen(
        [sys.executable, "-m", "context_center.services.recall_child"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    data: bytes | None = request.encode("utf-8")
    try:
        while True:
            try:
                out, err = child.communicate(data, timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                data = None  # sent once; later calls only wait
                if token is not None and token.cancelled:
                    child.kill()
                    child.wait()
                    token.check()  # raises: the op was cancelled
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    answer: dict[str, Any] = {}
    with contextlib.suppress(ValueError):  # no JSON: the error is on stderr
        answer = json.loads(out.decode("utf-8") or "{}")
    if child.returncode != 0 or "trace" not in answer:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise RecallFailed(str(answer.get("error") or (last[0] if last else "")
                               or f"recall ended with status {child.returncode}"))
    return RecallRun(str(answer["block"]), RecallTrace.from_dict(answer["trace"]))


def main() -> int:
    """Read one request from stdin, run the recall, print the block and trace as JSON."""
    from context_engine.catalog.local import LocalCatalog

    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    paths = EnginePaths(**{k: Path(v) for k, v in request["paths"].items()})
    try:
        run = LocalCatalog(paths).recall(str(request["message"]), limit=int(request["limit"]),
                                         budget=int(request["budget"]))
    except ContextEngineError as exc:
        print(json.dumps({"error": getattr(exc, "message", None) or str(exc)}))
        return 1
    print(json.dumps({"block": run.block, "trace": run.trace.to_dict()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
