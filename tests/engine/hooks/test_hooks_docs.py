"""docs/agents.md as a newcomer would use it: every snippet parses, every hook command works."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from support import ROOT

DOCS = ROOT / "docs" / "agents.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOCS.read_text("utf-8"), re.S)


def hook_commands(config: dict[str, Any]) -> list[tuple[str, str]]:
    found = []
    for event, groups in config.get("hooks", {}).items():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command"
                found.append((event, hook["command"]))
    return found


def test_every_config_snippet_parses_and_registers_our_commands() -> None:
    configs = [json.loads(text) for text in blocks("json")]
    servers = [c["mcpServers"]["context-engine"] for c in configs if "mcpServers" in c]
    toml = [tomllib.loads(text) for text in blocks("toml")]
    servers += [t["mcp_servers"]["context-engine"] for t in toml]
    assert len(servers) == 3
    # The same entries install writes (Claude Code's, Gemini's, Codex's), python3 for our Python.
    from context_engine.install.targets import CODEX_GRACE_KEY, CODEX_GRACE_MS, mcp_entry

    by_hand = {"claude-code": servers[0], "gemini": servers[1], "codex": servers[2]}
    for agent, server in by_hand.items():
        assert server == {**mcp_entry(agent, None), "command": "python3"}, agent  # type: ignore[arg-type]
    assert toml[0][CODEX_GRACE_KEY] == CODEX_GRACE_MS
    events = {event for c in configs for event, _ in hook_commands(c)}
    assert events == {"SessionStart", "UserPromptSubmit", "BeforeAgent"}


@pytest.mark.slow
def test_every_documented_hook_command_answers_its_event(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    home = tmp_path / "reasonix"
    env = dict(os.environ, REASONIX_HOME=str(home))
    commands = [item for text in blocks("json") for item in hook_commands(json.loads(text))]
    assert len(commands) == 6
    for event, command in commands:
        argv = shlex.split(command)
        assert argv[:4] == ["python3", "-I", "-m", "context_engine.hooks"]  # the fast entry
        payload = {"session_id": "docs", "cwd": str(workspace), "hook_event_name": event}
        payload["prompt"] = "continue"
        out = subprocess.run(
            [sys.executable, *argv[1:]],  # this installation's Python for "python3"
            input=json.dumps(payload), capture_output=True, text=True, env=env, check=True,
        )
        data = json.loads(out.stdout)
        if event == "SessionStart":
            assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
            assert data["hookSpecificOutput"]["additionalContext"].startswith("# Memory")
        else:
            assert data == {}  # "continue" is a generic turn: nothing added
        assert str(workspace) not in out.stdout and str(home) not in out.stdout
