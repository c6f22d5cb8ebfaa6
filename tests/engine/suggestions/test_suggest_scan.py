"""The whole scan: workspace isolation, the 12 newest sessions, no writes, CLI JSON (S11, S12)."""

from __future__ import annotations

import builtins
import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from context_engine.cli.main import cli
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.suggestions.readers import _io
from context_engine.suggestions.roots import SourceRoots
from context_engine.suggestions.scanner import scan
from support.suggest import EN, FORMATS, ZH, Home, install, make_home, write_session

CANARY = "CANARY always prefer the other workspace"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Path]]:
    """Record every path the readers open, whole-file and header-only."""
    seen: dict[str, list[Path]] = {"whole": [], "header": []}
    whole, header = _io.read_bytes, _io.read_first_line

    def read_bytes(path: Path) -> bytes:
        seen["whole"].append(Path(path))
        return whole(path)

    def read_first_line(path: Path, limit: int = _io.HEADER_LIMIT) -> bytes:
        seen["header"].append(Path(path))
        return header(path, limit)

    monkeypatch.setattr(_io, "read_bytes", read_bytes)
    monkeypatch.setattr(_io, "read_first_line", read_first_line)
    return seen


def _other_workspace(home: Home, name: str) -> list[Path]:
    """Sessions of another workspace: a valid header, then corrupt lines and a canary."""
    other = home.base / "work" / name
    files = []
    for fmt in FORMATS:
        path = write_session(home, fmt, f"other-{name}", [CANARY], root=other, mtime=9e9)
        with path.open("a", encoding="utf-8") as handle:
            handle.write("{corrupt line of the other workspace\n")
        files.append(path)
    return files


