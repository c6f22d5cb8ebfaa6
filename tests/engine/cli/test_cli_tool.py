"""``context-engine tool`` (S12): decision object, exit codes, confirmation front ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from context_engine.cli import tool_cmds
from context_engine.cli.main import cli
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths

APP_DIR = Path(__file__).resolve().parents[3] / "app"
RELEASE = {
    "name": "release-target",
    "description": "Release target for this project",
    "type": "project",
    "body": "Release artifacts are published from main-v2.",
}


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    return tmp_path / "home", workspace


def run(
    dirs: tuple[Path, Path], *args: str, input: str | None = None
) -> tuple[int, dict[str, object]]:
    home, workspace = dirs
    result = CliRunner().invoke(
        cli,
        ["--home", str(home), "--workspace", str(workspace), "--json", "tool", *args],
        input=input,
    )
    return result.exit_code, json.loads(result.stdout)


def memory(dirs: tuple[Path, Path]) -> Memory:
    return Memory(EnginePaths.resolve(home=dirs[0], workspace=dirs[1]))


def test_headless_low_risk_write(dirs: tuple[Path, Path]) -> None:
    code, payload = run(dirs, "remember", "--controller", "headless", "--args", json.dumps(RELEASE))
    assert code == 0
    assert payload == {
        "decision": "auto",
        "reason": "new explicitly classified project/reference fact",
        "written": True,
        "result": "Saved project/release-target.md (revision 1).",
    }
    assert memory(dirs).resolve("release-target").revision == 1


@pytest.mark.parametrize("mode", ["ask", "auto", "yolo"])
def test_yolo_does_not_skip_confirmation(dirs: tuple[Path, Path], mode: str) -> None:
    args = dict(RELEASE, type="user")
    code, payload = run(
        dirs, "remember", "--controller", "headless", "--mode", mode, "--args", json.dumps(args)
    )
    assert code == 1
    assert payload["decision"] == "confirm" and payload["written"] is False
    assert payload["reason"] == "only explicitly classified project/reference facts are low-risk"
    assert memory(dirs).snapshot().facts == ()


def test_subagent_is_refused(dirs: tuple[Path, Path]) -> None:
    code, payload = run(dirs, "remember", "--controller", "subagent", "--args", json.dumps(RELEASE))
    assert (code, payload["decision"], payload["written"]) == (1, "denied", False)
    assert memory(dirs).snapshot().facts == ()


def test_interactive_without_a_tty_fails_closed(dirs: tuple[Path, Path]) -> None:
    """CliRunner's stdin is not a TTY: no prompt is shown and nothing is written."""
    code, payload = run(
        dirs, "remember", "--args", json.dumps(dict(RELEASE, scope="global")), input="y\n"
    )
    assert (code, payload["decision"], payload["written"]) == (1, "confirm", False)
    assert payload["reason"] == "global memory requires confirmation"


@pytest.mark.parametrize(("answer", "written"), [("y\n", True), ("n\n", False), ("\n", False)])
def test_interactive_on_a_tty_asks_with_default_no(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, answer: str, written: bool
) -> None:
    monkeypatch.setattr(tool_cmds, "stdin_is_tty", lambda: True)
    home, workspace = dirs
    result = CliRunner().invoke(
        cli,
        [
            "--home",
            str(home),
            "--workspace",
            str(workspace),
            "tool",
            "remember",
            "--args",
            json.dumps(dict(RELEASE, scope="global")),
        ],
        input=answer,
    )
    payload = json.loads(result.stdout)  # the prompt went to stderr; stdout is one object
    assert payload["written"] is written
    assert result.exit_code == (0 if written else 1)
    assert "global memory requires confirmation" in result.stderr
    assert "Release artifacts are published from main-v2." in result.stderr


def test_headless_on_a_tty_is_never_prompted(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tool_cmds, "stdin_is_tty", lambda: True)
    code, payload = run(
        dirs,
        "remember",
        "--controller",
        "headless",
        "--args",
        json.dumps(dict(RELEASE, type="user")),
        input="y\n",
    )
    assert (code, payload["written"]) == (1, False)


def test_forget_and_memory(dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    run(dirs, "remember", "--controller", "headless", "--args", json.dumps(RELEASE))
    code, listed = run(dirs, "memory", "--args", '{"operation": "list"}')
    assert code == 0 and "project/release-target.md" in str(listed["result"])
    code, payload = run(
        dirs, "forget", "--controller", "headless", "--args", '{"name": "release-target"}'
    )
    assert (code, payload["reason"], payload["written"]) == (
        1,
        "forgetting memory requires confirmation",
        False,
    )
    monkeypatch.setattr(tool_cmds, "stdin_is_tty", lambda: True)
    code, payload = run(dirs, "forget", "--args", '{"name": "release-target"}', input="y\n")
    assert (code, payload["result"]) == (0, "Archived project/release-target.md.")
    assert memory(dirs).snapshot().facts == ()


@pytest.mark.parametrize("bad", ["{not json", "[1, 2]"])
def test_bad_args_are_usage_errors(dirs: tuple[Path, Path], bad: str) -> None:
    home, workspace = dirs
    result = CliRunner().invoke(
        cli, ["--home", str(home), "--workspace", str(workspace), "tool", "remember", "--args", bad]
    )
    assert result.exit_code == 2


def test_no_local_path_in_output(dirs: tuple[Path, Path]) -> None:
    """S7.4: the decision object names facts by reference, never by path."""
    run(dirs, "remember", "--controller", "headless", "--args", json.dumps(RELEASE))
    for args in (RELEASE, {"name": "x", "description": "d", "body": "b", "type": "user"}):
        _, payload = run(dirs, "remember", "--controller", "headless", "--args", json.dumps(args))
        text = json.dumps(payload)
        assert str(dirs[0]) not in text and str(dirs[1]) not in text


def test_real_process_without_tty_fails_closed(dirs: tuple[Path, Path]) -> None:
    """The installed entry point in a subprocess (stdin a pipe): exit 1, decision printed."""
    home, workspace = dirs
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "context_engine",
            "--home",
            str(home),
            "--workspace",
            str(workspace),
            "tool",
            "remember",
            "--args",
            json.dumps(dict(RELEASE, type="feedback")),
        ],
        input="y\n",
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(APP_DIR)),
        timeout=60,
    )
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["decision"] == "confirm"
    assert "Apply this memory change?" not in proc.stderr  # no prompt without a TTY
