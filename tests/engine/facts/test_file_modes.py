"""S2.6: every file we create is 0600 in 0700 directories under umask 022; rewrites keep modes."""

from __future__ import annotations

import gc
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory
from context_engine.filemodes import append_private, make_private_dirs, write_private
from context_engine.hooks.runner import handle
from context_engine.paths import EnginePaths


@pytest.fixture()
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _payload(workspace: Path, event: str, prompt: str = "") -> str:
    data = {"session_id": "s-1", "cwd": str(workspace), "hook_event_name": event}
    data["prompt" if prompt else "source"] = prompt or "startup"
    return json.dumps(data)


def _every_kind(tmp_path: Path) -> tuple[Path, EnginePaths]:
    """Create facts, revisions, archive entries, MEMORY.md, traces, caches, locks, notes."""
    workspace = tmp_path / "proj"
    (workspace / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    paths = EnginePaths.resolve(home=home, workspace=workspace)
    memory = Memory(paths)
    memory.save(name="release-target", description="Release target", body="main-v2", type="project")
    memory.save(name="release-target", description="Release target", body="main-v3", type="project")
    memory.save(name="old-note", description="Old note", body="obsolete", type="reference")
    memory.forget("old-note")
    memory.save(name="tabs", description="Indentation", body="Tabs.", type="user", scope="global")
    handle("claude-code", "SessionStart", _payload(workspace, "SessionStart"), home=str(home))
    memory.save(name="late", description="Late fact", body="added mid-session", type="project")
    prompt = "Where is the release target main-v3 published?"
    handle("claude-code", "UserPromptSubmit", _payload(workspace, "UserPromptSubmit", prompt),
           home=str(home))
    engine = ContextEngine.open(workspace, home)
    engine.start_session().process_user_turn("release target main-v3")
    return home, paths


def test_every_file_we_create_is_private_under_umask_022(tmp_path: Path, umask_022: None) -> None:
    """Facts, revisions, archive, MEMORY.md, traces, caches, locks, notes, indexes: 0600/0700."""
    home, _paths = _every_kind(tmp_path)
    # The host engine's SQLite connections close when it is collected, and their ``-shm``
    # files go with them: collect now, not in the middle of the walk.
    gc.collect()
    files = [p for p in home.rglob("*") if p.is_file() and not p.is_symlink()]
    names = {p.name for p in files}
    # Every kind is really there (a kind that is never created would pass vacuously).
    assert {"release-target.md", "MEMORY.md", ".lock", "000000001.md"} <= names
    assert {"recall-last.json", "recall-history.jsonl"} <= names
    assert any(p.parent.name == ".archive" for p in files)
    assert any(p.suffix == ".marshal" for p in files)  # caches, persisted index, hook notes
    wrong = {str(p.relative_to(home)): oct(_mode(p)) for p in files if _mode(p) != 0o600}
    assert wrong == {}
    dirs = [home, *(p for p in home.rglob("*") if p.is_dir() and not p.is_symlink())]
    wrong_dirs = {str(p.relative_to(home)): oct(_mode(p)) for p in dirs if _mode(p) != 0o700}
    assert wrong_dirs == {}


def test_rewritten_fact_keeps_its_mode(tmp_path: Path, umask_022: None) -> None:
    """A fact Reasonix wrote 0644 stays 0644 after our update; MEMORY.md likewise."""
    workspace = tmp_path / "proj"
    (workspace / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    memory = Memory(paths)
    memory.save(name="shared", description="Shared fact", body="one", type="project")
    fact = paths.project_store / "shared.md"
    index = paths.project_store / "MEMORY.md"
    os.chmod(fact, 0o644)
    os.chmod(index, 0o640)
    memory.save(name="shared", description="Shared fact", body="two", type="project")
    assert "two" in fact.read_text("utf-8")
    assert _mode(fact) == 0o644
    assert _mode(index) == 0o640
    assert _mode(paths.project_store / ".revisions") == 0o700


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_helpers_set_exact_modes_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    """The modes helper never depends on the umask (it only ever removes bits)."""
    old = os.umask(umask)
    try:
        make_private_dirs(tmp_path / "a" / "b")
        write_private(tmp_path / "a" / "b" / "f.json", "{}")
        append_private(tmp_path / "a" / "log.jsonl", "x\n")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a") == 0o700 and _mode(tmp_path / "a" / "b") == 0o700
    assert _mode(tmp_path / "a" / "b" / "f.json") == 0o600
    assert _mode(tmp_path / "a" / "log.jsonl") == 0o600
