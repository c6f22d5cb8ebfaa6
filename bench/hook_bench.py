"""Wall time of one Claude Code ``UserPromptSubmit`` hook process at N facts (issue 9).

Prints the median end-to-end time of ``python -m context_engine.hooks claude-code`` (process
start included) with warm caches (facts snapshot + persisted recall index), with only the
recall index removed before each run, with both removed (baseline), the same while
``context-engine mcp`` runs for the workspace (the hook is answered by its warm index over the
relay socket), and the share spent importing, loading and recalling in a cold hook process
(measured by a phase-timed copy of the hook in a fresh process).

The engine's bytecode is compiled first (``compileall``), as an installed package has it: with
``PYTHONDONTWRITEBYTECODE=1`` and an edited tree every hook process would otherwise recompile
the changed modules (~5–40 ms), which is not what a person waits for.

    .venv/bin/python bench/hook_bench.py            # 10,000 facts, 5 runs
    .venv/bin/python bench/hook_bench.py --facts 50000 --runs 9
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "app"), str(ROOT / "bench")]

from _facts import make_aged_workspace  # noqa: E402
from context_engine.facts.derived_index import index_path  # noqa: E402
from context_engine.recall.persist import recall_cache_path  # noqa: E402

PROMPT = "why does the docker release build time out after the cache migration?"

PHASES = r"""
import json, sys, time
t0 = time.perf_counter()
from context_engine.engine import ContextEngine
from context_engine.hooks.state import BaselineStore
from context_engine.paths import EnginePaths
from context_engine.recall import Recaller, RecallTrace, TraceLog
from context_engine.session.core import run_turn
t1 = time.perf_counter()
paths = EnginePaths.resolve(home=sys.argv[1], workspace=sys.argv[2])
engine = ContextEngine(paths)
facts = engine.active_facts()
engine.instructions()
states = BaselineStore(paths.workspace_data / "agent-sessions")
baseline = states.load("claude-code", "bench")
t2 = time.perf_counter()
result, following = run_turn(engine, baseline, sys.argv[3])
states.save("claude-code", "bench", following)
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "recall": t3 - t2}))
"""


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT / "app"))


def hook_once(home: Path, workspace: Path, relay: bool = False) -> float:
    payload = json.dumps(
        {"session_id": "bench", "cwd": str(workspace), "hook_event_name": "UserPromptSubmit",
         "prompt": PROMPT}
    )
    cmd = [sys.executable, "-m", "context_engine.hooks", "--home", str(home), "claude-code"]
    environment = dict(
        env(), CONTEXT_ENGINE_HOOK_RELAY="1" if relay else "0", CONTEXT_ENGINE_HOOK_VERBOSE="1"
    )
    start = time.perf_counter()
    out = subprocess.run(
        cmd, input=payload, capture_output=True, text=True, env=environment, check=True
    )
    elapsed = time.perf_counter() - start
    assert "memory-recall" in out.stdout, out.stdout[:200]
    assert relay == ("answered by the running MCP server" in out.stderr), out.stderr
    return elapsed


def relayed_runs(home: Path, workspace: Path, runs: int) -> list[float]:
    """Hook times while ``context-engine mcp`` runs for the workspace (SDK client keeps it up)."""
    import anyio
    from context_engine.hooks import relay
    from context_engine.paths import EnginePaths
    from mcp import Client, StdioServerParameters

    sock = relay.socket_path(EnginePaths.resolve(home=home, workspace=workspace))
    args = ["-m", "context_engine", "--home", str(home), "--workspace", str(workspace), "mcp"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env())
    times: list[float] = []

    async def main() -> None:
        async with Client(params) as client:
            await client.list_tools()
            while sock is not None and not sock.exists():
                await anyio.sleep(0.05)
            await anyio.to_thread.run_sync(hook_once, home, workspace, True)  # warms the index
            for _ in range(runs):
                times.append(await anyio.to_thread.run_sync(hook_once, home, workspace, True))

    anyio.run(main)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    import compileall

    compileall.compile_dir(ROOT / "app" / "context_engine", quiet=1)
    base = Path(tempfile.mkdtemp(prefix="hook-bench-"))
    try:
        paths = make_aged_workspace(base, args.facts)
        hook_once(paths.home, paths.workspace)  # writes the cache
        warm = [hook_once(paths.home, paths.workspace) for _ in range(args.runs)]
        rebuilt = []  # snapshot cache warm, recall index rebuilt (the state before issue 9's index)
        for _ in range(max(3, args.runs // 2)):
            hook_once(paths.home, paths.workspace)
            recall_cache_path(paths).unlink(missing_ok=True)
            rebuilt.append(hook_once(paths.home, paths.workspace))
        cold = []
        for _ in range(max(3, args.runs // 2)):
            for scope in ("project", "global"):  # the derived fact index and its WAL files
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{index_path(paths, scope)}{suffix}").unlink(missing_ok=True)
            recall_cache_path(paths).unlink(missing_ok=True)
            cold.append(hook_once(paths.home, paths.workspace))
        relayed = relayed_runs(paths.home, paths.workspace, args.runs)
        hook_once(paths.home, paths.workspace)
        phases = []
        for _ in range(args.runs):
            cmd = [sys.executable, "-c", PHASES, str(paths.home), str(paths.workspace), PROMPT]
            out = subprocess.run(cmd, capture_output=True, text=True, env=env(), check=True)
            phases.append(json.loads(out.stdout))
        med = {k: statistics.median(p[k] for p in phases) for k in ("import", "load", "recall")}
        total = sum(med.values())
        print(f"hook UserPromptSubmit, {args.facts:,} facts, {args.runs} runs (median, wall)")
        print(f"  warm caches         : {statistics.median(warm) * 1000:8.0f} ms"
              "   (snapshot cache + persisted recall index)")
        print(f"  index rebuilt       : {statistics.median(rebuilt) * 1000:8.0f} ms"
              "   (snapshot cache only)")
        print(f"  no cache (baseline) : {statistics.median(cold) * 1000:8.0f} ms"
              f"   ratio warm/baseline {statistics.median(warm) / statistics.median(cold):.2f}")
        relayed_ms = statistics.median(relayed) * 1000
        print(f"  MCP server running  : {relayed_ms:8.0f} ms"
              f"   ratio relayed/baseline {relayed_ms / 1000 / statistics.median(cold):.2f}")
        print("  cold hook process, phases (warm cache; interpreter start excluded):")
        for key in ("import", "load", "recall"):
            print(f"    {key:<7} {med[key] * 1000:8.0f} ms  {med[key] / total:5.0%}")
        print("  (load = facts via cache + instructions + baseline; recall = index restore + S8 +"
              " notes + trace + baseline save)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
