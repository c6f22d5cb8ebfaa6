"""Differential: instruction resolution against the real Reasonix code (S6).

Each tree is resolved by both; documents (order, file, expanded body) and diagnostic codes are
compared. A case names the accepted differences it shows and on which side they show
(documents or diagnostics); anything else fails.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from context_engine.instructions import resolve_instructions
from support.instructions import engine_paths
from support.oracle import Oracle, check_case, require_oracle

pytestmark = pytest.mark.slow

AGENTS = "# Agents\n\nUse pnpm.\n"

CASES: dict[str, tuple[dict[str, bytes | str], str, dict[str, str]]] = {
    "nested directories": (
        {"AGENTS.md": AGENTS, "sub/AGENTS.md": "Sub rule.\n", "sub/CLAUDE.local.md": "Local.\n"},
        "sub",
        {},
    ),
    "imports two levels deep": (
        {"AGENTS.md": "Top.\n@docs/a.md\n", "docs/a.md": "A.\n@b.md\n", "docs/b.md": "B.\n"},
        "",
        {},
    ),
    "claude md imports agents md": (
        {"AGENTS.md": AGENTS, "CLAUDE.md": "@AGENTS.md\n\nClaude extras.\n"},
        "",
        {"already_loaded_import": "documents", "local_info_diagnostics": "diagnostics"},
    ),
    "legacy encodings": (
        {
            "AGENTS.md": "# 规则\n\n使用 pnpm。\n@docs/x.md\n".encode("gb18030"),
            "docs/x.md": b"\xff\xfe" + "导入 UTF-16 LE\n".encode("utf-16-le"),
            "CLAUDE.md": b"\xfe\xff" + "Claude UTF-16 BE 文本\n".encode("utf-16-be"),
            "sub/AGENTS.md": b"\xef\xbb\xbf" + "BOM 子目录\n".encode(),
        },
        "sub",
        {},
    ),
    "identical bodies": (
        {"AGENTS.md": AGENTS, "CLAUDE.md": AGENTS},
        "",
        {"identical_bodies_keep_claude": "documents", "local_info_diagnostics": "diagnostics"},
    ),
    "missing import": (
        {"AGENTS.md": "Rules.\n@docs/missing.md\n"},
        "",
        {"rejection_notes": "documents"},
    ),
    "mention line": (
        {"AGENTS.md": "Reviewers:\n@acme/backend-team\n"},
        "",
        {"mention_kept_as_text": "diagnostics"},
    ),
    "inline at path": (
        {"CLAUDE.md": "See @README.md for more.\n- @docs/style.md\n", "README.md": "r\n",
         "docs/style.md": "s\n"},
        "",
        {"local_info_diagnostics": "diagnostics"},
    ),
    "fenced import line": (
        {"AGENTS.md": "Example:\n```\n@docs/x.md\n```\n", "docs/x.md": "X.\n"},
        "",
        {"fenced_import_lines": "documents"},
    ),
    "duplicate import": (
        {"AGENTS.md": "@docs/x.md\n@docs/x.md\n", "docs/x.md": "X.\n"},
        "",
        {"duplicate_import_note": "documents"},
    ),
}


def _tree(base: Path, files: dict[str, bytes | str]) -> tuple[Path, Path]:
    home, ws = base / "home", base / "ws"
    (ws / ".git").mkdir(parents=True)
    home.mkdir()
    for rel, data in files.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return home, ws


@pytest.mark.parametrize("case", sorted(CASES))
def test_instruction_resolution_matches_reasonix(tmp_path: Path, case: str) -> None:
    require_oracle()
    files, target, declared = CASES[case]
    home, ws = _tree(tmp_path, files)
    theirs = Oracle(home, ws).run("instructions", target=str(ws / target), root=str(ws))
    ours = resolve_instructions(engine_paths(home, ws), ws / target)
    docs_ours = [(str(d.path.relative_to(ws)), d.body.strip("\n")) for d in ours.documents]
    docs_theirs = [
        (str(Path(d["path"]).relative_to(ws)), str(d["body"]).strip("\n"))
        for d in theirs["documents"]
    ]
    diag_ours = Counter(d.code for d in ours.diagnostics)
    diag_theirs = Counter(str(d["code"]) for d in theirs["diagnostics"])
    aspects = {"documents"} if docs_ours != docs_theirs else set()
    if diag_ours != diag_theirs:
        aspects.add("diagnostics")
    shown = {name for name, aspect in declared.items() if aspect in aspects}
    shown |= {f"undeclared {a}" for a in aspects - set(declared.values())}
    check_case(case, shown, set(declared))


def test_legacy_encoded_documents_read_exactly_as_reasonix(tmp_path: Path) -> None:
    """Acceptance (issue 16): GB18030 and UTF-16 instruction files load as Reasonix loads them."""
    require_oracle()
    files, target, _ = CASES["legacy encodings"]
    home, ws = _tree(tmp_path, files)
    theirs = Oracle(home, ws).run("instructions", target=str(ws / target), root=str(ws))
    ours = resolve_instructions(engine_paths(home, ws), ws / target)
    assert [d.body.strip("\n") for d in ours.documents] == [
        str(d["body"]).strip("\n") for d in theirs["documents"]
    ]
    assert ours.diagnostics == () and theirs["diagnostics"] == []
    assert len(ours.documents) == 3
