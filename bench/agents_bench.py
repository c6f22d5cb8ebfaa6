"""Each agent's hooks as ``context-engine install`` configures them, and the session block size.

For Claude Code, Codex CLI and Gemini CLI: installs into a temporary HOME, then runs every
configured hook command exactly as the agent would (through ``sh -c``, JSON on stdin) over a
workspace of N facts, and prints the median wall time and the median CPU time (user + system of
the whole process tree, from ``resource.getrusage``) of 10 runs, beside ``python -c pass`` measured
the same way in the same run. Then the memory block's size at 1k/10k/100k facts, bounded (S7.2a)
and as it would be unbounded. Hooks are timed alone (relay off) and, per agent, again while the
installed MCP server runs for the workspace (relay on: the server's warm index answers). The MCP
server's start-up as installed (``initialize`` + ``tools/list``, median of 5) is printed beside
what each agent waits for it before the first model call (Codex: the startup grace install
writes, 1 s by default; Claude Code: 2 s, or 5 s with ``alwaysLoad``).

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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "app"), str(ROOT / "bench")]

from _facts import make_aged_workspace  # noqa: E402
from context_engine.facts.model import Fact  # noqa: E402
from context_engine.hooks.protocol import AGENTS  # noqa: E402
from context_engine.install import entries, files  # noqa: E402
from context_engine.install.mcp_probe import handshake  # noqa: E402
from context_engine.install.targets import SPECS, config_files  # noqa: E402
from context_engine.session.prefix import build_memory_block  # noqa: E402

PROMPT = "why does the docker release build time out after the cache migration?"


def timed(command: str, stdin: str, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child processes) of one shell command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command,
        shell=True,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
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


def mcp_entry(agent: str, root: Path) -> tuple[str, list[str]]:
    """The MCP server command and args install wrote."""
    target = config_files(agent, "user", root)  # type: ignore[arg-type]
    server = entries.server_entry(files.load(target.mcp).doc, target.mcp_table)
    return str(server["command"]), [str(a) for a in server.get("args", [])]


def mcp_startup(agent: str, root: Path, cwd: Path, runs: int) -> str:
    """Median start-up of the installed MCP server, to its tool list."""
    command, args = mcp_entry(agent, root)
    seconds = []
    for _ in range(runs):
        shook = handshake(command, args, cwd)
        if shook.error:
            return f"failed: {shook.error}"
        seconds.append(shook.seconds)
    return f"{statistics.median(seconds) * 1000:7.0f} ms to 3 tools (max {max(seconds) * 1000:.0f})"


class RunningServer:
    """The installed MCP server, initialized and kept up until closed (its relay serves hooks)."""

    def __init__(self, agent: str, root: Path, cwd: Path, env: dict[str, str], sock: Path) -> None:
        command, args = mcp_entry(agent, root)
        self.child = subprocess.Popen(
            [command, *args],
            cwd=cwd,
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.child.stdin is not None and self.child.stdout is not None
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
        self.child.stdin.write(json.dumps(hello) + "\n")
        self.child.stdin.flush()
        self.child.stdout.readline()
        self.child.stdin.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        self.child.stdin.flush()
        deadline = time.monotonic() + 30
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def close(self) -> None:
        """End of input: the server shuts down."""
        assert self.child.stdin is not None
        self.child.stdin.close()
        self.child.wait(timeout=30)


def block_sizes() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    print("\nmemory block (characters): bounded (S7.2a) / unbounded")
    for count in (1_000, 10_000, 100_000):
        facts = [
            Fact(
                id=f"mem-{i:032x}",
                revision=1,
                name=f"note-{i:06d}",
                title="",
                description=f"How part {i} of the release pipeline works",
                type="project",
                scope="project",
                body="b",
                updated_at=start + timedelta(minutes=i),
            )
            for i in range(count)
        ]
        bounded = build_memory_block(facts)
        whole = build_memory_block(facts, limit=10**9)
        print(f"  {count:>7,} facts: {len(bounded):>6,} / {len(whole):>10,}")


def payload(paths: Any, event: str) -> str:
    """The hook's stdin, as the agent sends it."""
    fields = {"session_id": "bench", "cwd": str(paths.workspace), "hook_event_name": event}
    return json.dumps({**fields, "prompt": PROMPT})


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
        print(
            f"{args.facts:,} facts, median of {args.runs} runs (machine shared and loaded); cpu: "
            "the hook's process tree (with the MCP server up, its share runs in the server)"
        )
        anchor = medians(f"{sys.executable} -c pass", "", env, base, args.runs)
        print(f"  {'python -c pass':<42} {anchor}")
        from context_engine.hooks import relay

        sock = relay.socket_path(paths)
        relayed = dict(env, CONTEXT_ENGINE_HOOK_RELAY="1")
        startups = {}
        for agent in AGENTS:
            where = ["--home", str(paths.home), "--workspace", str(paths.workspace)]
            cli = [sys.executable, "-m", "context_engine", *where, "install", agent, "--no-trust"]
            subprocess.run(cli, env=env, check=True, capture_output=True)
            hooks = configured_hooks(agent, paths.root)
            for event, command in hooks.items():
                label = f"{agent} {event}"
                cost = medians(command, payload(paths, event), env, paths.workspace, args.runs)
                print(f"  {label:<42} {cost}")
            if sock is not None:
                server = RunningServer(agent, paths.root, paths.workspace, env, sock)
                try:
                    for event, command in hooks.items():
                        label = f"{agent} {event} [MCP server up]"
                        cost = medians(
                            command, payload(paths, event), relayed, paths.workspace, args.runs
                        )
                        print(f"  {label:<42} {cost}")
                finally:
                    server.close()
            startups[agent] = mcp_startup(agent, paths.root, paths.workspace, 5)
        print(
            "\nMCP server start-up as installed (waits: Codex grace 10 s as installed, 1 s by "
            "default; Claude Code 5 s with alwaysLoad, else 2 s; Gemini waits)"
        )
        for agent, line in startups.items():
            print(f"  {agent:<12} {line}")
        block_sizes()
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
