"""``context-engine import <agent>``: candidates, dry run, writes, re-runs (S15.3)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from context_engine.cli.main import cli
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.suggestions.roots import SourceRoots
from context_engine.transfer.sources import scan_agent
from support.imports import setup
from support.store import tree

# (status, scope, type, name) of every candidate each fixture set gives, in order.
EXPECTED = {
    "claude-code": [
        ("new", "project", "project", "debugging"),
        ("new", "project", "reference", "deploy-token"),  # flagged
        ("new", "project", "feedback", "feedback-testing"),
        ("new", "project", "project", "发布流程"),
        ("new", "project", "reference", "latency-dashboard"),
        ("new", "project", "user", "user-role"),
        ("new", "project", "project", "use-pnpm-never-npm-in-this-repository"),
    ],
    "codex": [
        ("new", "project", "project", "release-checklist-for-this-repository"),
        ("new", "global", "project", "shell-and-terminal-habits"),
        ("new", "project", "project", "排查-api-超时"),
        ("new", "global", "user", "user-profile-codex"),
        ("new", "global", "feedback", "run-the-narrowest-test-first-pytest-path-test-x"),
        ("new", "global", "feedback", "回答用中文-代码注释用英文"),
    ],
    "gemini": [
        ("new", "project", "project", "the-api-server-listens-on-port-8080-in"),
        ("new", "project", "project", "构建产物放在-dist-目录-不要提交"),
        ("new", "project", "project", "build-notes"),
        ("new", "global", "user", "my-preferred-programming-language-is-python"),
        ("new", "global", "user", "我喜欢用-vim-键位"),
        ("new", "global", "user", "the-staging-database-login-db-password-hunter2"),  # flagged
    ],
}
FLAGGED = {"claude-code": {"deploy-token"}, "codex": set(),
           "gemini": {"the-staging-database-login-db-password-hunter2"}}
MALFORMED = {"claude-code": "broken.md", "codex": None, "gemini": "bad.md"}
AGENTS = tuple(EXPECTED)


@pytest.fixture
def env_for(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Build an agent's fixture tree; return (env, home, workspace)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    home = tmp_path / "home"

    def make(agent: str) -> tuple[dict[str, str], Path, Path]:
        env = setup(agent, tmp_path, ws)
        env["HOME"] = str(tmp_path / "userhome")  # no real agent files reach the test
        return env, home, ws

    return make


def run(env: dict[str, str], home: Path, ws: Path, *args: str) -> Result:
    """One ``context-engine --json`` invocation against ``home`` and ``ws``."""
    result = CliRunner().invoke(
        cli, ["--json", "--home", str(home), "--workspace", str(ws), *args], env=env
    )
    return result


def candidates(result: Result) -> list[tuple[str, str, str, str]]:
    """(status, scope, type, name) of the listed candidates."""
    payload = json.loads(result.output)
    return [(c["status"], c["scope"], c["type"], c["name"]) for c in payload["candidates"]]


def source_digests(root: Path) -> dict[str, str]:
    """sha256 of every file under an agent's folder (the import never changes them)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("agent", AGENTS)
def test_dry_run_lists_the_expected_candidates_and_writes_nothing(env_for, agent: str) -> None:
    env, home, ws = env_for(agent)
    agent_root = ws.parent / "agent"
    before = source_digests(agent_root)
    result = run(env, home, ws, "import", agent, "--dry-run")
    assert result.exit_code == 0, result.output
    assert candidates(result) == EXPECTED[agent]
    payload = json.loads(result.output)
    flagged = {c["name"] for c in payload["candidates"] if c["flagged"]}
    assert flagged == FLAGGED[agent]
    assert all(c["line"] >= 1 and Path(c["source"]).is_file() for c in payload["candidates"])
    if MALFORMED[agent]:
        assert [Path(d["path"]).name for d in payload["diagnostics"]] == [MALFORMED[agent]]
    assert payload["written"] == []
    assert not home.exists()  # not even a directory
    assert source_digests(agent_root) == before


@pytest.mark.slow
@pytest.mark.parametrize("agent", AGENTS)
def test_yes_writes_the_new_candidates_and_a_second_run_writes_nothing(env_for, agent: str
                                                                        ) -> None:
    env, home, ws = env_for(agent)
    first = run(env, home, ws, "import", agent, "--yes")
    assert first.exit_code == 0, first.output
    written = {w["name"] for w in json.loads(first.output)["written"]}
    expected = {name for _s, _sc, _t, name in EXPECTED[agent]} - FLAGGED[agent]
    assert written == expected
    paths = EnginePaths.resolve(home=home, workspace=ws)
    facts = {f.name: f for f in Memory(paths).list_all()}
    assert set(facts) == expected
    for _status, scope, fact_type, name in EXPECTED[agent]:
        if name in facts:
            assert (facts[name].scope, facts[name].type) == (scope, fact_type)
            assert facts[name].body.strip() and facts[name].description
    snapshot = tree(home)
    second = run(env, home, ws, "import", agent, "--yes")
    assert second.exit_code == 0, second.output
    assert json.loads(second.output)["written"] == []
    statuses = {c["name"]: c["status"] for c in json.loads(second.output)["candidates"]}
    assert all(statuses[n] == "exists" for n in expected)
    assert tree(home) == snapshot


