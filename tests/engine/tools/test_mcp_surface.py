"""The MCP surface: schema checks before any person is asked, annotations, version, proposals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.proposals.review import store_for
from mcp import Client, StdioServerParameters
from support.secrets import POSITIVES
from support.store import git_paths

pytestmark = pytest.mark.slow  # MCP server and CLI subprocesses

APP = Path(__file__).resolve().parents[3] / "app"
USER_FACT = {
    "name": "prefers-tabs",
    "description": "Indentation preference",
    "type": "user",
    "body": "Always indent with tabs.",
}


@pytest.fixture()
def paths(tmp_path: Path) -> EnginePaths:
    return git_paths(tmp_path)


def cli_args(paths: EnginePaths) -> list[str]:
    return ["-m", "context_engine", "--home", str(paths.home), "--workspace", str(paths.workspace)]


def server(paths: EnginePaths, **env: str) -> StdioServerParameters:
    environ = dict(os.environ, PYTHONPATH=str(APP), **env)
    environ.pop("CLAUDE_CODE_ENTRYPOINT", None)
    environ.update(env)
    return StdioServerParameters(
        command=sys.executable, args=[*cli_args(paths), "mcp"], env=environ
    )


def cli(paths: EnginePaths, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(APP))
    argv = [sys.executable, *cli_args(paths), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)


def text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def active(paths: EnginePaths) -> dict[str, str]:
    return {f.reference: f.body for f in Memory(paths).snapshot().facts}


def test_annotations_title_and_version(paths: EnginePaths) -> None:
    async def main() -> None:
        async with Client(server(paths)) as client:
            info = client.server_info
            assert info.name == "context-engine" and info.version  # the package version
            tools = {t.name: t for t in (await client.list_tools()).tools}
            memory, remember, forget = (tools[n].annotations for n in TOOLS)
            assert memory is not None and memory.read_only_hint and memory.idempotent_hint
            assert remember is not None and remember.read_only_hint is False
            assert forget is not None and forget.destructive_hint is True

    TOOLS = ("memory", "remember", "forget")
    anyio.run(main)


BAD_CALLS = [
    ("remember", {}, "description and body are required"),
    ("remember", {"description": " ", "body": "x", "type": "user"}, "description and body"),
    ("remember", {**USER_FACT, "colour": "red"}, "unknown argument: colour"),
    ("remember", {**USER_FACT, "expected_revision": "2"}, "expected_revision must be an integer"),
    ("memory", {"operation": "search", "query": "x", "limit": 50}, "limit must be an integer"),
    ("memory", {"operation": "find"}, "operation must be one of search, read, list"),
    ("forget", {}, "missing required argument: name"),
]


@pytest.mark.parametrize(("tool", "args", "message"), BAD_CALLS)
def test_invalid_arguments_are_refused_before_anyone_is_asked(
    paths: EnginePaths, tool: str, args: dict[str, Any], message: str
) -> None:
    asked: list[str] = []

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async def main() -> None:
        async with Client(server(paths), elicitation_callback=person) as client:
            result = await client.call_tool(tool, args)
            assert result.is_error and message in text(result), text(result)

    anyio.run(main)
    assert asked == []
    assert active(paths) == {}
    assert store_for(paths).entries() == []


def test_client_without_elicitation_keeps_a_proposal_accept_writes_it(paths: EnginePaths) -> None:
    async def main() -> str:
        async with Client(server(paths)) as client:  # like Gemini CLI: no elicitation
            result = await client.call_tool("remember", USER_FACT)
            assert not result.is_error
            return text(result)

    answer = anyio.run(main)
    assert answer.startswith("Kept for review, not written: only explicitly classified")
    assert "declined" not in answer and str(paths.home) not in answer
    assert active(paths) == {}  # a proposal, not a fact
    [kept] = store_for(paths).entries()
    assert kept.id in answer and kept.tool == "remember" and kept.agent
    assert kept.reference == "project/prefers-tabs.md"
    file = paths.workspace_data / "proposals.json"
    assert file.stat().st_mode & 0o777 == 0o600
    assert file.parent.stat().st_mode & 0o777 == 0o700

    listed = cli(paths, "proposals", "list")
    assert listed.returncode == 0 and kept.id in listed.stdout and kept.reason in listed.stdout
    done = cli(paths, "proposals", "accept", kept.id)
    assert done.returncode == 0, done.stderr
    assert active(paths) == {"project/prefers-tabs.md": "Always indent with tabs."}
    assert store_for(paths).entries() == []


def test_accept_after_a_concurrent_change_is_a_conflict(paths: EnginePaths) -> None:
    async def main() -> None:
        async with Client(server(paths)) as client:
            await client.call_tool("remember", USER_FACT)

    anyio.run(main)
    [kept] = store_for(paths).entries()
    # Someone else creates the same fact before the person accepts.
    Memory(paths).save(name="prefers-tabs", description="d", body="Spaces, two.", type="user")
    done = cli(paths, "--json", "proposals", "accept", kept.id)
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "conflict"
    assert active(paths) == {"project/prefers-tabs.md": "Spaces, two."}  # not overwritten
    assert [p.id for p in store_for(paths).entries()] == [kept.id]  # still there to dismiss
    gone = cli(paths, "proposals", "dismiss", kept.id)
    assert gone.returncode == 0 and store_for(paths).entries() == []


def test_headless_claude_answer_is_not_a_person_declining(paths: EnginePaths) -> None:
    async def auto_decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async def main(**env: str) -> str:
        params = server(paths, **env)
        async with Client(params, elicitation_callback=auto_decline) as client:
            return text(await client.call_tool("remember", USER_FACT))

    assert "Kept for review" in anyio.run(lambda: main(CLAUDE_CODE_ENTRYPOINT="sdk-cli"))
    assert "the person declined" in anyio.run(main)  # a real person's no


def test_a_codex_exec_turn_is_not_asked_and_its_write_is_kept(paths: EnginePaths) -> None:
    asked: list[str] = []

    async def auto_decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)  # codex exec declines every elicitation, nobody asked
        return types.ElicitResult(action="decline")

    async def main(trigger: str) -> str:
        meta: Any = {"x-codex-turn-metadata": {"turn_trigger": trigger, "session_id": "s"}}
        async with Client(server(paths), elicitation_callback=auto_decline) as client:
            return text(await client.call_tool("remember", USER_FACT, meta=meta))

    assert "Kept for review" in anyio.run(lambda: main("exec")) and asked == []
    assert [p.tool for p in store_for(paths).entries()] == ["remember"]
    assert "the person declined" in anyio.run(lambda: main("user"))  # a person could answer
    assert len(asked) == 1


def test_a_secret_is_refused_outright_never_kept(paths: EnginePaths) -> None:
    secret = {**USER_FACT, "body": f"the CI token is {POSITIVES['github_token'][0]}"}

    async def main() -> str:
        async with Client(server(paths)) as client:
            return text(await client.call_tool("remember", secret))

    answer = anyio.run(main)
    assert "neither written nor kept" in answer
    assert store_for(paths).entries() == [] and active(paths) == {}
    assert not (paths.workspace_data / "proposals.json").exists()


def test_facts_are_memory_resources_named_by_reference(paths: EnginePaths) -> None:
    Memory(paths).save(
        name="deploy-window",
        description="When deploys may run",
        body=f"Deploys run on Tuesdays from {paths.workspace}/deploy.",
        type="project",
    )

    async def main() -> tuple[list[str], str]:
        async with Client(server(paths)) as client:
            listed = await client.list_resources()
            uris = [str(r.uri) for r in listed.resources]
            read = await client.read_resource("memory://project/deploy-window.md")
            body = "".join(getattr(c, "text", "") for c in read.contents)
            return uris, body

    uris, body = anyio.run(main)
    assert uris == ["memory://project/deploy-window.md"]
    assert "Deploys run on Tuesdays" in body
    assert str(paths.workspace) not in body and str(paths.home) not in body
