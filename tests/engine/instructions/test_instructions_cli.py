"""CLI: ``instructions``, ``memory instructions`` and ``note`` (S12, S6.6, S6.8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from context_engine.cli.main import cli


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (ws / "sub/docs").mkdir(parents=True)
    home.mkdir()
    (home / "AGENTS.md").write_text("user rule\n")
    (ws / "AGENTS.md").write_text("root rule\n@../outside.md\n")
    (ws / "sub/CLAUDE.local.md").write_text("sub rule\n@docs/a.md\n")
    (ws / "sub/docs/a.md").write_text("imported\n")
    return home, ws


def _run(home: Path, ws: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--home", str(home), "--workspace", str(ws), *args])
    return result.exit_code, result.stdout, result.stderr


def test_instructions_json_shape(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    code, out, _ = _run(home, ws, "--json", "instructions", "--target", str(ws / "sub"))
    assert code == 0
    payload = json.loads(out)
    assert set(payload) == {"root", "documents", "diagnostics"}
    assert payload["root"] == str(ws)
    docs = payload["documents"]
    assert [d["label"] for d in docs] == [
        "user/AGENTS.md",
        "workspace/AGENTS.md",
        "workspace/sub/CLAUDE.local.md",
    ]
    assert all(set(d) == {"order", "scope", "label", "path", "directory", "imports"} for d in docs)
    assert [d["order"] for d in docs] == [1, 2, 3]
    assert [d["scope"] for d in docs] == ["user", "workspace", "workspace"]
    assert docs[2]["path"] == str(ws / "sub/CLAUDE.local.md")
    assert docs[2]["directory"] == str(ws / "sub")
    assert docs[2]["imports"] == [
        {"path": str(ws / "sub/docs/a.md"), "source": str(ws / "sub/CLAUDE.local.md"), "line": 2}
    ]
    assert payload["diagnostics"] == [
        {
            "code": "import_outside_source",
            "source": str(ws / "AGENTS.md"),
            "line": 2,
            "path": "../outside.md",
            "message": "import path climbs above the source directory",
        }
    ]


def test_instructions_text_and_relative_target(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, ws = tree
    monkeypatch.chdir(ws)
    code, out, _ = _run(home, ws, "instructions", "--target", "sub")
    assert code == 0
    assert "3. workspace/sub/CLAUDE.local.md (workspace, applies to workspace/sub, local)" in out
    assert f"import: {ws / 'sub/docs/a.md'} (from {ws / 'sub/CLAUDE.local.md'}:2)" in out
    assert f"import_outside_source at {ws / 'AGENTS.md'}:2: ../outside.md" in out


def test_memory_instructions_local_view(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    (ws / ".git").mkdir()  # the workspace root is the nearest .git ancestor (S1)
    code, out, _ = _run(home, ws / "sub", "memory", "instructions")
    assert code == 0
    assert f"path: {home / 'AGENTS.md'}" in out
    assert "lowest to highest precedence" in out
    assert out.index("user/AGENTS.md") < out.index("workspace/sub/CLAUDE.local.md")
    assert f"{ws / 'AGENTS.md'}:2" in out


def test_hostile_path_is_escaped_in_text(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    (ws / "AGENTS.md").write_text("@docs/\u202eevil.md\n")
    code, out, _ = _run(home, ws, "instructions")
    assert code == 0
    assert "\u202e" not in out
    assert "docs/\\u202eevil.md" in out


def test_note_text_and_json(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    (ws / "AGENTS.md").unlink()
    code, out, _ = _run(home, ws, "note", "use", "tabs")
    assert code == 0
    assert out.strip() == f"remembered → {ws / 'AGENTS.md'}"
    assert (ws / "AGENTS.md").read_text() == "# Project memory\n\n## Notes\n\n- use tabs\n"
    code, out, _ = _run(home, ws, "--json", "note", "second")
    assert code == 0
    assert json.loads(out) == {"path": str(ws / "AGENTS.md")}
    assert (ws / "AGENTS.md").read_text().endswith("- use tabs\n- second\n")


def test_empty_note_fails(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    code, out, _ = _run(home, ws, "--json", "note", "  ")
    assert code == 1
    assert json.loads(out) == {"error": {"code": "empty_note", "message": "nothing to remember"}}
    code, _, _ = _run(home, ws, "note")
    assert code == 2