@pytest.mark.parametrize("agent", ["claude-code", "gemini"])
def test_a_flagged_candidate_is_written_only_when_the_person_allows_it(env_for, agent: str
                                                                       ) -> None:
    env, home, ws = env_for(agent)
    (name,) = FLAGGED[agent]
    run(env, home, ws, "import", agent, "--yes")
    paths = EnginePaths.resolve(home=home, workspace=ws)
    assert name not in {f.name for f in Memory(paths).list_all()}
    allowed = run(env, home, ws, "import", agent, "--yes", "--allow-flagged", name)
    assert [w["name"] for w in json.loads(allowed.output)["written"]] == [name]


def test_text_output_shows_flags_evidence_and_the_malformed_file(env_for) -> None:
    env, home, ws = env_for("claude-code")
    result = CliRunner().invoke(
        cli, ["--home", str(home), "--workspace", str(ws), "import", "claude-code"], env=env
    )
    assert result.exit_code == 0
    assert "flagged" in result.output and "--allow-flagged deploy-token" in result.output
    assert "user_role.md:1" in result.output
    assert "skipped" in result.output and "broken.md:3" in result.output
    assert "run again with --yes" in result.output
    assert not home.exists()


def test_an_existing_duplicate_is_skipped_as_the_write_policy_judges_it(env_for) -> None:
    env, home, ws = env_for("claude-code")
    paths = EnginePaths.resolve(home=home, workspace=ws)
    # Same description as user_role.md, other name and body: the S10.1 duplicate check.
    Memory(paths).save(name="about-me", type="user", scope="global", body="other words",
                       description="The user is a data scientist who is new to the frontend "
                       "of this codebase")
    result = run(env, home, ws, "import", "claude-code", "--dry-run")
    row = next(c for c in json.loads(result.output)["candidates"] if c["name"] == "user-role")
    assert row["status"] == "exists"
    assert "global/about-me.md" in row["reason"]


def test_scope_filter_and_other_workspaces(env_for) -> None:
    env, home, ws = env_for("codex")
    result = run(env, home, ws, "import", "codex", "--dry-run", "--scope", "global")
    assert {c["scope"] for c in json.loads(result.output)["candidates"]} == {"global"}
    listed = json.dumps(json.loads(run(env, home, ws, "import", "codex").output))
    assert "motorcycle" not in listed.lower()  # another workspace's task group
    assert "kakaku" not in listed  # another workspace's raw memory


def test_codex_bodies_leave_out_local_provenance(env_for) -> None:
    env, _home, ws = env_for("codex")
    roots = SourceRoots.from_env(env=env)
    scan = scan_agent("codex", EnginePaths.resolve(home=ws.parent / "h", workspace=ws), roots)
    release = next(c for c in scan.candidates if c.name.startswith("release-checklist"))
    assert "make release VERSION=x.y.z" in release.body
    assert "rollout_path" not in release.body and str(ws) not in release.body
    assert "applies_to" not in release.body


def test_codex_unreadable_file_is_a_diagnostic(env_for) -> None:
    env, home, ws = env_for("codex")
    handbook = Path(env["CODEX_HOME"]) / "memories" / "MEMORY.md"
    handbook.write_bytes(b"# Task Group: x\n\x00\x01binary")
    result = run(env, home, ws, "import", "codex", "--dry-run")
    payload = json.loads(result.output)
    assert [Path(d["path"]).name for d in payload["diagnostics"]] == ["MEMORY.md"]
    assert handbook.read_bytes() == b"# Task Group: x\n\x00\x01binary"
    assert all(c["source"].endswith(("raw_memories.md", "memory_summary.md"))
               for c in payload["candidates"])


def test_gemini_legacy_hash_folder_is_found(env_for) -> None:
    env, home, ws = env_for("gemini")
    gemini = Path(env["GEMINI_CLI_HOME"]) / ".gemini"
    (gemini / "projects.json").unlink()
    slug_dir = gemini / "tmp" / "ws-project"
    (slug_dir / ".project_root").unlink()
    slug_dir.rename(gemini / "tmp" / hashlib.sha256(str(ws).encode()).hexdigest())
    result = run(env, home, ws, "import", "gemini", "--dry-run")
    names = [c["name"] for c in json.loads(result.output)["candidates"]]
    assert "build-notes" in names and "the-api-server-listens-on-port-8080-in" in names


def test_claude_code_without_memory_lists_nothing(env_for) -> None:
    env, home, ws = env_for("claude-code")
    shutil.rmtree(Path(env["CLAUDE_CONFIG_DIR"]) / "projects")
    result = run(env, home, ws, "import", "claude-code", "--yes")
    assert result.exit_code == 0
    assert json.loads(result.output)["candidates"] == []


def test_claude_code_long_workspace_paths_are_found_by_their_hashed_folder(tmp_path: Path
                                                                          ) -> None:
    from context_engine.suggestions.readers.claude_code import sanitize

    ws = tmp_path / ("deep-" * 45) / "repo"  # > 200 characters once sanitized
    (ws / ".git").mkdir(parents=True)
    claude = tmp_path / "claude"
    folder = claude / "projects" / (sanitize(str(ws))[:200] + "-1k2j3h") / "memory"
    folder.mkdir(parents=True)
    (folder / "note.md").write_text("---\nname: long-path-note\ndescription: found\n"
                                    "type: project\n---\n\nIt is found.\n", encoding="utf-8")
    scan = scan_agent("claude-code", EnginePaths.resolve(home=tmp_path / "h", workspace=ws),
                      SourceRoots.from_env(env={"CLAUDE_CONFIG_DIR": str(claude)}))
    assert [c.name for c in scan.candidates] == ["long-path-note"]
