"""Instruction trees as people write them (issue 16): CLAUDE.md = @AGENTS.md, legacy
encodings, Claude Code's inline @path style, mentions, and a large-block warning."""

from __future__ import annotations

from pathlib import Path

from context_engine.instructions import render_provider_block, resolve_instructions
from context_engine.instructions.model import LARGE_BLOCK_CHARS
from support.instructions import engine_paths

AGENTS = "# Agents\n\nUse pnpm, never npm.\nRun `make check` before pushing.\n"


def _resolve(tmp_path: Path, files: dict[str, bytes | str]) -> tuple[str, list[tuple[str, str]]]:
    ws = tmp_path / "ws"
    for rel, data in files.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
    (tmp_path / "home").mkdir(exist_ok=True)
    resolution = resolve_instructions(engine_paths(tmp_path / "home", ws))
    diagnostics = [(d.code, d.path) for d in resolution.diagnostics]
    return render_provider_block(resolution), diagnostics


def test_claude_md_importing_agents_md_sends_it_once(tmp_path: Path) -> None:
    block, diagnostics = _resolve(
        tmp_path,
        {"AGENTS.md": AGENTS, "CLAUDE.md": "@AGENTS.md\n\nClaude-only: keep replies short.\n"},
    )
    assert block.count("Use pnpm, never npm.") == 1
    assert block.index("## workspace/AGENTS.md") < block.index("Use pnpm")
    assert "<!-- skipped: already loaded as workspace/AGENTS.md -->" in block
    assert "Claude-only: keep replies short." in block
    assert ("import_already_loaded", "AGENTS.md") in diagnostics
    assert "<instruction-import" not in block


def test_import_of_a_later_document_is_skipped_too(tmp_path: Path) -> None:
    block, _ = _resolve(
        tmp_path, {"AGENTS.md": "@CLAUDE.md\nshared rule\n", "CLAUDE.md": "claude rule\n"}
    )
    assert block.count("claude rule") == 1
    assert "<!-- skipped: already loaded as workspace/CLAUDE.md -->" in block


def test_import_of_a_deeper_document_outside_the_target_still_expands(tmp_path: Path) -> None:
    # sub/AGENTS.md is not loaded for a root target: the import carries it.
    block, _ = _resolve(tmp_path, {"AGENTS.md": "@sub/AGENTS.md\n", "sub/AGENTS.md": "sub rule\n"})
    assert block.count("sub rule") == 1
    assert '<instruction-import path="sub/AGENTS.md">' in block


def test_legacy_encodings_load(tmp_path: Path) -> None:
    block, diagnostics = _resolve(
        tmp_path,
        {
            "AGENTS.md": "# 规则\n\n提交用中文。\n@docs/le.md\n@docs/be.md\n".encode("gb18030"),
            "docs/le.md": b"\xff\xfe" + "UTF-16 LE 导入\n".encode("utf-16-le"),
            "docs/be.md": b"\xfe\xff" + "UTF-16 BE 导入\n".encode("utf-16-be"),
            "CLAUDE.md": b"\xef\xbb\xbf" + "带 BOM 的 UTF-8\n".encode(),
        },
    )
    assert diagnostics == []
    for text in ("提交用中文。", "UTF-16 LE 导入", "UTF-16 BE 导入", "带 BOM 的 UTF-8"):
        assert block.count(text) == 1, text
    assert "\ufeff" not in block


def test_undecodable_document_is_reported_not_loaded(tmp_path: Path) -> None:
    block, diagnostics = _resolve(tmp_path, {"AGENTS.md": b"rules \xff\xff\n"})
    assert block == ""
    assert [code for code, _ in diagnostics] == ["document_unreadable"]


def test_inline_at_path_is_text_with_a_local_note(tmp_path: Path) -> None:
    claude = (
        "See @README.md for the overview.\n"
        "- @docs/style.md\n"
        "Ask (@docs/missing.md) if unsure.\n"
        "```\nSee @README.md in a fence\n```\n"
        "Mail me at dev@example.com.\n"
    )
    block, diagnostics = _resolve(
        tmp_path, {"CLAUDE.md": claude, "README.md": "readme\n", "docs/style.md": "tabs\n"}
    )
    assert diagnostics == [
        ("import_not_own_line", "README.md"),
        ("import_not_own_line", "docs/style.md"),
    ]
    assert "readme" not in block and "tabs" not in block  # text, never imported
    assert "import_not_own_line" not in block  # diagnostics stay local (S6.6)


def test_mention_like_line_that_names_no_file_stays_plain_text(tmp_path: Path) -> None:
    block, diagnostics = _resolve(
        tmp_path, {"AGENTS.md": "Reviewers:\n@acme/backend-team\n@docs/missing.md\n"}
    )
    assert "@acme/backend-team\n" in block
    assert "@acme/backend-team <!--" not in block
    assert "@docs/missing.md <!-- rejected: import_unreadable -->" in block
    assert diagnostics == [
        ("import_not_a_file", "acme/backend-team"),
        ("import_unreadable", "docs/missing.md"),
    ]


def test_large_instruction_block_warns_locally(tmp_path: Path) -> None:
    big = "".join(f"- rule {i}: keep the API stable\n" for i in range(LARGE_BLOCK_CHARS // 30))
    files = {"AGENTS.md": "@docs/all-rules.md\n", "docs/all-rules.md": big}
    block, diagnostics = _resolve(tmp_path, files)
    assert [code for code, _ in diagnostics] == ["instructions_large"]
    assert "instructions_large" not in block
    _, small = _resolve(tmp_path / "small", {"AGENTS.md": AGENTS})
    assert small == []


def test_cli_report_marks_informational_diagnostics(tmp_path: Path) -> None:
    from context_engine.instructions import format_report

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text(AGENTS, encoding="utf-8")
    (ws / "CLAUDE.md").write_text("@AGENTS.md\n@docs/missing.md\n", encoding="utf-8")
    (tmp_path / "home").mkdir()
    report = format_report(resolve_instructions(engine_paths(tmp_path / "home", ws)))
    assert "  import_already_loaded (note) at " in report
    assert "  import_unreadable at " in report  # a refusal is not a note
