"""S8.10: a secret typed into a prompt never reaches the recall trace files in clear."""

from __future__ import annotations

import json
from pathlib import Path

from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from support.secrets import HELD_OUT, POSITIVES


def test_prompt_secret_is_redacted_in_last_trace_and_history(tmp_path: Path) -> None:
    workspace = tmp_path / "proj"
    (workspace / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    paths = EnginePaths.resolve(home=home, workspace=workspace)
    Memory(paths).save(name="deploy-token-rotation", description="Deploy token rotation",
                       body="Rotate the deploy token every release before publishing.",
                       type="project")
    github = POSITIVES["github_token"][0]
    sendgrid = HELD_OUT["sendgrid_api_key"]
    session = ContextEngine.open(workspace, home).start_session()
    turn = session.process_user_turn(f"rotate the deploy token {github} and {sendgrid} please")
    assert "<memory-recall>" in turn.recall_block  # the turn itself is unchanged
    recall_dir = paths.workspace_data / "recall"
    last = (recall_dir / "recall-last.json").read_text("utf-8")
    history = (recall_dir / "recall-history.jsonl").read_text("utf-8")
    for text in (last, history):
        assert github not in text and sendgrid not in text
        assert "[redacted:github_token]" in text and "[redacted:sendgrid_api_key]" in text
    query = json.loads(last)["query"]
    assert query.startswith("rotate the deploy token [redacted:github_token]")


def test_hostile_trace_files_read_as_no_trace(tmp_path: Path) -> None:
    """A trace file edited into deep JSON or the wrong shape reads as absent, never raises."""
    from context_engine.recall.trace import TraceLog

    log = TraceLog(tmp_path / "recall")
    log.directory.mkdir(parents=True)
    deep = "[" * 100_000 + "]" * 100_000
    for text in (deep, '{"query": "q", "hits": [1, 2]}', '"just a string"', "{"):
        log.last_path.write_text(text, "utf-8")
        assert log.last() is None
    log.history_path.write_text(deep + '\n{"hits": [3]}\n{"query": "fine"}\n', "utf-8")
    assert [t.query for t in log.history()] == ["fine"]


def test_the_last_trace_is_the_history_line_and_secrets_stay_redacted(tmp_path: Path) -> None:
    """One compact encoding for both files (issue 14); a secret seen before (its redaction is
    remembered) is redacted again, in every field that carries it."""
    from context_engine.recall.trace import RecallTrace, TraceDrop, TraceLog

    github = POSITIVES["github_token"][0]
    log = TraceLog(tmp_path / "recall")
    drop = TraceDrop(id="a", revision=1, name=f"n-{github}", scope="project", type="project",
                     score=1.0, reason="limit", detail=github)
    for query in (f"rotate {github}", f"again {github}", "plain"):
        trace = RecallTrace(query=query, dropped=(drop,), at="2026-01-01T00:00:00+00:00")
        log.record(trace)
        last = log.last_path.read_text("utf-8")
        assert last == log.history_path.read_text("utf-8").splitlines(keepends=True)[-1]
        assert last.count("\n") == 1 and github not in last
        assert json.loads(last)["dropped"][0]["detail"] == "[redacted:github_token]"
    assert [t.query for t in log.history()][:2] == [
        "rotate [redacted:github_token]", "again [redacted:github_token]"
    ]
