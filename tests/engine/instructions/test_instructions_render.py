"""Provider block (S6.7, S6.6, S7.4): labels only, byte-identical across locations."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from context_engine.instructions import render_provider_block, resolve_instructions
from context_engine.instructions.model import Resolution
from context_engine.instructions.render import PREAMBLE
from support.instructions import engine_paths

ABSOLUTE = re.compile(r"(?:^|[\s\"'(=])/[A-Za-z0-9._-]")


def _tree(base: Path) -> None:
    files = {
        "home/AGENTS.md": "User: answer briefly.\n@rules/tone.md\n",
        "home/rules/tone.md": "Tone: plain.\n",
        "ws/AGENTS.md": "Root rule.\n@docs/testing.md\n@../escape.md\n@docs/missing.md\n",
        "ws/docs/testing.md": "Run the tests.\n@../docs/more.md\n",
        "ws/docs/more.md": "More testing rules.\n",
        "ws/pkg/CLAUDE.local.md": "Local pkg rule.\n",
        "ws/pkg/api/AGENTS.md": "API rule.\n@notes/a.md\n",
        "ws/pkg/api/notes/a.md": "Note a.\n@a.md\n",
    }
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_block_is_byte_identical_at_two_roots_and_has_no_paths(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "elsewhere" / "deeper" / "two"
    _tree(first)
    shutil.copytree(first, second)
    blocks = []
    for base in (first, second):
        res = resolve_instructions(engine_paths(base / "home", base / "ws"), base / "ws/pkg/api")
        assert res.diagnostics  # the tree has rejected imports: they must stay out of the block
        block = render_provider_block(res)
        for diag in res.diagnostics:
            assert diag.message not in block
        assert str(base) not in block
        assert str(tmp_path) not in block
        assert ABSOLUTE.search(block) is None, ABSOLUTE.search(block)
        blocks.append(block.encode("utf-8"))
    assert blocks[0] == blocks[1]
    assert b"<instruction-import path=\"docs/more.md\">" in blocks[0]


def test_block_layout(tmp_path: Path) -> None:
    _tree(tmp_path)
    res = resolve_instructions(
        engine_paths(tmp_path / "home", tmp_path / "ws"), tmp_path / "ws/pkg"
    )
    assert render_provider_block(res) == (
        "# Instructions\n\n"
        f"{PREAMBLE}\n\n"
        "## user/AGENTS.md (user)\n\n"
        "User: answer briefly.\n"
        '<instruction-import path="rules/tone.md">\nTone: plain.\n</instruction-import>\n\n'
        "## workspace/AGENTS.md (workspace, applies to workspace)\n\n"
        "Root rule.\n"
        '<instruction-import path="docs/testing.md">\n'
        "Run the tests.\n"
        '<instruction-import path="docs/more.md">\nMore testing rules.\n</instruction-import>\n'
        "</instruction-import>\n"
        "@../escape.md <!-- rejected: import_outside_source -->\n"
        "@docs/missing.md <!-- rejected: import_unreadable -->\n\n"
        "## workspace/pkg/CLAUDE.local.md (workspace, applies to workspace/pkg)\n\n"
        "Local pkg rule.\n"
    )
    assert "later entries are more specific and win" in PREAMBLE
    assert "current user request is the highest" in PREAMBLE


def test_empty_resolution_renders_nothing(tmp_path: Path) -> None:
    res = Resolution(tmp_path, tmp_path, (), ())
    assert render_provider_block(res) == ""
