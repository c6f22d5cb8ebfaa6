"""``context-engine mcp`` driven by the official SDK client over stdio (issue 9, S9, S10)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.tools.spec import TOOL_SPECS
from mcp import Client, StdioServerParameters
from support import APP_DIR
from support.store import git_paths

APP = APP_DIR
GLOBAL_FACT = {
    "name": "prefers-tabs",
    "description": "Indentation preference",
    "type": "reference",
    "scope": "global",
    "body": "Always indent with tabs.",
}
LOW_RISK = {
    "name": "release-target",
    "description": "Release target for this project",
    "type": "project",
    "body": "Release artifacts are published from main-v2.",
}


@pytest.fixture()
def paths(tmp_path: Path) -> EnginePaths:
    paths = git_paths(tmp_path)
    Memory(paths).save(name="deploy-window", description="When deploys may run",
                       body=f"Deploys run only on Tuesdays from {paths.workspace}/deploy.",
                       type="project")
    return paths


def server(paths: EnginePaths) -> StdioServerParameters:
    env = dict(os.environ, PYTHONPATH=str(APP))
    args = ["-m", "context_engine", "--home", str(paths.home), "--workspace", str(paths.workspace)]
    return StdioServerParameters(command=sys.executable, args=[*args, "mcp"], env=env)


def text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def active(paths: EnginePaths) -> dict[str, str]:
    return {f.reference: f.body for f in Memory(paths).snapshot().facts}


def assert_private(paths: EnginePaths, output: str) -> None:
    for secret in (paths.workspace, paths.home, paths.project_store, paths.global_store):
        assert str(secret) not in output


async def accept(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    # The product, the change and its content, never a local path (S7.4).
    assert params.message.startswith("Context Engine: the agent wants to ")
    assert "global/prefers-tabs.md" in params.message
    assert "Always indent with tabs." in params.message
    assert "/home/" not in params.message and "/tmp/" not in params.message
    return types.ElicitResult(action="accept", content={"approve": True})


async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


@pytest.mark.slow
def test_tools_search_read_write_and_refuse_without_elicitation(paths: EnginePaths) -> None:
    outputs: list[str] = []

    async def main() -> None:
        async with Client(server(paths)) as client:
            listed = await client.list_tools()
            by_name = {tool.name: tool for tool in listed.tools}
            assert sorted(by_name) == ["forget", "memory", "remember"]
            for spec in TOOL_SPECS:
                assert by_name[spec.name].description == spec.description
                assert by_name[spec.name].input_schema == dict(spec.schema)

            found = await client.call_tool("memory", {"operation": "search", "query": "deploys"})
            read = await client.call_tool("memory", {"operation": "read", "name": "deploy-window"})
            saved = await client.call_tool("remember", LOW_RISK)
            refused = await client.call_tool("remember", GLOBAL_FACT)
            outputs.extend(text(r) for r in (found, read, saved, refused))
            assert "project/deploy-window.md" in text(found) and not found.is_error
            assert "Tuesdays" in text(read)
            assert not saved.is_error and "project/release-target.md" in text(saved)
            # No elicitation: kept for a person to review, not written, and not "declined".
            assert "Kept for review, not written: global memory requires" in text(refused)
            assert "declined" not in text(refused) and "prop-" in text(refused)

    anyio.run(main)
    facts = active(paths)
    assert "project/release-target.md" in facts
    assert "global/prefers-tabs.md" not in facts
    assert_private(paths, json.dumps(outputs))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_elicitation_decline_then_accept(paths: EnginePaths, mode: str) -> None:
    answers = [decline, accept, accept]  # no, then yes to the same call; yes to the forget

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return await answers.pop(0)(context, params)

    async def main() -> None:
        async with Client(server(paths), mode=mode, elicitation_callback=person) as client:
            declined = await client.call_tool("remember", GLOBAL_FACT)
            assert declined.is_error and "declined" in text(declined)
            assert "global/prefers-tabs.md" not in active(paths)
            written = await client.call_tool("remember", GLOBAL_FACT)
            assert not written.is_error, text(written)
            assert "global/prefers-tabs.md" in text(written)
            assert_private(paths, text(written))
            assert active(paths)["global/prefers-tabs.md"] == "Always indent with tabs."
            forgot = await client.call_tool("forget", {"name": "global/prefers-tabs.md"})
            assert not forgot.is_error, text(forgot)
            assert_private(paths, text(forgot))

    anyio.run(main)
    assert answers == []
    assert "global/prefers-tabs.md" not in active(paths)
