"""Claude Code auto memory: ``<root>/projects/<sanitized cwd>/memory/*.md`` plus ``MEMORY.md``.

Topic files carry frontmatter ``name``, ``description`` and ``type`` (flat, or ``type`` under
``metadata:`` in newer builds) with our four types; ``MEMORY.md`` is the index
(``- [Title](file.md) — hook``) and may hold one-line memories of its own. The folder belongs
to one project (the git root Claude Code was started in), so every candidate is project scope.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...errors import FactFormatError
from ...facts.model import Diagnostic, one_line
from ...paths import EnginePaths
from ...suggestions.readers.claude_code import sanitize
from ..candidate import Candidate, SourceScan
from .text import bullets, clip, diagnostic, name_from, read_text, topic_candidate

INDEX = "MEMORY.md"
SANITIZED_MAX = 200  # longer names get "-<hash>" appended (transcripts.md §4.1)
_LINK = re.compile(
    r"^\[(?P<title>[^\]]+)\]\((?P<file>[^)\s]+\.md)\)\s*(?:[—–:-]+\s*(?P<hook>.*))?$"
)


def memory_dirs(root: Path, paths: EnginePaths) -> list[Path]:
    """Auto-memory folders for this workspace: its git root and cwd, long names by prefix."""
    projects = root / "projects"
    found: list[Path] = []
    for where in dict.fromkeys((str(paths.root), str(paths.workspace))):
        name = sanitize(where)
        if len(name) <= SANITIZED_MAX:
            candidates = [projects / name]
        else:
            try:
                candidates = sorted(
                    projects / entry
                    for entry in os.listdir(projects)
                    if entry.startswith(name[:SANITIZED_MAX] + "-")
                )
            except OSError:
                candidates = []
        for folder in candidates:
            memory = folder / "memory"
            if memory.is_dir() and not memory.is_symlink() and memory not in found:
                found.append(memory)
    return found


IndexEntries = tuple[dict[str, tuple[str, str]], list[Candidate], list[Path]]


def _index_entries(memory: Path) -> IndexEntries:
    """Titles and hooks the index gives each linked file, and its own one-line memories."""
    index = memory / INDEX
    linked: dict[str, tuple[str, str]] = {}
    loose: list[Candidate] = []
    if not index.is_file():
        return linked, loose, []
    text = read_text(index)
    for number, item in bullets(text.split("\n"), 1):
        match = _LINK.match(item)
        if match:
            title, hook = one_line(match.group("title")), match.group("hook") or ""
            linked[match.group("file")] = (title, hook)
            continue
        name = name_from(item)
        if name:
            loose.append(
                Candidate(
                    "claude-code", "project", "project", name, "", clip(item), item,
                    index, number,
                )
            )
    return linked, loose, [index]


def scan(root: Path, paths: EnginePaths) -> SourceScan:
    """Candidates from this workspace's auto-memory folders, index one-liners last."""
    candidates: list[Candidate] = []
    diagnostics: list[Diagnostic] = []
    files: list[Path] = []
    for memory in memory_dirs(root, paths):
        try:
            linked, loose, index_files = _index_entries(memory)
        except FactFormatError as exc:
            diagnostics.append(diagnostic(memory / INDEX, exc))
            linked, loose, index_files = {}, [], [memory / INDEX]
        files.extend(index_files)
        for entry in sorted(os.listdir(memory)):
            path = memory / entry
            if entry == INDEX or not entry.endswith(".md") or entry.startswith("."):
                continue
            if path.is_symlink() or not path.is_file():
                continue
            files.append(path)
            try:
                found = topic_candidate("claude-code", path, linked.get(entry, ("", "")))
            except FactFormatError as exc:
                diagnostics.append(diagnostic(path, exc))
                continue
            if found is not None:
                candidates.append(found)
        candidates.extend(loose)
    return SourceScan("claude-code", tuple(candidates), tuple(diagnostics), tuple(files))