def test_other_workspaces_are_never_read(home: Home, opened: dict[str, list[Path]]) -> None:
    for fmt in FORMATS:
        install(home, fmt)
    foreign = _other_workspace(home, "other") + _other_workspace(home, "proj-old")
    # A global Reasonix session whose sidecar names another root.
    glob = home.paths.state / "sessions"
    glob.mkdir()
    (glob / "g.jsonl").write_text(json.dumps({"role": "user", "content": CANARY}) + "\n")
    (glob / "g.jsonl.meta").write_text(json.dumps({"workspace_root": "/somewhere/else"}))
    foreign.append(glob / "g.jsonl")

    any_open: list[str] = []
    real_open = builtins.open

    def recording_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        any_open.append(os.fspath(file) if not isinstance(file, int) else "")
        return real_open(file, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(builtins, "open", recording_open)
        patch.setattr(io, "open", recording_open)
        result = scan(home.paths, home.roots, facts=[], instruction_bodies=[])

    assert any_open  # the recorder sees the scan's own reads
    codex_foreign = [p for p in foreign if p.name.startswith("rollout-")]
    assert not [p for p in any_open if Path(p) in foreign and Path(p) not in codex_foreign]
    assert [m.body for m in result.memories] == [ZH, EN]
    assert all("CANARY" not in e for m in result.memories for e in m.evidence)
    assert not any(p in foreign for p in opened["whole"])
    # Codex ties a rollout to a workspace only in its first line: that line, nothing more.
    assert sorted(p for p in opened["header"] if p in foreign) == sorted(codex_foreign)
    assert all(d.path not in foreign for d in result.diagnostics)
    assert len(result.sessions) == 5


def test_only_the_twelve_newest_sessions_are_parsed(
    home: Home, opened: dict[str, list[Path]]
) -> None:
    paths = {}
    for i in range(20):
        fmt = FORMATS[i % 4]
        paths[i] = write_session(
            home, fmt, f"s{i:02d}", [f"Always use helper number {i} for task {i}."], mtime=1000 + i
        )
    empty = write_session(home, "reasonix", "empty", [], mtime=5000)  # no user turn
    result = scan(home.paths, home.roots, facts=[], instruction_bodies=[])
    parsed = {p for p in opened["whole"] if p.name != "projects.json"}
    newest = {paths[i] for i in range(8, 20)}
    assert parsed == newest | {empty}
    assert len(result.sessions) == 12
    assert {m.body for m in result.memories} <= {
        f"Always use helper number {i} for task {i}." for i in range(8, 20)
    }


def _tree_state(root: Path) -> dict[str, tuple[bytes | None, int]]:
    state: dict[str, tuple[bytes | None, int]] = {}
    for dirpath, _dirs, files in os.walk(root):
        state[dirpath] = (None, os.stat(dirpath).st_mtime_ns)
        for name in files:
            path = os.path.join(dirpath, name)
            state[path] = (Path(path).read_bytes(), os.stat(path).st_mtime_ns)
    return state


@contextmanager
def no_writes() -> Iterator[list[str]]:
    """Fail on any write-capable call (tests run as root, so permissions prove nothing)."""
    attempts: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(flag in mode for flag in "wax+"):
            attempts.append(f"open({file!r}, {mode!r})")
            raise PermissionError(f"scan tried to write {file}")
        return real_open(file, mode, *args, **kwargs)

    def guarded_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC):
            attempts.append(f"os.open({path!r})")
            raise PermissionError(f"scan tried to write {path}")
        return real_os_open(path, flags, *args, **kwargs)

    def refuse(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{name}{args!r}")
            raise PermissionError(f"scan called {name}")

        return call

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(builtins, "open", guarded_open)
        patch.setattr(io, "open", guarded_open)
        patch.setattr(os, "open", guarded_os_open)
        for name in WRITE_CALLS:
            patch.setattr(os, name, refuse(name))
        yield attempts


WRITE_CALLS = (
    "mkdir",
    "makedirs",
    "replace",
    "rename",
    "remove",
    "unlink",
    "rmdir",
    "utime",
    "chmod",
)


def _chmod_tree(root: Path, writable: bool) -> None:
    for dirpath, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(dirpath, name)
            mode = os.stat(path).st_mode
            os.chmod(path, (mode | 0o200) if writable else (mode & ~0o222))
    mode = os.stat(root).st_mode
    os.chmod(root, (mode | 0o200) if writable else (mode & ~0o222))


def test_scan_of_a_read_only_home_changes_no_byte(home: Home) -> None:
    for fmt in FORMATS:
        install(home, fmt)
    Memory(home.paths).save(name="lint", description="Lint before commits", body=EN)
    (home.root / "AGENTS.md").write_text(f"# Rules\n\n- {ZH}\n", encoding="utf-8")
    _chmod_tree(home.base, writable=False)
    try:
        before = _tree_state(home.base)
        with no_writes() as attempts:
            result = scan(home.paths, home.roots)  # real store and instruction loaders
        after = _tree_state(home.base)
    finally:
        _chmod_tree(home.base, writable=True)
    assert attempts == []
    assert after == before
    assert result.memories == ()  # EN is a fact, ZH is in AGENTS.md: both deduplicated
    assert [s.name for s in result.skills] == ["fix-flaky-parser-test"]
    assert not [d for d in result.diagnostics if d.code != "corrupt_lines"]


def test_write_guard_sees_writes(tmp_path: Path) -> None:
    with no_writes() as attempts, pytest.raises(PermissionError):
        (tmp_path / "x").write_text("x")
    assert attempts
    with no_writes() as attempts, pytest.raises(PermissionError):
        (tmp_path / "d").mkdir()
    assert attempts


def _cli_home(tmp_path: Path) -> tuple[Home, dict[str, str]]:
    env = {
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
        "CODEX_HOME": str(tmp_path / "cx"),
        "GEMINI_CLI_HOME": str(tmp_path / "gh"),
        "REASONIX_HOME": str(tmp_path / "unused"),
        "REASONIX_STATE_HOME": "",
    }
    base = make_home(tmp_path)
    roots = SourceRoots.from_env(env=env)
    assert roots.gemini == tmp_path / "gh" / ".gemini"
    paths = EnginePaths.resolve(home=base.paths.home, workspace=base.root)
    return Home(base.base, paths.root, paths, roots), env


def test_cli_suggest_and_accept_json(tmp_path: Path) -> None:
    home, env = _cli_home(tmp_path)
    for fmt in FORMATS:
        install(home, fmt)
    write_session(home, "codex", "pr1", ["Please update the pull request after review."], mtime=1)
    write_session(home, "gemini", "pr2", ["Update the PR after the review, please."], mtime=2)
    runner = CliRunner()
    base = ["--home", str(home.paths.home), "--workspace", str(home.root), "--json"]
    out = runner.invoke(cli, [*base, "suggest"], env=env)
    assert out.exit_code == 0, out.output
    payload = json.loads(out.output)
    assert set(payload) == {"available", "memories", "skills"}
    assert payload["available"] is True
    memory = payload["memories"][0]
    assert set(memory) == {
        "id",
        "name",
        "title",
        "description",
        "type",
        "scope",
        "reason",
        "evidence",
        "body",
    }
    assert memory["body"] == ZH and memory["scope"] == "project"
    names = [s["name"] for s in payload["skills"]]
    assert "update-pr" in names
    skill = payload["skills"][names.index("update-pr")]
    assert set(skill) == {"id", "name", "description", "evidence", "body"}
    assert len(skill["evidence"]) == 2

    again = json.loads(runner.invoke(cli, [*base, "suggest"], env=env).output)
    assert again == payload  # names and ids are stable across refreshes

    accepted = runner.invoke(cli, [*base, "accept", memory["id"]], env=env)
    assert accepted.exit_code == 0, accepted.output
    fact = json.loads(accepted.output)["fact"]
    assert fact["name"] == memory["name"] and fact["revision"] == 1
    assert "中文回复" in Memory(home.paths).resolve(fact["id"]).body
    # Now a fact: the next scan no longer proposes it.
    third = json.loads(runner.invoke(cli, [*base, "suggest"], env=env).output)
    assert memory["id"] not in [m["id"] for m in third["memories"]]

    made = runner.invoke(cli, [*base, "accept", skill["id"]], env=env)
    assert made.exit_code == 0, made.output
    path = Path(json.loads(made.output)["path"])
    assert path == home.root / ".reasonix" / "skills" / "update-pr" / "SKILL.md"
    assert path.read_text(encoding="utf-8").startswith("---\nname: update-pr\n")

    missing = runner.invoke(cli, [*base, "accept", skill["id"]], env=env)
    assert missing.exit_code == 1
    assert json.loads(missing.output)["error"]["code"] == "not_found"


def test_cli_accept_with_edits(tmp_path: Path) -> None:
    home, env = _cli_home(tmp_path)
    write_session(home, "claude-code", "s", [EN])
    base = ["--home", str(home.paths.home), "--workspace", str(home.root), "--json"]
    runner = CliRunner()
    (memory,) = json.loads(runner.invoke(cli, [*base, "suggest"], env=env).output)["memories"]
    out = runner.invoke(
        cli,
        [
            *base,
            "accept",
            memory["id"],
            "--name",
            "lint-first",
            "--type",
            "project",
            "--body-file",
            "-",
        ],
        input="Run the linters first.\n",
        env=env,
    )
    assert out.exit_code == 0, out.output
    fact = json.loads(out.output)["fact"]
    assert (fact["name"], fact["type"]) == ("lint-first", "project")
    assert Memory(home.paths).resolve("lint-first").body.strip() == "Run the linters first."


def test_source_roots_from_env(tmp_path: Path) -> None:
    roots = SourceRoots.from_env(env={}, user_home=tmp_path)
    assert (roots.claude, roots.codex, roots.gemini) == (
        tmp_path / ".claude",
        tmp_path / ".codex",
        tmp_path / ".gemini",
    )
    custom = SourceRoots.from_env(
        env={"CLAUDE_CONFIG_DIR": "/c", "CODEX_HOME": "/x", "GEMINI_CLI_HOME": "/g"},
        user_home=tmp_path,
    )
    assert (custom.claude, custom.codex, custom.gemini) == (
        Path("/c"),
        Path("/x"),
        Path("/g/.gemini"),
    )


def test_cli_text_output_and_unavailable(tmp_path: Path) -> None:
    from context_engine.cli.suggest_cmds import suggestions_text
    from context_engine.suggestions.payload import suggestions_json
    from context_engine.suggestions.scanner import unavailable

    home, env = _cli_home(tmp_path)
    write_session(home, "reasonix", "s", [EN])
    out = CliRunner().invoke(
        cli, ["--home", str(home.paths.home), "--workspace", str(home.root), "suggest"], env=env
    )
    assert out.exit_code == 0
    assert "run-linters-before-commit" in out.output
    assert f"s: {EN}" in out.output
    remote = unavailable()
    assert suggestions_json(remote) == {"available": False, "memories": [], "skills": []}
    assert "unavailable" in suggestions_text(remote)


def test_without_a_session_the_facts_are_not_read(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store of 100,000 facts costs a scan nothing (nor its memory) when no turn needs it."""
    from context_engine.suggestions import sources

    def refuse(*_args: object) -> list[object]:
        raise AssertionError("the facts were read for a scan without sessions")

    monkeypatch.setattr(sources, "load_facts", refuse)
    result = scan(home.paths, home.roots)
    assert result.available and result.memories == () and result.sessions == ()
