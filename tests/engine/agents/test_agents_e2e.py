"""End to end in the real agent CLIs: install, then a headless run against a local model stand-in.

Pinned releases of Claude Code, Codex CLI and Gemini CLI are installed with npm into a cache
folder (``$CONTEXT_ENGINE_AGENT_CACHE``, default ``~/.cache/context-center-e2e``). Each test
runs ``context-engine install <agent>`` into a temporary HOME, then ``claude -p`` / ``codex exec``
/ ``gemini -p`` with the model API pointed at :mod:`support.standin` on 127.0.0.1 (and every
other address refused through a proxy), and checks what the model was sent: the bounded memory
block whole, the recall block of a matching prompt, our MCP tools, and a scripted ``memory``
call's result coming back. Skips, saying why, without node/npm or when the install fails.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from context_engine.facts.codec import render_fact
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from context_engine.paths import EnginePaths
from context_engine.proposals.review import store_for
from support.standin import Recorded, Reply, StandIn

pytestmark = pytest.mark.slow

PINS: dict[str, tuple[str, str, str]] = {
    "claude-code": ("@anthropic-ai/claude-code", "2.1.197", "claude"),
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "gemini": ("@google/gemini-cli", "0.61.0", "gemini"),
}
PROMPT = "Where are release artifacts published from?"
RUN_TIMEOUT_S = 240


def cache_root() -> Path:
    configured = os.environ.get("CONTEXT_ENGINE_AGENT_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "context-center-e2e"


def agent_bin_dir(agent: str) -> Path:
    """The pinned CLI's ``node_modules/.bin``, installed on first use; skips when it cannot be."""
    package, version, binary = PINS[agent]
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to install the agent CLIs for end-to-end tests")
    spec = f"{package}@{version}"
    folder = cache_root() / spec.replace("/", "_").replace("@", "_")
    bin_dir = folder / "node_modules" / ".bin"
    if not (bin_dir / binary).exists():
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder), spec],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if done.returncode != 0 or not (bin_dir / binary).exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            pytest.skip(f"npm could not install {spec}: {' | '.join(tail)}")
    return bin_dir


