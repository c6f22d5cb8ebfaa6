"""``context-engine recall``, ``search`` and ``memory recall`` (S12)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from context_engine.cli.main import cli
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths


def _setup(tmp_path: Path) -> tuple[list[str], EnginePaths]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    home = tmp_path / "home"
    paths = EnginePaths.resolve(home=home, workspace=ws)
    paths.project_store.mkdir(parents=True)
    memory = Memory(paths)
    memory.save(name="auth-handler-panic", title="AuthHandler panic", description="nil token crash",
                body="AuthHandler panics on an empty token; tracked as #6928.", type="project",
                scope="project")
    return ["--home", str(home), "--workspace", str(ws)], paths


def test_recall_json_prints_block_and_trace_and_records(tmp_path: Path) -> None:
    base, paths = _setup(tmp_path)
    runner = CliRunner()
    out = runner.invoke(cli, [*base, "--json", "recall", "fix", "AuthHandler", "#6928"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["block"].startswith("<memory-recall>")
    trace = data["trace"]
    assert trace["used_chars"] == len(data["block"])
    hit = trace["hits"][0]
    assert set(hit) == {
        "id",
        "revision",
        "name",
        "scope",
        "type",
        "score",
        "freshness",
        "reason",
        "snippet",
    }
    assert hit["name"] == "auth-handler-panic"
    assert {"query", "omitted", "char_budget", "suppressed"} <= set(trace)
    # Recorded under the workspace's own directory, never in a store.
    recorded = list((paths.workspace_data / "recall").iterdir())
    assert recorded and not any(p.is_relative_to(paths.project_store) for p in recorded)
    assert (
        sorted(p.name for p in paths.project_store.iterdir() if p.name.startswith("recall")) == []
    )

    last = runner.invoke(cli, [*base, "memory", "recall"])
    assert last.exit_code == 0
    assert "query: fix AuthHandler #6928" in last.output
    assert "auth-handler-panic" in last.output


def test_recall_text_reports_suppression(tmp_path: Path) -> None:
    base, _ = _setup(tmp_path)
    out = CliRunner().invoke(cli, [*base, "recall", "continue"])
    assert out.exit_code == 0
    assert "suppressed: generic user turn" in out.output
    assert "<memory-recall>" not in out.output


def test_memory_recall_before_any(tmp_path: Path) -> None:
    base, _ = _setup(tmp_path)
    out = CliRunner().invoke(cli, [*base, "--json", "memory", "recall"])
    assert json.loads(out.output) == {"trace": None}


def test_search_command(tmp_path: Path) -> None:
    base, _ = _setup(tmp_path)
    out = CliRunner().invoke(cli, [*base, "search", "AuthHandler"])
    assert out.exit_code == 0
    assert "project/auth-handler-panic.md" in out.output
    data = json.loads(CliRunner().invoke(cli, [*base, "--json", "search", "AuthHandler"]).output)
    assert data["results"][0]["reference"] == "project/auth-handler-panic.md"
    out = CliRunner().invoke(cli, [*base, "search", "zzzqqq"])
    assert 'No saved memories matched "zzzqqq".' in out.output


def test_search_json_prints_the_same_fact_object_as_list(tmp_path: Path) -> None:  # S12
    base, _ = _setup(tmp_path)
    runner = CliRunner()
    listed = json.loads(runner.invoke(cli, [*base, "--json", "list"]).output)["facts"][0]
    out = runner.invoke(cli, [*base, "--json", "search", "AuthHandler", "#6928"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    hit = next(iter(v for v in data.values() if isinstance(v, list)))[0]
    assert {k: hit[k] for k in listed} == listed
    assert hit["updated_at"].endswith("Z")
