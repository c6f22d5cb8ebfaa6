"""Each agent's hooks as ``context-engine install`` configures them, and the session block size.

For Claude Code, Codex CLI and Gemini CLI: installs into a temporary HOME, then runs every
configured hook command exactly as the agent would (through ``sh -c``, JSON on stdin) over a
workspace of N facts, and prints the median wall time and the median CPU time (user + system of
the whole process tree, from ``resource.getrusage``) of 10 runs, beside ``python -c pass`` measured
the same way in the same run. Then the memory block's size at 1k/10k/100k facts, bounded (S7.2a)
and as it would be unbounded. The relay to a running MCP server is off: the hook alone.

    .venv/bin/python bench/agents_bench.py            # 10,000 facts, 10 runs
    .venv/bin/python bench/agents_bench.py --facts 1000 --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "app"), str(ROOT / "bench")]

from _facts import make_aged_workspace  # noqa: E402
from context_engine.facts.model import Fact  # noqa: E402
from context_engine.hooks.protocol import AGENTS  # noqa: E402
from context_engine.install import entries, files  # noqa: E402
from context_engine.install.targets import SPECS, config_files  # noqa: E402
from context_engine.session.prefix import build_memory_block  # noqa: E402

PROMPT = "why does the docker release build time out after the cache migration?"


def timed(command: str, stdin: str, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child processes) of one shell command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, shell=True, input=stdin, capture_output=True, text=True, env=env,
                   cwd=cwd, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def medians(command: str, stdin: str, env: dict[str, str], cwd: Path, runs: int) -> str:
    timed(command, stdin, env, cwd)  # warm: caches written, bytecode compiled
    samples = [timed(command, stdin, env, cwd) for _ in range(runs)]
    wall = statistics.median(s[0] for s in samples)
    cpu = statistics.median(s[1] for s in samples)
    return f"wall {wall * 1000:7.0f} ms  cpu {cpu * 1000:7.0f} ms"


def configured_hooks(agent: str, root: Path) -> dict[str, str]:
    """Event → command, as install wrote them."""
    target = config_files(agent, "user", root)  # type: ignore[arg-type]
    doc = files.load(target.hooks).doc
    return {event: entries.hook_handlers(doc, event)[0]["command"] for event in SPECS[agent].events}  # type: ignore[index]


def block_sizes() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    print("\nmemory block (characters): bounded (S7.2a) / unbounded")
    for count in (1_000, 10_000, 100_000):
        facts = [
            Fact(id=f"mem-{i:032x}", revision=1, name=f"note-{i:06d}", title="",
                 description=f"How part {i} of the release pipeline works", type="project",
                 scope="project", body="b", updated_at=start + timedelta(minutes=i))
            for i in range(count)
        ]
        bounded = build_memory_block(facts)
        whole = build_memory_block(facts, limit=10**9)
        print(f"  {count:>7,} facts: {len(bounded):>6,} / {len(whole):>10,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="agents-bench-"))
    try:
        paths = make_aged_workspace(base, args.facts)
        home = base / "user-home"
        home.mkdir()
        env = dict(os.environ, HOME=str(home), CONTEXT_ENGINE_HOOK_RELAY="0")
        env.pop("CODEX_HOME", None)
        env.pop("CLAUDE_CONFIG_DIR", None)
        os.environ.update(HOME=str(home))
        print(f"{args.facts:,} facts, median of {args.runs} runs (machine shared and loaded)")
        anchor = medians(f"{sys.executable} -c pass", "", env, base, args.runs)
        print(f"  {'python -c pass':<34} {anchor}")
        for agent in AGENTS:
            where = ["--home", str(paths.home), "--workspace", str(paths.workspace)]
            cli = [sys.executable, "-m", "context_engine", *where, "install", agent, "--no-trust"]
            subprocess.run(cli, env=env, check=True, capture_output=True)
            for event, command in configured_hooks(agent, paths.root).items():
                payload = json.dumps(
                    {
                        "session_id": "bench",
                        "cwd": str(paths.workspace),
                        "hook_event_name": event,
                        "prompt": PROMPT,
                    }
                )
                label = f"{agent} {event}"
                print(f"  {label:<34} {medians(command, payload, env, paths.workspace, args.runs)}")
        block_sizes()
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
