"""Resolver behaviour that needs symlinks, hard links or injected failures (S6.2–S6.5;
RELIABILITY §2 checklist S2, S4, S5, S7)."""

from __future__ import annotations

import os
from pathlib import Path

from context_engine.instructions import changed_labels, changed_paths, resolve_instructions
from context_engine.instructions.opener import FileSystem, Opener
from support.instructions import FailingFS, RecordingFS, engine_paths


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _tree(ws: Path, files: dict[str, str], links: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> text) under ``ws``, then ``links`` (path -> target)."""
    for name, text in files.items():
        _write(ws / name, text)
    for name, target in links.items():
        os.symlink(target, ws / name)
    return ws


def _codes(resolution: object) -> list[str]:
    return [d.code for d in resolution.diagnostics]  # type: ignore[attr-defined]


def test_symlink_alias_and_hard_link_expand_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / "docs/shared.md", "shared rule\n")
    os.symlink("shared.md", ws / "docs/alias.md")
    os.link(ws / "docs/shared.md", ws / "docs/hard.md")
    lines = ["@docs/shared.md", "@docs/alias.md", "@docs/hard.md", "@docs/../docs/shared.md"]
    _write(ws / "AGENTS.md", "\n".join(lines) + "\n")
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws)
    (doc,) = res.documents
    assert doc.body.count("shared rule") == 1
    assert doc.body.count("<!-- skipped: duplicate import -->") == 3
    assert [i.line for i in doc.imports] == [1]
    assert res.diagnostics == ()


def test_cycle_through_symlink_alias_is_a_cycle(tmp_path: Path) -> None:
    ws = _tree(tmp_path / "ws", {"AGENTS.md": "top\n@docs/a.md\n", "docs/a.md": "a\n@back.md\n"},
               {"docs/back.md": "../AGENTS.md"})
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws)
    assert _codes(res) == ["import_cycle"]
    assert "@back.md <!-- skipped: import cycle -->" in res.documents[0].body


def test_in_root_symlink_import_loads(tmp_path: Path) -> None:
    ws = _tree(tmp_path / "ws", {"real/rules.md": "linked rule\n",
                                 "AGENTS.md": "@linked/rules.md\n"}, {"linked": "real"})
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws)
    assert "linked rule" in res.documents[0].body
    assert '<instruction-import path="linked/rules.md">' in res.documents[0].body
    assert res.diagnostics == ()


def test_import_symlink_to_sibling_of_owning_dir_escapes(tmp_path: Path) -> None:
    # The boundary is the directory owning the top-level file, not the workspace root.
    ws = _tree(tmp_path / "ws", {"other/rules.md": "other rule\n", "sub/AGENTS.md": "@up.md\n"},
               {"sub/up.md": "../other/rules.md"})
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws / "sub")
    assert _codes(res) == ["import_symlink_escape"]
    assert "other rule" not in res.documents[0].body


def test_top_level_symlinks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    outside = _write(tmp_path / "outside/AGENTS.md", "OUTSIDE\n")
    _write(ws / "AGENTS.md", "root rule\n")
    os.symlink("AGENTS.md", ws / "CLAUDE.md")  # in-directory alias: same body, deduped
    _write(ws / "shared/team.md", "team rule\n")
    (ws / "sub").mkdir()
    os.symlink("../shared/team.md", ws / "sub/AGENTS.md")  # in-root: loads (decision)
    os.symlink(str(outside), ws / "sub/CLAUDE.md")  # out of the root: refused
    home = tmp_path / "home"
    home.mkdir()
    os.symlink(str(outside), home / "AGENTS.md")
    res = resolve_instructions(engine_paths(home, ws), ws / "sub")
    assert [d.label for d in res.documents] == ["workspace/CLAUDE.md", "workspace/sub/AGENTS.md"]
    assert all("OUTSIDE" not in d.body for d in res.documents)
    got = [(d.code, d.path) for d in res.diagnostics]
    assert ("document_symlink_escape", str(home / "AGENTS.md")) in got
    assert ("document_symlink_escape", str(ws / "sub/CLAUDE.md")) in got
    assert ("document_duplicate", str(ws / "AGENTS.md")) in got


def test_chain_directory_symlinked_out_stops_the_walk(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / "AGENTS.md", "root\n")
    _write(tmp_path / "outside/AGENTS.md", "OUTSIDE\n")
    os.symlink("../outside", ws / "link")
    fs = RecordingFS()
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws / "link", fs=fs)
    assert [d.label for d in res.documents] == ["workspace/AGENTS.md"]
    assert _codes(res) == ["document_symlink_escape"]
    assert not any("outside" in path for path in fs.read_paths)


def test_chain_directory_symlinked_inside_root_is_followed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / "real/AGENTS.md", "real dir rule\n")
    os.symlink("real", ws / "alias")
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws / "alias")
    assert [d.label for d in res.documents] == ["workspace/alias/AGENTS.md"]
    assert res.documents[0].dir_label == "workspace/alias"


def test_unreadable_document_and_import_via_seam(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / "AGENTS.md", "agents\n@docs/locked.md\n")
    _write(ws / "CLAUDE.md", "claude secret\n")
    _write(ws / "docs/locked.md", "locked secret\n")
    fs = FailingFS("CLAUDE.md", "locked.md")
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws, fs=fs)
    assert [d.label for d in res.documents] == ["workspace/AGENTS.md"]
    assert [(d.code, d.line) for d in res.diagnostics] == [
        ("import_unreadable", 2),
        ("document_unreadable", None),
    ]
    assert "permission denied" in res.diagnostics[0].message
    assert "secret" not in res.documents[0].body


def test_user_imports_are_confined_to_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    ws.mkdir()
    _write(home / "rules/style.md", "style rule\n")
    _write(home / "AGENTS.md", "@rules/style.md\n@../ws/AGENTS.md\n")
    res = resolve_instructions(engine_paths(home, ws), ws)
    (doc,) = res.documents
    assert (doc.label, doc.scope, doc.directory) == ("user/AGENTS.md", "user", home)
    assert "style rule" in doc.body
    assert _codes(res) == ["import_outside_source"]


def test_target_outside_workspace_uses_root(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / "AGENTS.md", "root\n")
    _write(tmp_path / "elsewhere/AGENTS.md", "ELSEWHERE\n")
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), tmp_path / "elsewhere")
    assert res.target == ws
    assert [d.label for d in res.documents] == ["workspace/AGENTS.md"]
    assert [(d.code, d.path) for d in res.diagnostics] == [
        ("target_outside_workspace", str(tmp_path / "elsewhere"))
    ]


def test_file_and_missing_targets_walk_existing_directories(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / "a/AGENTS.md", "a rule\n")
    _write(ws / "a/main.py", "print()\n")
    paths = engine_paths(tmp_path / "home", ws)
    for target in (ws / "a/main.py", ws / "a/not/yet/there.py"):
        res = resolve_instructions(paths, target)
        assert [d.label for d in res.documents] == ["workspace/a/AGENTS.md"]
        assert res.diagnostics == ()


def test_default_target_is_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / "pkg/AGENTS.md", "pkg rule\n")
    paths = engine_paths(tmp_path / "home", ws, workspace=ws / "pkg")
    res = resolve_instructions(paths)
    assert [d.label for d in res.documents] == ["workspace/pkg/AGENTS.md"]


def test_policy_a_fallback_refuses_every_symlink(tmp_path: Path) -> None:
    class NoFdPath(FileSystem):
        def fd_path(self, fd: int) -> str | None:
            return None

    ws = _tree(tmp_path / "ws", {"docs/plain.md": "plain rule\n",
                                 "AGENTS.md": "@docs/plain.md\n@docs/alias.md\n"},
               {"docs/alias.md": "plain.md"})
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws, fs=NoFdPath())
    assert "plain rule" in res.documents[0].body
    assert _codes(res) == ["import_symlink_escape"]
    fd = os.open(ws, os.O_RDONLY)
    try:
        assert Opener(NoFdPath()).real_path(fd) is None
    finally:
        os.close(fd)


def test_resolver_never_raises(tmp_path: Path) -> None:
    class Broken(FileSystem):
        def fstat(self, fd: int) -> os.stat_result:
            raise RuntimeError("disk on fire")

    ws = tmp_path / "ws"
    _write(ws / "AGENTS.md", "rule\n")
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws, fs=Broken())
    assert res.documents == ()
    assert _codes(res) == ["resolver_error"]


def test_missing_root_gives_a_diagnostic(tmp_path: Path) -> None:
    res = resolve_instructions(engine_paths(tmp_path / "home", tmp_path / "gone"))
    assert _codes(res) == ["workspace_unreadable"]


def test_changed_paths_sees_edits_and_new_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / "AGENTS.md", "@docs/a.md\n")
    shared = _write(ws / "docs/a.md", "a\n")
    (ws / "sub").mkdir()
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws / "sub")
    assert changed_paths(res) == ()
    shared.write_text("a, edited\n")
    _write(ws / "sub/CLAUDE.local.md", "new\n")
    _write(tmp_path / "home/AGENTS.md", "user\n")
    assert set(changed_paths(res)) == {
        shared,
        ws / "sub/CLAUDE.local.md",
        tmp_path / "home/AGENTS.md",
    }
    watched = {path for path, _ in res.watched}
    assert ws / "AGENTS.md" in watched
    assert set(changed_labels(res)) == {
        "workspace/docs/a.md",
        "workspace/sub/CLAUDE.local.md",
        "user/AGENTS.md",
    }


def test_crlf_and_in_root_dot_dot(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "AGENTS.md").write_bytes(b"one\r\n@docs/../docs/x.md\r\ntwo\r\n")
    (ws / "docs/x.md").write_bytes(b"x rule\r\n")
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws)
    body = res.documents[0].body
    assert body == (
        'one\r\n<instruction-import path="docs/x.md">\nx rule\r\n</instruction-import>\r\ntwo\r\n'
    )
    assert res.diagnostics == ()
    again = resolve_instructions(engine_paths(tmp_path / "home", ws), ws)
    assert again.documents == res.documents


def test_import_path_attribute_is_escaped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / "docs/a&b's.md", "odd name\n")
    _write(ws / "AGENTS.md", "@docs/a&b's.md\n")
    res = resolve_instructions(engine_paths(tmp_path / "home", ws), ws)
    assert res.documents[0].body.startswith(
        '<instruction-import path="docs/a&amp;b&#x27;s.md">\nodd name\n'
    )


def test_missing_home_is_quiet(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / "AGENTS.md", "rule\n")
    res = resolve_instructions(engine_paths(tmp_path / "no-home", ws), ws)
    assert res.diagnostics == ()
    assert (tmp_path / "no-home/AGENTS.md", None) in res.watched
