"""The agent-host API end to end on real stores (S7.1–S7.4, S8.10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory
from context_engine.session.prefix import GLOBAL_HEADING, INDEX_HEADING


@pytest.fixture()
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "work space" / "proj"
    (workspace / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    return workspace, home


def guidance(prefix: str) -> str:
    if GLOBAL_HEADING not in prefix:
        return ""
    return prefix.split(GLOBAL_HEADING, 1)[1].split(INDEX_HEADING, 1)[0]


@pytest.fixture()
def engine(dirs: tuple[Path, Path]) -> ContextEngine:
    """An engine over ``dirs`` holding the two seed facts."""
    workspace, home = dirs
    opened = ContextEngine.open(workspace=workspace, home=home)
    seed(opened)
    return opened


def seed(engine: ContextEngine) -> Memory:
    memory = Memory.open(engine.paths)
    memory.save(name="prefers-tabs", description="Indentation preference",
                body="Always indent with tabs, never spaces.", type="feedback", scope="global")
    memory.save(name="release-target", description="Release target for this project",
                body="Release artifacts are published from main-v2.", type="project",
                scope="project")
    return memory


def test_global_feedback_appears_in_the_prefix(engine: ContextEngine) -> None:
    prefix = engine.start_session("headless").stable_prefix
    assert prefix.startswith("# Memory\n")
    assert "### prefers tabs (global/feedback)\n\nAlways indent with tabs" in guidance(prefix)
    assert "- [release target](release-target.md) — [project/project]" in prefix
    assert "Release artifacts" not in prefix  # other bodies enter only through recall


@pytest.mark.parametrize("name", ["project/prefers-tabs.md", "prefers-tabs"])
def test_equivalent_project_fact_changes_next_prefix_and_notes_current(
    dirs: tuple[Path, Path], name: str
) -> None:
    workspace, home = dirs
    engine = ContextEngine.open(workspace=workspace, home=home)
    memory = seed(engine)
    current = engine.start_session("headless")
    before = current.stable_prefix
    assert "prefers tabs" in guidance(before)

    # Another process (the CLI, the app) adds the project fact mid-session.
    memory.save(name=name, description="Indentation here",
                body="This project indents with four spaces.", type="project", scope="project")

    assert current.stable_prefix == before  # the current prefix never changes
    turn = current.process_user_turn("please look at the build")
    assert "<memory-update>" in turn.notes and turn.notes in turn.text_for_provider
    assert "- saved project/prefers-tabs.md" in turn.notes
    assert "This project indents with four spaces." in turn.notes
    assert "global/prefers-tabs.md" in turn.notes  # overridden or forgotten, said explicitly
    assert turn.text_for_provider.startswith("please look at the build")
    again = current.process_user_turn("and the tests")
    assert again.notes == "" and "<memory-update>" not in again.text_for_provider

    following = ContextEngine.open(workspace=workspace, home=home).start_session("headless")
    assert "prefers tabs" not in guidance(following.stable_prefix)
    assert GLOBAL_HEADING not in following.stable_prefix


def test_nothing_else_changes_mid_session(engine: ContextEngine) -> None:
    session = engine.start_session("interactive")
    turn = session.process_user_turn("continue")
    assert turn.text_for_provider == "continue"
    assert turn.recall_block == "" and turn.notes == ""


def test_matching_turn_gets_recall_and_records_trace(engine: ContextEngine) -> None:
    session = engine.start_session("headless")
    turn = session.process_user_turn("Where are release artifacts published from?")
    assert "<memory-recall>" in turn.recall_block
    assert turn.text_for_provider.endswith(turn.recall_block)
    last = engine.paths.workspace_data / "recall" / "recall-last.json"
    trace = json.loads(last.read_text("utf-8"))
    assert trace["query"] == "Where are release artifacts published from?"
    assert any(hit["name"] == "release-target" for hit in trace["hits"])


def test_instruction_edit_mid_session_is_a_note(dirs: tuple[Path, Path]) -> None:
    workspace, home = dirs
    (workspace / "AGENTS.md").write_text("Run the linter.\n", encoding="utf-8")
    engine = ContextEngine.open(workspace=workspace, home=home)
    session = engine.start_session("headless")
    assert "Run the linter." in session.stable_prefix
    (workspace / "AGENTS.md").write_text("Run the linter and the type checker.\n", encoding="utf-8")
    turn = session.process_user_turn("hello there")
    assert "standing instructions workspace/AGENTS.md changed" in turn.notes
    assert "type checker" in turn.notes
    assert "type checker" not in session.stable_prefix


def test_no_local_path_in_provider_visible_text(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, home = dirs
    user_home = workspace.parent.parent / "user-home"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    (workspace / "AGENTS.md").write_text(f"Build output goes to {workspace}/dist.\n", "utf-8")
    (home / "AGENTS.md").write_text(f"My notes live in {home}/notes and {user_home}.\n", "utf-8")
    engine = ContextEngine.open(workspace=workspace, home=home)
    memory = seed(engine)
    memory.save(name="build-dir", description="Where the build writes",
                body=f"Artifacts are written to {workspace}/dist by the release build.",
                type="project", scope="project")
    session = engine.start_session("headless")
    texts = [session.stable_prefix]
    memory.save(name="cache-dir", description="Cache location",
                body=f"The cache lives in {home}/cache and {engine.paths.project_store}.",
                type="reference", scope="project")
    (workspace / "AGENTS.md").write_text(f"Outputs: {workspace}/out\n", "utf-8")
    for message in ("where does the release build write artifacts?", "cache location?", "continue"):
        turn = session.process_user_turn(message)
        texts.append(turn.text_for_provider)
    blob = json.dumps(texts, ensure_ascii=False)
    assert "<memory-update>" in blob and "<memory-recall>" in blob
    for secret in (workspace, workspace.parent, home, user_home, engine.paths.project_store):
        assert str(secret) not in blob
    assert "<workspace>/dist" in blob


LOW_RISK = {
    "name": "deploy-window",
    "description": "When deploys may run",
    "type": "project",
    "body": "Deploys run only on Tuesdays.",
}


def test_tools_go_through_the_write_policy(dirs: tuple[Path, Path]) -> None:
    workspace, home = dirs
    engine = ContextEngine.open(workspace=workspace, home=home)
    seed(engine)
    sub = engine.start_session("subagent").call_tool("remember", LOW_RISK)
    assert not sub.written and sub.decision == "denied"
    yolo = engine.start_session("headless", mode="yolo")
    glob = yolo.call_tool("remember", {**LOW_RISK, "scope": "global"})
    assert not glob.written and glob.reason == "global memory requires confirmation"
    saved = yolo.call_tool("remember", LOW_RISK)
    assert saved.written and "project/deploy-window.md" in saved.result
    found = yolo.call_tool("memory", {"operation": "search", "query": "Tuesdays"})
    assert "project/deploy-window.md" in found.result
    assert str(workspace) not in found.result and str(home) not in found.result
    facts = {f.reference for f in Memory(engine.paths).snapshot().facts}
    assert "project/deploy-window.md" in facts and "global/deploy-window.md" not in facts


def test_unreadable_fact_is_reported_in_the_trace(engine: ContextEngine) -> None:
    (engine.paths.project_store / "broken.md").write_bytes(b"---\nname: [oops\n---\nbody\n")
    session = engine.start_session("headless")
    turn = session.process_user_turn("Where are release artifacts published from?")
    assert "<memory-recall>" in turn.recall_block and "broken" not in turn.text_for_provider
    trace = json.loads(engine.trace_log().last_path.read_text("utf-8"))
    assert "broken.md" in json.dumps(trace)
