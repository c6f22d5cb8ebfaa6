"""Golden trees for instruction resolution (S6.1–S6.5, S6.7).

Each case under ``data/instructions/<case>/`` holds ``tree/`` and ``expected.json`` (input,
documents, diagnostics, provider block, with paths relative to the tree). Files whose text holds
``NEVER`` must never be read (nor even opened, in cases without symlinks: Policy B opens a
symlink's target to check it, then closes it unread). Git cannot keep symlinks and FIFOs
reliably, so ``input`` may list ``symlinks`` (path → link text) and ``fifos`` to create in the
copied tree, and ``unreadable`` names that the file-system seam refuses (tests run as root).
Set ``UPDATE_GOLDEN=1`` to rewrite the expectations (then review the diff by hand).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from context_engine.instructions import render_provider_block, resolve_instructions
from context_engine.instructions.model import Resolution
from support.instructions import RecordingFS, engine_paths

DATA = Path(__file__).resolve().parents[1] / "data" / "instructions"
CASES = sorted(p.name for p in DATA.iterdir() if (p / "expected.json").exists())


def _rel(value: str | None, tree: Path) -> str | None:
    if value is None:
        return None
    prefix = str(tree) + "/"
    return value[len(prefix) :] if value.startswith(prefix) else value


def _snapshot(resolution: Resolution, tree: Path) -> dict[str, Any]:
    return {
        "documents": [
            {
                "order": doc.order,
                "scope": doc.scope,
                "label": doc.label,
                "path": _rel(str(doc.path), tree),
                "directory": _rel(str(doc.directory), tree),
                "dir_label": doc.dir_label,
                "local": doc.local,
                "imports": [
                    {
                        "path": _rel(str(item.path), tree),
                        "source": _rel(str(item.source), tree),
                        "line": item.line,
                    }
                    for item in doc.imports
                ],
            }
            for doc in resolution.documents
        ],
        "diagnostics": [
            {
                "code": diag.code,
                "source": _rel(None if diag.source is None else str(diag.source), tree),
                "line": diag.line,
                "path": _rel(diag.path, tree),
            }
            for diag in resolution.diagnostics
        ],
        "block": render_provider_block(resolution).splitlines(),
    }


def _never_files(tree: Path) -> set[str]:
    found = set()
    for dirpath, _dirs, files in os.walk(tree):
        for name in files:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():  # FIFOs would block, links are aliases
                continue
            if b"NEVER" in path.read_bytes():
                found.add(str(path))
    return found


class _SeamFS(RecordingFS):
    """Records opens and reads; refuses the listed names as if permission were denied."""

    def __init__(self, refused: set[str]) -> None:
        super().__init__()
        self.refused = refused

    def open(self, path: str, flags: int, dir_fd: int | None = None) -> int:
        if path.rsplit("/", 1)[-1] in self.refused:
            raise PermissionError(13, "Permission denied", path)
        return super().open(path, flags, dir_fd)


@pytest.mark.parametrize("case", CASES)
def test_golden_tree(case: str, tmp_path: Path) -> None:
    expected_file = DATA / case / "expected.json"
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    tree = tmp_path / "tree"
    shutil.copytree(DATA / case / "tree", tree, symlinks=True)
    spec = expected["input"]
    for link, text in spec.get("symlinks", {}).items():
        (tree / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(text, tree / link)
    for fifo in spec.get("fifos", []):
        os.mkfifo(tree / fifo)
    paths = engine_paths(tree / spec["home"], tree / spec["root"])
    fs = _SeamFS(set(spec.get("unreadable", [])))
    resolution = resolve_instructions(paths, tree / spec["target"], fs=fs)
    got = _snapshot(resolution, tree)
    if os.environ.get("UPDATE_GOLDEN"):
        expected_file.write_text(
            json.dumps({"input": spec, **got}, indent=2, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
    assert got["documents"] == expected["documents"]
    assert got["diagnostics"] == expected["diagnostics"]
    assert got["block"] == expected["block"]
    never = _never_files(tree)
    if not spec.get("symlinks"):
        assert not never & set(fs.opened), "a NEVER file was opened"
    assert not never & set(fs.read_paths), "a NEVER file was read"
    assert all("NEVER" not in doc.body for doc in resolution.documents)
    assert str(tmp_path) not in render_provider_block(resolution)
