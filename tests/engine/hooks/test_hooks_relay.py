"""Hooks answered by a running ``context-engine mcp`` of the same workspace (issue 9)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory
from context_engine.hooks import relay
from context_engine.paths import EnginePaths
from mcp import Client, StdioServerParameters
from support import APP_DIR
from support.store import git_paths, settle_all

APP = APP_DIR
PROMPT = "Where are release artifacts published from?"


@pytest.fixture()
def paths(tmp_path: Path) -> EnginePaths:
    paths = git_paths(tmp_path)
    Memory(paths).save(name="release-target", description="Release target for this project",
                       body="Release artifacts are published from main-v2.", type="project")
    return paths


def hook(
    paths: EnginePaths, prompt: str, relay_on: bool, cwd: Path | None = None
) -> tuple[str, str]:
    env = dict(os.environ, PYTHONPATH=str(APP), CONTEXT_ENGINE_HOOK_RELAY="1" if relay_on else "0",
               CONTEXT_ENGINE_HOOK_VERBOSE="1")
    payload = {
        "session_id": "relay-test",
        "cwd": str(cwd or paths.workspace),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    cmd = [sys.executable, "-m", "context_engine.hooks", "--home", str(paths.home), "claude-code"]
    done = subprocess.run(
        cmd, input=json.dumps(payload), capture_output=True, text=True, env=env, check=True
    )
    return done.stdout, done.stderr


def test_engine_revalidates_facts_on_every_read(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    engine = ContextEngine(paths)
    first = engine.active_facts()
    assert engine.active_facts() is first  # nothing changed: reused
    target = paths.project_store / "release-target.md"
    before = os.stat(target)
    data = target.read_bytes()
    with open(target, "r+b") as handle:  # same inode, size and (restored) mtime
        handle.write(data.replace(b"main-v2", b"main-v3"))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = engine.active_facts()
    assert again is not first and "main-v3" in again[0].body
    assert [f.body for f in again] == [f.body for f in Memory(paths).snapshot().facts]


@pytest.mark.slow
def test_running_mcp_server_answers_the_hook(paths: EnginePaths) -> None:
    sock = relay.socket_path(paths)
    assert sock is not None
    expected, direct_err = hook(paths, PROMPT, relay_on=False)
    assert "answered by the running MCP server" not in direct_err
    env = dict(os.environ, PYTHONPATH=str(APP))
    args = ["-m", "context_engine", "--home", str(paths.home), "--workspace", str(paths.workspace)]
    params = StdioServerParameters(command=sys.executable, args=[*args, "mcp"], env=env)
    results: dict[str, tuple[str, str]] = {}

    async def main() -> None:
        async with Client(params) as client:
            await client.list_tools()
            for _ in range(200):
                if sock.exists():
                    break
                await anyio.sleep(0.05)
            assert stat.S_IMODE(os.stat(sock.parent).st_mode) == 0o700
            assert stat.S_IMODE(os.lstat(sock).st_mode) == 0o600
            results["same"] = await anyio.to_thread.run_sync(hook, paths, PROMPT, True)
            Memory(paths).save(name="deploy-window", description="When deploys may run",
                               body="Deploys run only on Tuesdays.", type="project")
            results["note"] = await anyio.to_thread.run_sync(hook, paths, "hello there", True)
            other = paths.workspace / "sub"
            other.mkdir()
            results["other"] = await anyio.to_thread.run_sync(
                lambda: hook(paths, PROMPT, True, cwd=other)
            )

    anyio.run(main)
    out, err = results["same"]
    assert "answered by the running MCP server" in err
    assert out == expected and "<memory-recall>" in out
    out, err = results["note"]
    assert "answered by the running MCP server" in err
    assert "project/deploy-window.md" in out and "Tuesdays" in out
    out, err = results["other"]  # another workspace directory: answered in the hook's process
    assert "answered by the running MCP server" not in err and "<memory-recall>" in out
    for text in (results["same"][0], results["note"][0]):
        assert str(paths.workspace) not in text and str(paths.home) not in text
    assert not sock.exists()  # the server removed its socket when the client closed it


def test_stale_socket_is_replaced_and_a_second_server_defers(paths: EnginePaths) -> None:
    sock = relay.socket_path(paths)
    assert sock is not None and relay.private_dir(sock.parent)
    sock.write_text("left over by a crashed server")
    other = EnginePaths.resolve(home=paths.home, workspace=paths.workspace / "elsewhere")

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(relay.serve, paths, lambda request: "first")
            for _ in range(200):
                if relay._alive(sock):
                    break
                await anyio.sleep(0.02)
            with anyio.fail_after(5):
                await relay.serve(paths, lambda request: "second")  # returns: one is running
            assert await anyio.to_thread.run_sync(relay.ask, paths, {}) == "first"
            # A hook of another workspace directory is not answered by this server.
            (paths.workspace / "elsewhere").mkdir()
            assert await anyio.to_thread.run_sync(relay.ask, other, {}) is None
            tasks.cancel_scope.cancel()

    anyio.run(main)
    assert not sock.exists()
