"""A host keeps its instruction resolution while nothing it looked at changed (issue 14)."""

from __future__ import annotations

import os
from pathlib import Path

import context_engine.instructions as instructions
import pytest
from context_engine.engine import ContextEngine
from context_engine.instructions import render_provider_block, resolve_instructions
from context_engine.paths import EnginePaths


@pytest.fixture()
def paths(tmp_path: Path) -> EnginePaths:
    workspace = tmp_path / "proj"
    (workspace / ".git").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (workspace / "AGENTS.md").write_text("Run the tests.\n@docs/style.md\n", "utf-8")
    return EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)


def _fresh(paths: EnginePaths) -> tuple[str, dict[str, str]]:
    resolution = resolve_instructions(paths)
    return render_provider_block(resolution), {d.label: d.body for d in resolution.documents}


def _seen(engine: ContextEngine) -> tuple[str, dict[str, str]]:
    view = engine.instructions()
    return view.block, dict(view.documents)


def test_a_quiet_turn_does_not_resolve_again(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []
    real = instructions.resolve_instructions

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(instructions, "resolve_instructions", counting)
    engine = ContextEngine(paths)
    first = engine.instructions()
    assert engine.instructions() is first and engine.instructions() is first
    assert len(calls) == 1
    (paths.workspace / "CLAUDE.md").write_text("Be brief.\n", "utf-8")
    assert "Be brief." in engine.instructions().block
    assert len(calls) == 2


def test_every_kind_of_change_is_seen(paths: EnginePaths) -> None:
    """Edits, in-place same-size edits with the mtime put back, new and removed files, and an
    import whose target appears after the resolution: each read as a fresh resolution does."""
    engine = ContextEngine(paths)
    agents = paths.workspace / "AGENTS.md"
    style = paths.workspace / "docs" / "style.md"
    assert _seen(engine) == _fresh(paths)
    assert "rejected: import_unreadable" in _seen(engine)[1]["workspace/AGENTS.md"]  # missing

    def same_size_edit(path: Path, old: str, new: str) -> None:
        info = path.stat()
        with open(path, "r+b") as handle:
            handle.write(path.read_bytes().replace(old.encode(), new.encode()))
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))

    steps = [
        lambda: style.parent.mkdir(),
        lambda: style.write_text("Use tabs.\n", "utf-8"),  # the missing import appears
        lambda: style.write_text("Use tabs, always.\n", "utf-8"),
        lambda: same_size_edit(agents, "tests", "TESTS"),
        lambda: (paths.workspace / "CLAUDE.md").write_text("Be brief.\n", "utf-8"),
        lambda: (paths.home / "AGENTS.md").write_text("Say hello.\n", "utf-8"),
        lambda: (paths.workspace / "CLAUDE.md").unlink(),
        lambda: style.unlink(),
    ]
    for step in steps:
        step()
        assert _seen(engine) == _fresh(paths)
    assert "rejected: import_unreadable" in _seen(engine)[1]["workspace/AGENTS.md"]


def test_a_missing_import_target_is_watched(paths: EnginePaths) -> None:
    watched = dict(resolve_instructions(paths).watched)
    assert watched[paths.workspace / "docs" / "style.md"] is None
