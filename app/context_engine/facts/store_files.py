"""Every file of a store that a bundle carries: facts, index, archive entries, snapshots."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from .archive import regular_md_files
from .ids import is_valid_id
from .store import ARCHIVE_DIR, INDEX_NAME, REVISIONS_DIR

KINDS = ("fact", "index", "archive", "revision")


@dataclass(frozen=True, slots=True)
class StoreFile:
    """One regular file inside a store, by kind and path relative to the store root."""

    scope: str
    kind: str
    relative: str
    path: Path


def _regular_md(directory: Path) -> list[tuple[str, Path]]:
    return sorted((path.name, path) for path, _st in regular_md_files(directory))


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def store_files(root: Path, scope: str) -> list[StoreFile]:
    """Regular files only (symlinks and anything else are left out), sorted by path."""
    files: list[StoreFile] = []
    if not _real_dir(root):
        return files
    for name, path in _regular_md(root):
        files.append(StoreFile(scope, "index" if name == INDEX_NAME else "fact", name, path))
    archive = root / ARCHIVE_DIR
    if _real_dir(archive):
        for name, path in _regular_md(archive):
            files.append(StoreFile(scope, "archive", f"{ARCHIVE_DIR}/{name}", path))
    revisions = root / REVISIONS_DIR
    if _real_dir(revisions):
        for fact_id in sorted(os.listdir(revisions)):
            folder = revisions / fact_id
            if not is_valid_id(fact_id) or not _real_dir(folder):
                continue
            for name, path in _regular_md(folder):
                if re.fullmatch(r"[0-9]{1,18}", name[:-3]):
                    relative = f"{REVISIONS_DIR}/{fact_id}/{name}"
                    files.append(StoreFile(scope, "revision", relative, path))
    return files


def is_empty_store(root: Path) -> bool:
    """No facts, archive entries or snapshots (a bare ``# Memory`` index does not count)."""
    files = store_files(root, "")
    for item in files:
        if item.kind != "index":
            return False
        try:
            text = item.path.read_bytes()
        except OSError:
            return False
        if text.strip() not in (b"", b"# Memory"):
            return False
    return True