@dataclass
class World:
    """A temporary HOME, a repository, a Reasonix home with facts, and the agent's env."""

    home: Path
    repo: Path
    rx: Path
    paths: EnginePaths
    mcp_delay_s: float = 0.0  # extra start-up time for our MCP server, as on a slow machine

    def env(self, bin_dir: Path, standin: StandIn, **extra: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TERM", "TMPDIR")}
        return {
            **keep,
            "HOME": str(self.home),
            "PATH": f"{bin_dir}:{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HTTPS_PROXY": standin.url,
            "HTTP_PROXY": standin.url,
            "https_proxy": standin.url,
            "http_proxy": standin.url,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "CI": "true",
            # The hooks start a store monitor as for a user; it goes soon after the test.
            "CONTEXT_ENGINE_MONITOR_IDLE": "20",
            **extra,
        }


@pytest.fixture(autouse=True)
def _monitor_stopped(tmp_path: Path) -> Any:
    """The store monitor the agents' hooks started for this test's home is stopped after it
    (an agent that passes its hooks no environment keeps it from the short idle time)."""
    yield
    from context_engine.monitor import client

    client.stop(str(tmp_path / "rx"))


def make_world(tmp_path: Path, bulk: int = 0) -> World:
    home, repo, rx = tmp_path / "home", tmp_path / "repo", tmp_path / "rx"
    (repo / ".git").mkdir(parents=True)
    home.mkdir()
    paths = EnginePaths.resolve(home=rx, workspace=repo)
    memory = Memory(paths)
    memory.save(
        name="release-target",
        description="Where the release pipeline publishes",
        body="Release artifacts are published from the main-v2 branch by the ship job.",
        type="project",
    )
    memory.save(name="tabs", description="Indentation", body="Indent with tabs.", type="project")
    if bulk:
        start = datetime(2025, 1, 1, tzinfo=UTC)
        paths.project_store.mkdir(parents=True, exist_ok=True)
        for i in range(bulk):
            when = start + timedelta(minutes=i)
            fact = Fact(
                id=f"mem-{i:032x}",
                revision=1,
                name=f"bulk-note-{i:05d}",
                title="",
                description=f"Bulk note number {i} about the build cache",
                type="reference",
                scope="project",
                body=f"Cache entry {i}.",
                created_at=when,
                updated_at=when,
            )
            (paths.project_store / f"bulk-note-{i:05d}.md").write_bytes(render_fact(fact))
    return World(home, repo, rx, paths)


def run_cli(world: World, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``context-engine --home <rx> --workspace <repo> ARGS`` with this installation's Python."""
    where = ["--home", str(world.rx), "--workspace", str(world.repo)]
    argv = [sys.executable, "-m", "context_engine", *where, *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)


def context_engine(world: World, env: dict[str, str], *args: str) -> str:
    done = run_cli(world, env, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def expected_block(world: World, agent: str) -> str:
    """The session block exactly as our hook gives it for this workspace."""
    payload = json.dumps(
        {"session_id": "expect", "cwd": str(world.repo), "hook_event_name": "SessionStart"}
    )
    argv = [
        sys.executable,
        "-m",
        "context_engine.hooks",
        "--home",
        str(world.rx),
        agent,
        "SessionStart",
    ]
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, timeout=120)
    block: str = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return block


def has_tool_result(record: Recorded) -> bool:
    raw = json.dumps(record.body)
    return any(k in raw for k in ('"tool_result"', '"function_call_output"', '"functionResponse"'))


def memory_tool(record: Recorded) -> str | None:
    return next((n for n in record.tool_names() if "context" in n and n.endswith("memory")), None)


def script(record: Recorded) -> Reply:
    """Call our ``memory`` tool once, then answer."""
    tool = memory_tool(record)
    if tool is not None and not has_tool_result(record):
        return Reply(tool=tool, args={"operation": "search", "query": "release artifacts"})
    return Reply(text="They are published from main-v2.")


def delay_mcp_start(world: World) -> None:
    """Make the installed MCP server entry start ``world.mcp_delay_s`` later (a sleep first)."""
    import tomlkit

    wrap = ["-c", f'sleep {world.mcp_delay_s}; exec "$0" "$@"']
    for path in (world.home / ".claude.json", world.home / ".gemini" / "settings.json"):
        if path.exists():
            doc = json.loads(path.read_text())
            entry = doc["mcpServers"]["context-engine"]
            entry["args"] = [*wrap, entry["command"], *entry["args"]]
            entry["command"] = "/bin/sh"
            path.write_text(json.dumps(doc))
    codex = world.home / ".codex" / "config.toml"
    if codex.exists():
        config = tomlkit.parse(codex.read_text())
        server: Any = config["mcp_servers"]["context-engine"]  # type: ignore[index]
        server["args"] = [*wrap, str(server["command"]), *server["args"]]
        server["command"] = "/bin/sh"
        codex.write_text(tomlkit.dumps(config))


def run_headless(
    argv: list[str], world: World, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """One headless agent run in the repository, with no terminal."""
    if world.mcp_delay_s:
        delay_mcp_start(world)
    return subprocess.run(
        argv,
        cwd=world.repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def run_claude(world: World, bin_dir: Path, standin: StandIn) -> subprocess.CompletedProcess[str]:
    env = world.env(
        bin_dir,
        standin,
        ANTHROPIC_BASE_URL=standin.url,
        ANTHROPIC_API_KEY="sk-ant-standin",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
    )
    context_engine(world, env, "install", "claude-code")
    argv = ["claude", "-p", PROMPT, "--allowedTools", "mcp__context-engine"]  # our 3 tools
    return run_headless(argv, world, env)


def run_codex(world: World, bin_dir: Path, standin: StandIn) -> subprocess.CompletedProcess[str]:
    codex_home = world.home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'model = "gpt-standin"\nmodel_provider = "standin"\n'
        "check_for_update_on_startup = false\n\n"
        "[model_providers.standin]\n"
        f'name = "standin"\nbase_url = "{standin.url}/v1"\n'
        'env_key = "STANDIN_API_KEY"\nwire_api = "responses"\n\n'
        "[analytics]\nenabled = false\n\n"
        f'[projects."{world.repo}"]\ntrust_level = "trusted"\n'
    )
    env = world.env(bin_dir, standin, CODEX_HOME=str(codex_home), STANDIN_API_KEY="standin")
    out = context_engine(world, env, "install", "codex")  # codex on PATH: trusts our hooks
    assert "trusted 2 context-engine hook(s) in Codex" in out, out
    argv = ["codex", "exec", "--skip-git-repo-check", "--sandbox", "read-only", PROMPT]
    return run_headless(argv, world, env)


def run_gemini(world: World, bin_dir: Path, standin: StandIn) -> subprocess.CompletedProcess[str]:
    settings = world.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps(
            {
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                "security": {"auth": {"selectedType": "gemini-api-key"}},
            },
            indent=2,
        )
    )
    env = world.env(bin_dir, standin, GEMINI_API_KEY="standin", GOOGLE_GEMINI_BASE_URL=standin.url)
    context_engine(world, env, "install", "gemini")
    argv = ["gemini", "-p", PROMPT, "--yolo", "--skip-trust"]
    return run_headless(argv, world, env)


RUNNERS = {"claude-code": run_claude, "codex": run_codex, "gemini": run_gemini}
APIS = {"claude-code": "anthropic", "codex": "openai", "gemini": "gemini"}


def headless(
    agent: str, world: World, plan: Callable[[Recorded], Reply] = script
) -> tuple[StandIn, subprocess.CompletedProcess[str]]:
    bin_dir = agent_bin_dir(agent)
    with StandIn(plan) as standin:
        done = RUNNERS[agent](world, bin_dir, standin)
    return standin, done


def report(standin: StandIn, done: subprocess.CompletedProcess[str]) -> str:
    paths = [f"{r.method} {r.path}" for r in standin.requests]
    return f"exit {done.returncode}\nstderr: {done.stderr[-1500:]}\nrequests: {paths}"


def sent_text(record: Recorded) -> str:
    """What the model saw; Gemini HTML-escapes hook context, so undo that."""
    return html.unescape(record.text) if record.api == "gemini" else record.text


def main_calls(standin: StandIn, agent: str) -> list[Recorded]:
    """The model calls of the agent's own turn (not side calls such as routing or titles)."""
    return [r for r in standin.model_calls(APIS[agent]) if PROMPT in r.text and r.tool_names()]


@pytest.mark.parametrize("agent", list(PINS))
def test_headless_run_gets_blocks_tools_and_a_memory_round_trip(agent: str, tmp_path: Path) -> None:
    world = make_world(tmp_path)
    standin, done = headless(agent, world)
    why = report(standin, done)
    calls = main_calls(standin, agent)
    assert calls, f"the agent never asked the model about the prompt\n{why}"
    first = sent_text(calls[0])
    block = expected_block(world, agent)
    assert block.startswith("# Memory") and block.strip() in first, why
    assert "<memory-recall>" in first and "main-v2 branch" in first, why
    recall = first[first.index("<memory-recall>") : first.index("</memory-recall>")]
    assert "# Memory" not in recall  # the session block never leaks into the recall query
    for ours in (block, recall):
        assert str(world.rx) not in ours and str(tmp_path) not in ours  # no local paths
    assert not [r for r in standin.refused if "127.0.0.1" in r], why
    # Offered from the first model request on: a headless run is often a single step.
    assert memory_tool(calls[0]) is not None, f"our MCP tools were not offered at first\n{why}"
    names = calls[0].tool_names()
    assert any(n.endswith("remember") for n in names) and any(n.endswith("forget") for n in names)
    answered = [r for r in calls if has_tool_result(r)]
    assert answered, f"the memory tool's result never came back to the model\n{why}"
    assert "project/release-target.md" in sent_text(answered[0]), why


@pytest.mark.parametrize("agent", list(PINS))
def test_tools_are_offered_at_first_even_when_the_server_starts_slowly(
    agent: str, tmp_path: Path
) -> None:
    # About 3 s in all: past Claude Code's 2 s headless wait and Codex's 1 s default grace,
    # within what install's settings let each agent wait (alwaysLoad: 5 s; the grace: 10 s).
    world = make_world(tmp_path)
    world.mcp_delay_s = 2.0
    standin, done = headless(agent, world)
    calls = main_calls(standin, agent)
    assert calls, report(standin, done)
    assert memory_tool(calls[0]) is not None, report(standin, done)


USER_FACT = {
    "name": "prefers-tabs",
    "description": "Indentation preference",
    "type": "user",
    "body": "Always indent with tabs.",
}


def remember_a_user_fact(record: Recorded) -> Reply:
    """Call our ``remember`` with a fact a person must confirm, then answer."""
    tool = next((n for n in record.tool_names() if "context" in n and n.endswith("remember")), None)
    if tool is not None and not has_tool_result(record):
        return Reply(tool=tool, args=USER_FACT)
    return Reply(text="Noted.")


@pytest.mark.parametrize("agent", list(PINS))
def test_a_write_that_needs_a_person_is_kept_for_review_when_none_can_be_asked(
    agent: str, tmp_path: Path
) -> None:
    # Headless, nobody can answer a confirmation: Gemini CLI has no elicitation, claude -p
    # answers for nobody, codex exec runs with approvals off. The write becomes a proposal.
    world = make_world(tmp_path)
    standin, done = headless(agent, world, remember_a_user_fact)
    why = report(standin, done)
    answered = [sent_text(r) for r in main_calls(standin, agent) if has_tool_result(r)]
    assert answered, f"the remember call's result never came back to the model\n{why}"
    assert "Kept for review, not written" in answered[0], answered[0][-3000:]
    assert "declined" not in answered[0].split("Kept for review")[1][:400]
    assert "project/prefers-tabs.md" not in {
        f.reference for f in Memory(world.paths).snapshot().facts
    }
    [kept] = store_for(world.paths).entries()
    assert kept.tool == "remember" and kept.reference == "project/prefers-tabs.md"


@pytest.mark.parametrize("agent", list(PINS))
def test_session_block_arrives_whole_at_ten_thousand_facts(agent: str, tmp_path: Path) -> None:
    world = make_world(tmp_path, bulk=10_000)
    standin, done = headless(agent, world)
    why = report(standin, done)
    block = expected_block(world, agent)
    assert len(block) <= 10_000 and "more facts: search them with the memory tool" in block
    sent = [sent_text(r) for r in main_calls(standin, agent)]
    assert any(block.strip() in text for text in sent), why


ENV_FOR = {
    "claude-code": lambda standin: {
        "ANTHROPIC_BASE_URL": standin.url,
        "ANTHROPIC_API_KEY": "sk-ant-standin",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    },
    "codex": lambda standin: {"STANDIN_API_KEY": "standin"},
    "gemini": lambda standin: {"GEMINI_API_KEY": "standin", "GOOGLE_GEMINI_BASE_URL": standin.url},
}


@pytest.mark.parametrize("agent", list(PINS))
def test_doctor_runs_the_agents_own_mcp_list(agent: str, tmp_path: Path) -> None:
    world = make_world(tmp_path)
    bin_dir = agent_bin_dir(agent)
    with StandIn(script) as standin:
        env = world.env(bin_dir, standin, **ENV_FOR[agent](standin))
        env.setdefault("CODEX_HOME", str(world.home / ".codex"))
        context_engine(world, env, "install", agent)
        done = run_cli(world, env, "doctor", agent)
    binary = PINS[agent][2]
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{binary} mcp list: " in done.stdout and "SessionStart:" in done.stdout
    if agent == "codex":
        assert "Codex sees 2 context-engine hook(s)" in done.stdout
