"""``context-engine tool`` (S12): decision object, exit codes, confirmation front ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from context_engine.cli.main import cli
from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.policy import confirmation as confirmation_module
from context_engine.proposals.review import accept, store_for
from support import APP_DIR, RELEASE
from support.secrets import POSITIVES


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


def test_headless_write_that_needs_a_person_is_kept_as_a_proposal(
    dirs: tuple[Path, Path],
) -> None:
    """S15.2 as the MCP server keeps it: not written, kept for review, accepted by a person."""
    args = dict(RELEASE, type="user")
    code, payload = run(dirs, "remember", "--controller", "headless", "--args", json.dumps(args))
    assert (code, payload["decision"], payload["written"]) == (1, "confirm", False)
    paths = EnginePaths.resolve(home=dirs[0], workspace=dirs[1])
    [kept] = store_for(paths).entries()
    assert str(payload["result"]).startswith("Kept for review, not written: only explicitly")
    assert kept.id in str(payload["result"]) and str(dirs[0]) not in str(payload["result"])
    assert (kept.tool, kept.reference, kept.agent) == (
        "remember", "project/release-target.md", "context-engine tool")
    assert memory(dirs).snapshot().facts == ()
    accept(ContextEngine(paths), kept.id)
    assert memory(dirs).resolve("release-target").body == RELEASE["body"]


def test_headless_write_that_may_hold_a_secret_is_not_kept(dirs: tuple[Path, Path]) -> None:
    args = dict(RELEASE, type="user", body=f"the CI token is {POSITIVES['github_token'][0]}")
    code, payload = run(dirs, "remember", "--controller", "headless", "--args", json.dumps(args))
    assert (code, payload["written"]) == (1, False)
    paths = EnginePaths.resolve(home=dirs[0], workspace=dirs[1])
    assert store_for(paths).entries() == [] and memory(dirs).snapshot().facts == ()


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
    monkeypatch.setattr(confirmation_module, "person_at_terminal", lambda: True)
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
    monkeypatch.setattr(confirmation_module, "person_at_terminal", lambda: True)
    code, payload = run(dirs, "remember", "--controller", "headless", "--args",
                        json.dumps(dict(RELEASE, type="user")), input="y\n")
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
    monkeypatch.setattr(confirmation_module, "person_at_terminal", lambda: True)
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


def _process(
    dirs: tuple[Path, Path], tool: str, args: str, **how: Any
) -> subprocess.CompletedProcess[str]:
    """``python -m context_engine … tool TOOL --args ARGS`` in a real process."""
    home, workspace = dirs
    where = ["--home", str(home), "--workspace", str(workspace)]
    command = [sys.executable, "-m", "context_engine", *where, "tool", tool, "--args", args]
    env = dict(os.environ, PYTHONPATH=str(APP_DIR))
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, **how)


@pytest.mark.slow
def test_real_process_without_tty_fails_closed(dirs: tuple[Path, Path]) -> None:
    """The installed entry point in a subprocess (stdin a pipe): exit 1, decision printed."""
    proc = _process(dirs, "remember", json.dumps(dict(RELEASE, type="feedback")), input="y\n")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["decision"] == "confirm"
    assert "Apply this memory change?" not in proc.stderr  # no prompt without a TTY


@pytest.mark.slow
def test_tool_takes_the_engine_tty_rule_stdin_a_tty_but_stderr_a_pipe_fails_closed(
    dirs: tuple[Path, Path],
) -> None:
    """The prompt goes to stderr: with stderr a pipe nobody sees it, so nobody is asked.

    ``tool`` used its own rule (stdin only) and prompted into the pipe; it now runs through
    ``ContextEngine.run_tool`` and its ``default_confirmation`` (stdin and stderr TTYs).
    """
    import pty

    leader, follower = pty.openpty()
    try:
        os.write(leader, b"y\n")  # a "yes" waiting on the terminal, should anyone read it
        proc = _process(dirs, "remember", json.dumps(dict(RELEASE, scope="global")), stdin=follower)
    finally:
        os.close(follower)
        os.close(leader)
    payload = json.loads(proc.stdout)
    assert (proc.returncode, payload["decision"], payload["written"]) == (1, "confirm", False)
    assert "Apply this memory change?" not in proc.stderr
    assert memory(dirs).snapshot().facts == ()


def test_tool_memory_reuses_the_persisted_index_across_calls(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second ``tool memory`` process opens the index the first one saved: no rebuild."""
    from context_engine.recall.engine import Recaller
    from support.store import settle_all

    settle_all(monkeypatch)  # every file counts as settled
    for name in ("release-target", "deploy-notes", "lint-rules"):
        fact = dict(RELEASE, name=name, description=f"{name} for this project")
        run(dirs, "remember", "--controller", "headless", "--args", json.dumps(fact))
    search = '{"operation": "search", "query": "release artifacts"}'
    code, first = run(dirs, "memory", "--args", search)
    assert code == 0 and "project/release-target.md" in str(first["result"])
    builds: list[int] = []
    real_init = Recaller.__init__

    def counting_init(self: Recaller, facts: object = (), **kwargs: object) -> None:
        facts = list(facts)  # type: ignore[call-overload]  # reason: any iterable of facts
        if facts:
            builds.append(len(facts))
        real_init(self, facts, **kwargs)  # type: ignore[arg-type]  # reason: passed through

    monkeypatch.setattr(Recaller, "__init__", counting_init)
    for query in ("release artifacts", "deploy notes"):
        code, again = run(dirs, "memory", "--args", search.replace("release artifacts", query))
        assert code == 0 and "project/" in str(again["result"])
    assert builds == []  # built once, by the first call; reopened from disk since
