"""The documented ``context-engine hook …`` answers before click or any command loads (issue 14)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from context_engine.cli.entry import hook_argv
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths

ROOT = Path(__file__).resolve().parents[3]
RUN = "import sys; sys.argv = ['context-engine', *sys.argv[1:]]; from {module} import main; main()"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["hook", "claude-code", "UserPromptSubmit"], ["claude-code", "UserPromptSubmit"]),
        (["--home", "/h", "hook", "codex"], ["--home=/h", "codex"]),
        (
            ["--home=/h", "--workspace", "/w", "hook", "gemini-cli", "BeforeAgent"],
            ["--home=/h", "--workspace=/w", "gemini-cli", "BeforeAgent"],
        ),
        (["hook", "--with-instructions", "claude-code"], ["--with-instructions", "claude-code"]),
        (["--home", "/h", "hook", "--home", "/x", "codex"], None),  # twice: the CLI decides
        (["--json", "hook", "codex"], None),
        (["--home", "--workspace", "hook"], None),
        (["list"], None),
        ([], None),
    ],
)
def test_plain_hook_command_lines_are_recognised(
    argv: list[str], expected: list[str] | None
) -> None:
    assert hook_argv(argv) == expected


def _run(module: str, argv: list[str], payload: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "app"), "CONTEXT_ENGINE_HOOK_RELAY": "0"}
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-c", RUN.format(module=module), *argv],
        input=payload,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp,
        timeout=120,
        check=True,
    )


def _imported(stderr: str) -> list[str]:
    """Module names from ``python -X importtime`` output."""
    lines = stderr.splitlines()
    return [line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")]


@pytest.mark.slow  # two whole processes
def test_the_documented_hook_skips_click_and_answers_as_the_full_cli(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    paths = EnginePaths.resolve(home=home, workspace=ws)
    Memory(paths).save(name="docker-build", description="Docker builds", body="Use buildx cache.")
    payload = json.dumps(
        {
            "session_id": "s1",
            "cwd": str(ws),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "why is the docker build slow?",
        }
    )
    argv = ["--home", str(home), "hook", "claude-code", "UserPromptSubmit"]
    fast = _run("context_engine.cli.entry", argv, payload, tmp_path)
    imported = _imported(fast.stderr)
    assert "context_engine.hooks.runner" in imported
    cli_modules = [m for m in imported if m.startswith("context_engine.cli.")]
    assert "click" not in imported and cli_modules == ["context_engine.cli.entry"]
    assert "buildx" in fast.stdout
    slow = _run("context_engine.cli.main", argv, payload.replace("s1", "s2"), tmp_path)
    assert "click" in _imported(slow.stderr)
    assert json.loads(slow.stdout) == json.loads(fast.stdout)
