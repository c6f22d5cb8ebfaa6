"""Agent hooks: Claude Code (and Codex, Gemini) payloads in, documented JSON out (issue 9)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from context_engine.facts.memory import Memory
from context_engine.hooks.runner import handle
from context_engine.paths import EnginePaths
from support import APP_DIR

APP = APP_DIR
ABSOLUTE = re.compile(r"(?<![\w<])/(?:tmp|home|root|Users|var|private)\b")


@pytest.fixture()
def env(tmp_path: Path) -> tuple[Path, Path, EnginePaths]:
    workspace = tmp_path / "proj"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "CLAUDE.md").write_text("Use the staging cluster for smoke tests.\n", "utf-8")
    home = tmp_path / "reasonix"
    paths = EnginePaths.resolve(home=home, workspace=workspace)
    memory = Memory(paths)
    memory.save(name="release-target", description="Release target for this project",
                body=f"Release artifacts are published from main-v2 (built in {workspace}/dist).",
                type="project")
    memory.save(name="prefers-tabs", description="Indentation preference",
                body="Always indent with tabs.", type="feedback", scope="global")
    return workspace, home, paths


def payload(workspace: Path, event: str, prompt: str = "", session: str = "abc-123") -> str:
    """A payload shaped like the ones Claude Code sends (recorded field set)."""
    data = {
        "session_id": session,
        "transcript_path": f"/home/someone/.claude/projects/-x/{session}.jsonl",
        "cwd": str(workspace),
        "permission_mode": "default",
        "hook_event_name": event,
    }
    if event == "SessionStart":
        data["source"] = "startup"
    else:
        data["prompt"] = prompt
    return json.dumps(data)


def context_of(out: str) -> str:
    data = json.loads(out)
    spec = data.get("hookSpecificOutput", {})
    return str(spec.get("additionalContext", ""))


def run_cli(args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(APP))
    return subprocess.run(
        [sys.executable, *args], input=stdin, capture_output=True, text=True, env=env, check=True
    )


@pytest.mark.slow
def test_user_prompt_submit_over_the_cli(env: tuple[Path, Path, EnginePaths]) -> None:
    workspace, home, paths = env
    stdin = payload(workspace, "UserPromptSubmit", "Where are release artifacts published from?")
    cmd = ["-m", "context_engine", "--home", str(home), "hook", "claude-code", "UserPromptSubmit"]
    out = run_cli(cmd, stdin).stdout
    data = json.loads(out)
    assert data["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    added = context_of(out)
    assert "<memory-recall>" in added and "published from main-v2" in added
    trace = json.loads((paths.workspace_data / "recall" / "recall-last.json").read_text("utf-8"))
    assert trace["query"] == "Where are release artifacts published from?"
    assert trace["hits"] and trace["hits"][0]["name"] == "release-target"
    for text in (str(workspace), str(home), str(paths.project_store)):
        assert text not in out
    assert not ABSOLUTE.search(out)


@pytest.mark.slow
def test_generic_turn_adds_nothing_over_the_lean_entry(env: tuple[Path, Path, EnginePaths]) -> None:
    workspace, home, paths = env
    stdin = payload(workspace, "UserPromptSubmit", "continue")
    out = run_cli(["-m", "context_engine.hooks", "--home", str(home), "claude-code"], stdin).stdout
    assert json.loads(out) == {}
    trace = json.loads((paths.workspace_data / "recall" / "recall-last.json").read_text("utf-8"))
    assert trace["query"] == "continue" and trace["suppressed"] == "generic user turn"


def test_session_start_adds_memory_and_instructions(env: tuple[Path, Path, EnginePaths]) -> None:
    workspace, home, _ = env
    start = payload(workspace, "SessionStart")
    out = handle("claude-code", "SessionStart", start, home=str(home))
    added = context_of(out)
    assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert added.startswith("# Memory")
    assert "### prefers tabs (global/feedback)" in added
    assert "[release target](release-target.md)" in added
    assert "Use the staging cluster" not in added  # Claude Code loads CLAUDE.md itself
    both = handle("claude-code", None, start, home=str(home), with_instructions=True)
    assert "Use the staging cluster" in context_of(both) and "workspace/CLAUDE.md" in both
    for text in (out, both):
        assert str(workspace) not in text and str(home) not in text and not ABSOLUTE.search(text)


def test_mid_session_change_rides_the_next_prompt_once(env: tuple[Path, Path, EnginePaths]) -> None:
    workspace, home, paths = env
    handle("claude-code", "SessionStart", payload(workspace, "SessionStart"), home=str(home))
    Memory(paths).save(name="deploy-window", description="When deploys may run",
                       body="Deploys run only on Tuesdays.", type="project")
    first = context_of(
        handle("claude-code", None, payload(workspace, "UserPromptSubmit", "hi"), home=str(home))
    )
    assert "<memory-update>" in first and "project/deploy-window.md" in first
    assert "Deploys run only on Tuesdays." in first
    ok = payload(workspace, "UserPromptSubmit", "ok")
    again = handle("claude-code", None, ok, home=str(home))
    assert json.loads(again) == {}
    other = payload(workspace, "UserPromptSubmit", "hi", session="other-session")
    # A session that never saw a prefix has no baseline: nothing to report, nothing invented.
    assert json.loads(handle("claude-code", None, other, home=str(home))) == {}


@pytest.mark.parametrize(
    ("agent", "event"), [("codex", "UserPromptSubmit"), ("gemini", "BeforeAgent")]
)
def test_codex_and_gemini_shapes(
    env: tuple[Path, Path, EnginePaths], agent: str, event: str
) -> None:
    workspace, home, _ = env
    stdin = payload(workspace, event, "Where are release artifacts published from?")
    out = handle(agent, None, stdin, home=str(home))  # type: ignore[arg-type]
    data = json.loads(out)
    assert data["hookSpecificOutput"]["hookEventName"] == event
    assert "<memory-recall>" in data["hookSpecificOutput"]["additionalContext"]


def test_unknown_event_and_bad_input_add_nothing(env: tuple[Path, Path, EnginePaths]) -> None:
    workspace, home, _ = env
    tool_use = payload(workspace, "PreToolUse")
    assert handle("claude-code", "PreToolUse", tool_use, home=str(home)) == "{}"
    out = run_cli(["-m", "context_engine.hooks", "--home", str(home), "claude-code"], "[1, 2")
    assert json.loads(out.stdout) == {} and "nothing added" in out.stderr


def test_gemini_hook_context_in_front_of_the_prompt_never_enters_the_query() -> None:
    from context_engine.hooks.protocol import HookPayload

    text = (
        "<hook_context># Memory\n\n- [release target](release-target.md)\n</hook_context>\n\n"
        "Where are release artifacts published from?"
    )
    payload = HookPayload.parse(json.dumps({"prompt": text, "hook_event_name": "BeforeAgent"}))
    assert payload.prompt == "Where are release artifacts published from?"
    inner = "Explain <hook_context> tags </hook_context> please"
    assert HookPayload.parse(json.dumps({"prompt": inner})).prompt == inner
