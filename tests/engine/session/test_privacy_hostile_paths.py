"""S7.4 against hostile home and workspace paths: scrub before escape, on every surface.

Home and workspace names are drawn from an alphabet with ``' " & < > space ü 中 $ ( )``; both
live under a folder called ``home`` so the ``/home/<segment>`` fallback would cut them short if
it ran before the exact match. Each name ends in a marker: any surviving piece of a path shows.
"""

from __future__ import annotations

import json
import os
import tempfile
import unicodedata
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner
from context_engine.cli.main import cli
from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory
from context_engine.hooks.runner import handle
from context_engine.tools.mcp_server import EngineToolHost
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HOME_MARK = "Hm7q"
WS_MARK = "Ws4k"
ALPHABET = "ab' \"&<>ü中$()-"
ISSUE_HOME = "al ice ü'$x (1)"
QUERY = "where does buildscript7 live"


def _forms(path: str) -> set[str]:
    """The raw path, its NFC/NFD spellings, and the HTML-escaped forms of each."""
    out: set[str] = set()
    for form in {path, unicodedata.normalize("NFC", path), unicodedata.normalize("NFD", path)}:
        out.add(form)
        full = form.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        out.add(full)
        out.add(full.replace("'", "&#39;").replace('"', "&#34;"))
        out.add(full.replace("'", "&#x27;").replace('"', "&quot;"))
    return out


def _outputs(base: Path, home_name: str, ws_name: str, *, nfd: bool, slash: bool) -> dict[str, str]:
    """Every provider-visible text of prefix, recall, hooks, tool (engine and CLI) and MCP."""
    os_home = base / "home" / (home_name + HOME_MARK)
    os_home.mkdir(parents=True)
    alias = base / "alias"
    alias.symlink_to(os_home, target_is_directory=True)
    workspace = base / "home" / (ws_name + WS_MARK)
    (workspace / ".git").mkdir(parents=True)
    state = os_home / ".reasonix"
    spelled = unicodedata.normalize("NFD" if nfd else "NFC", str(os_home))
    body = (
        f"Run {os_home}/bin/build.sh (also {alias}/bin/build.sh, {spelled}/bin) from "
        f"{workspace}/scripts; buildscript7 writes {workspace}/out."
    )
    env_home = str(alias) + ("/" if slash else "")
    with mock.patch.dict(os.environ, {"HOME": env_home}):
        memory = Memory(ContextEngine.open(workspace, state).paths)
        memory.save(
            name="build-script", description="Where buildscript7 lives", body=body, type="project"
        )
        memory.save(name="home-layout", description=f"Home layout {os_home}", body=body,
                    type="user", scope="global")
        engine = ContextEngine.open(workspace, state)
        out: dict[str, str] = {"prefix": engine.stable_prefix()}
        session = engine.start_session()
        out["recall"] = session.process_user_turn(QUERY).text_for_provider
        memory.save(name="later", description="Later note", body=body, type="project")
        out["notes"] = session.process_user_turn("continue please now").text_for_provider
        for op in (
            {"operation": "search", "query": "buildscript7"},
            {"operation": "read", "name": "build-script"},
            {"operation": "list"},
        ):
            out[f"tool {op['operation']}"] = engine.run_tool(
                "memory", op, controller="headless"
            ).result
            out[f"mcp {op['operation']}"] = EngineToolHost(engine).call("memory", op, False).text
        args = json.dumps({"operation": "search", "query": "buildscript7"})
        runner = CliRunner()
        done = runner.invoke(
            cli,
            [
                "--home",
                str(state),
                "--workspace",
                str(workspace),
                "tool",
                "memory",
                "--args",
                args,
                "--controller",
                "headless",
            ],
        )
        out["cli tool"] = json.loads(done.output)["result"]
        recalled = runner.invoke(
            cli, ["--home", str(state), "--workspace", str(workspace), "--json", "recall", QUERY]
        )
        out["cli recall"] = json.loads(recalled.stdout)["block"]
        for agent, start, prompt in (
            ("claude-code", "SessionStart", "UserPromptSubmit"),
            ("gemini", "SessionStart", "BeforeAgent"),
        ):
            for event in (start, prompt):
                payload = {
                    "session_id": f"s-{agent}",
                    "cwd": str(workspace),
                    "hook_event_name": event,
                    "prompt": QUERY,
                }
                raw = handle(agent, event, json.dumps(payload), home=str(state))
                out[f"hook {agent} {event}"] = json.dumps(json.loads(raw), ensure_ascii=False)
    assert "buildscript7" in out["recall"] and "<memory-recall>" in out["recall"]
    assert "buildscript7" in out["tool search"] and "buildscript7" in out["cli tool"]
    assert "buildscript7" in out["cli recall"]
    return out


def _check(base: Path, home_name: str, ws_name: str, *, nfd: bool, slash: bool) -> None:
    out = _outputs(base, home_name, ws_name, nfd=nfd, slash=slash)
    os_home = str(base / "home" / (home_name + HOME_MARK))
    workspace = str(base / "home" / (ws_name + WS_MARK))
    needles = _forms(os_home) | _forms(workspace) | _forms(str(base / "alias"))
    for surface, text in out.items():
        for needle in needles:
            assert needle not in text, (surface, needle)
        for mark in (HOME_MARK, WS_MARK):
            assert mark not in text, (surface, mark, text[:2000])


def test_the_issue_home_never_reaches_the_provider(tmp_path: Path) -> None:
    """The home from issue 17 (``al ice ü'$x (1)``) on every surface."""
    _check(tmp_path, ISSUE_HOME, "w's & <p> 中 $(x)", nfd=True, slash=True)


names = st.text(alphabet=ALPHABET, min_size=1, max_size=10).filter(
    lambda s: s.strip(".") != "" and s not in (".", "..")
)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(home_name=names, ws_name=names, nfd=st.booleans(), slash=st.booleans())
def test_drawn_paths_never_reach_the_provider(
    home_name: str, ws_name: str, nfd: bool, slash: bool
) -> None:
    """Hypothesis: drawn home and workspace names, raw or escaped, never in any output."""
    with tempfile.TemporaryDirectory() as tmp:
        _check(Path(tmp), home_name, ws_name, nfd=nfd, slash=slash)
