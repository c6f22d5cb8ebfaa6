"""A copied fact file is never listed twice silently: both paths are named (issue 18)."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner
from context_engine.cli.main import cli
from context_engine.facts.copies import find_copies
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths


def test_cli_list_warns_about_a_copied_file_with_both_paths(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=tmp_path / "ws")
    Memory(paths).save(name="project/good-one.md", description="d", body="b")
    store = paths.project_store
    shutil.copy2(store / "good-one.md", store / "good-one-copy.md")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "--workspace",
                                      str(tmp_path / "ws"), "list"])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert any("same id" in w and str(store / "good-one.md") in w
               and str(store / "good-one-copy.md") in w for w in warnings), warnings
    assert any("same name project/good-one.md" in w for w in warnings), warnings


def test_find_copies_is_empty_for_distinct_facts(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=tmp_path / "ws")
    memory = Memory(paths)
    memory.save(name="project/a.md", description="d", body="b")
    memory.save(name="global/a.md", description="d", body="b")  # an override pair, not a copy
    assert find_copies(memory.snapshot().facts) == []
