"""Quick add (S6.8; formats/transcripts.md §2): parsing, target file, append rules, atomicity."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from context_engine.errors import PathEscape
from context_engine.instructions import EmptyNote, parse_quick_add, quick_add
from context_engine.instructions.quick_add import InstructionFileUnreadable
from support.instructions import engine_paths


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("# remember this", "remember this"),
        ("  #\tremember this  ", "remember this"),
        ("# Heading", "Heading"),
        ("#7 needs work", None),
        ("#issue needs work", None),
        ("#", None),
        ("# ", None),
        ("## Notes", None),
        ("# Context\n- file.go", None),
        ("/remember use tabs", "use tabs"),
        (" /remember\tuse tabs ", "use tabs"),
        ("/remember", ""),
        ("/remembering use tabs", None),
        ("/remember  two\n lines ", "two lines"),
        ("plain text", None),
    ],
)
def test_parse_quick_add(text: str, note: str | None) -> None:
    assert parse_quick_add(text) == note


def _paths(tmp_path: Path):  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return engine_paths(tmp_path / "home", ws)


def test_new_agents_md_exact_bytes(tmp_path: Path) -> None:
    path = quick_add(_paths(tmp_path), "use tabs")
    assert path == tmp_path / "ws/AGENTS.md"
    assert path.read_bytes() == b"# Project memory\n\n## Notes\n\n- use tabs\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["AGENTS.md"]  # no temp left over
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)


@pytest.mark.parametrize(
    ("existing", "chosen"),
    [
        (("CLAUDE.md", "AGENTS.md", "REASONIX.md"), "REASONIX.md"),
        (("CLAUDE.md", "AGENTS.md"), "AGENTS.md"),
        (("CLAUDE.md", "AGENTS.local.md"), "CLAUDE.md"),
    ],
)
def test_first_existing_normal_name(tmp_path: Path, existing: tuple[str, ...], chosen: str) -> None:
    paths = _paths(tmp_path)
    for name in existing:
        (paths.root / name).write_text(f"{name}\n")
    assert quick_add(paths, "n").name == chosen
    for name in existing:
        if name != chosen:
            assert (paths.root / name).read_text() == f"{name}\n"


@pytest.mark.parametrize("blank", ["", "  \n\n\t\n"])
def test_empty_file_gets_the_template(tmp_path: Path, blank: str) -> None:
    paths = _paths(tmp_path)
    (paths.root / "CLAUDE.md").write_text(blank)
    path = quick_add(paths, "note")
    assert path.read_text() == "# Project memory\n\n## Notes\n\n- note\n"


def test_existing_notes_section_gets_bullet_at_its_end(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    before = (
        "# Rules\n\nIntro  with  spacing \n\n## Notes\n\n- first\n#tag is not a heading\n"
        "```sh\n# a comment, not a heading\n```\n\n\n## Later\nkeep me\n"
    )
    (paths.root / "AGENTS.md").write_text(before)
    quick_add(paths, "second")
    assert (paths.root / "AGENTS.md").read_text() == before.replace(
        "```\n\n\n## Later", "```\n- second\n\n\n## Later"
    )


def test_notes_section_at_eof_without_newline(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    (paths.root / "AGENTS.md").write_text("# P\n\n## Notes\n\n- a")
    quick_add(paths, "b")
    assert (paths.root / "AGENTS.md").read_text() == "# P\n\n## Notes\n\n- a\n- b\n"


def test_empty_notes_section(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    (paths.root / "AGENTS.md").write_text("# P\n## Notes\n\n## Next\n")
    quick_add(paths, "b")
    assert (paths.root / "AGENTS.md").read_text() == "# P\n## Notes\n\n- b\n\n## Next\n"


def test_other_content_gets_a_new_section(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    (paths.root / "AGENTS.md").write_text("# Rules\n\nBe kind.\n\n\n")
    quick_add(paths, "one")
    quick_add(paths, "two\n  lines\tand   spaces")
    assert (paths.root / "AGENTS.md").read_text() == (
        "# Rules\n\nBe kind.\n\n## Notes\n\n- one\n- two lines and spaces\n"
    )


def test_crlf_file_stays_crlf(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    (paths.root / "AGENTS.md").write_bytes(b"# R\r\n\r\ntext\r\n")
    quick_add(paths, "x")
    expected = b"# R\r\n\r\ntext\r\n\r\n## Notes\r\n\r\n- x\r\n"
    assert (paths.root / "AGENTS.md").read_bytes() == expected


def test_empty_note_is_refused_and_nothing_written(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    with pytest.raises(EmptyNote):
        quick_add(paths, " \n\t")
    assert not (paths.root / "AGENTS.md").exists()


def test_symlink_out_of_root_is_refused(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    victim = tmp_path / "victim.md"
    victim.write_text("victim\n")
    os.symlink(victim, paths.root / "AGENTS.md")
    with pytest.raises(PathEscape):
        quick_add(paths, "x")
    assert victim.read_text() == "victim\n"
    assert (paths.root / "AGENTS.md").is_symlink()


def test_in_root_symlink_is_written_through(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    (paths.root / "docs").mkdir()
    real = paths.root / "docs/agents.md"
    real.write_text("# R\n")
    os.symlink("docs/agents.md", paths.root / "AGENTS.md")
    assert quick_add(paths, "x") == real
    assert (paths.root / "AGENTS.md").is_symlink()
    assert real.read_text() == "# R\n\n## Notes\n\n- x\n"


def test_failed_replace_keeps_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _paths(tmp_path)
    target = paths.root / "AGENTS.md"
    target.write_text("# Keep\n")
    os.chmod(target, 0o600)

    def boom(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        quick_add(paths, "x")
    monkeypatch.undo()
    assert target.read_text() == "# Keep\n"
    assert sorted(p.name for p in paths.root.iterdir()) == ["AGENTS.md"]
    quick_add(paths, "x")
    assert target.stat().st_mode & 0o777 == 0o600  # mode kept across the replace


def test_non_utf8_file_is_left_alone(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    target = paths.root / "AGENTS.md"
    target.write_bytes(b"caf\xe9\n")
    with pytest.raises(InstructionFileUnreadable):
        quick_add(paths, "x")
    assert target.read_bytes() == b"caf\xe9\n"
