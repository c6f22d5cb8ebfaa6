"""Gemini CLI memories (google-gemini/gemini-cli ``tools/memoryTool.ts``, ``config/storage.ts``).

* User level: ``save_memory`` appends ``- <fact>`` bullets under ``## Gemini Added Memories`` in
  ``<root>/GEMINI.md`` → global candidates.
* Project level (newer memory): ``<root>/tmp/<project id>/memory/MEMORY.md`` holds ``- <fact>``
  bullets and sibling ``*.md`` files (``skills/`` excluded) → project candidates. The project id
  is the slug ``projects.json`` maps this root to, a ``tmp/*/.project_root`` naming it, or the
  legacy ``sha256(root)`` folder (transcripts.md §6.1).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ... import bounded_json
from ...facts.model import FactType, Scope
from ...paths import EnginePaths
from ..candidate import Candidate, SourceScan
from .gathered import Gathered
from .text import bullets, clip, name_from, read_text, topic_candidate

SECTION = "## Gemini Added Memories"
GLOBAL_FILE = "GEMINI.md"
PROJECT_INDEX = "MEMORY.md"
MAX_REGISTRY_BYTES = 4 * 1024 * 1024


def _fact(
    text: str, fact_type: FactType, scope: Scope, source: Path, line: int
) -> Candidate | None:
    name = name_from(text)
    if not name:
        return None
    return Candidate("gemini", fact_type, scope, name, "", clip(text), text, source, line)


def _global_memories(path: Path) -> list[Candidate]:
    lines = read_text(path).split("\n")
    found: list[Candidate] = []
    inside = False
    section: list[str] = []
    start = 0
    for number, line in enumerate(lines, 1):
        if line.strip() == SECTION:
            inside, start = True, number + 1
            section = []
            continue
        if inside and line.startswith("## "):
            inside = False
            found.extend(_bullet_facts(section, start, "user", "global", path))
        elif inside:
            section.append(line)
    if inside:
        found.extend(_bullet_facts(section, start, "user", "global", path))
    return found


def _bullet_facts(
    lines: list[str], start: int, fact_type: FactType, scope: Scope, path: Path
) -> list[Candidate]:
    made = (_fact(text, fact_type, scope, path, number) for number, text in bullets(lines, start))
    return [c for c in made if c is not None]


def project_ids(root: Path, paths: EnginePaths) -> list[str]:
    """Folder names under ``<root>/tmp`` that belong to this workspace root."""
    ids: list[str] = []
    wanted = {str(paths.root), str(paths.workspace)}
    registry = root / "projects.json"
    try:
        if registry.is_file() and registry.stat().st_size <= MAX_REGISTRY_BYTES:
            text = registry.read_text(encoding="utf-8")
            projects = bounded_json.loads(text, what="projects.json").get("projects", {})
            if isinstance(projects, dict):
                ids.extend(v for k, v in projects.items() if k in wanted and isinstance(v, str))
    except (OSError, ValueError, AttributeError):
        pass
    tmp = root / "tmp"
    try:
        entries = sorted(os.listdir(tmp))
    except OSError:
        entries = []
    for entry in entries:
        marker = tmp / entry / ".project_root"
        try:
            if marker.is_file() and marker.read_text(encoding="utf-8").strip() in wanted:
                ids.append(entry)
        except (OSError, UnicodeDecodeError):
            continue
    ids.extend(hashlib.sha256(w.encode("utf-8")).hexdigest() for w in sorted(wanted))
    return [i for i in dict.fromkeys(ids) if i and "/" not in i and i not in (".", "..")]


def _project_memories(memory: Path, gathered: Gathered) -> None:
    for entry in sorted(os.listdir(memory)):
        path = memory / entry
        if not entry.endswith(".md") or entry.startswith(".") or path.is_symlink():
            continue
        if path.is_file():
            gathered.read(path, _project_index if entry == PROJECT_INDEX else _topic)


def _project_index(path: Path) -> list[Candidate]:
    return _bullet_facts(read_text(path).split("\n"), 1, "project", "project", path)


def _topic(path: Path) -> list[Candidate]:
    made = topic_candidate("gemini", path)
    return [] if made is None else [made]


def scan(root: Path, paths: EnginePaths) -> SourceScan:
    """Candidates: this project's memory folder first, then the user-level GEMINI.md."""
    gathered = Gathered()
    for project_id in project_ids(root, paths):
        memory = root / "tmp" / project_id / "memory"
        if memory.is_dir() and not memory.is_symlink():
            _project_memories(memory, gathered)
    global_file = root / GLOBAL_FILE
    if global_file.is_file() and not global_file.is_symlink():
        gathered.read(global_file, _global_memories)
    return gathered.result("gemini")
