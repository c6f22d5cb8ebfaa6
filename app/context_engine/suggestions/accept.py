"""Accepting a candidate (S11.5): find it in a scan; write a skill as a new project SKILL.md.

A memory candidate is saved by the catalog's door (``catalog.door.accept_memory``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import AlreadyExists, ContextEngineError, InvalidName
from ..facts.model import FactFields
from ..paths import EnginePaths
from .model import MemoryCandidate, SkillCandidate, Suggestions
from .skills import SKILL_NAME

SKILLS_DIR = (".reasonix", "skills")


class CandidateNotFound(ContextEngineError):
    """No candidate of the current scan has the given id."""

    code = "not_found"


@dataclass(frozen=True, slots=True)
class Edits(FactFields):
    """Fields the person changed before accepting; ``None`` keeps the proposal."""


def find_candidate(suggestions: Suggestions, candidate_id: str) -> MemoryCandidate | SkillCandidate:
    """The candidate with ``candidate_id`` in a scan result."""
    for memory in suggestions.memories:
        if memory.id == candidate_id:
            return memory
    for skill in suggestions.skills:
        if skill.id == candidate_id:
            return skill
    raise CandidateNotFound(f'suggestion "{candidate_id}" not found; run suggest again')


def render_skill(name: str, description: str, body: str) -> str:
    """``SKILL.md`` text: ``name``/``description`` frontmatter, then the body (§3.4)."""
    front = yaml.safe_dump(
        {"name": name, "description": description},
        sort_keys=False,
        allow_unicode=True,
        width=1 << 16,
    )
    return f"---\n{front}---\n\n{body.rstrip()}\n"


def skill_path(paths: EnginePaths, name: str) -> Path:
    """``<workspace root>/.reasonix/skills/<name>/SKILL.md``."""
    return paths.root.joinpath(*SKILLS_DIR, name, "SKILL.md")


def accept_skill(paths: EnginePaths, candidate: SkillCandidate, edits: Edits = Edits()) -> Path:
    """Create the skill file with ``O_EXCL``: never over an existing skill of that name."""
    name = edits.name if edits.name is not None else candidate.name
    if not SKILL_NAME.match(name):
        raise InvalidName(f"invalid skill name: {name!r}")
    path = skill_path(paths, name)
    flat = path.parent.parent / f"{name}.md"
    if path.exists() or flat.exists():
        raise AlreadyExists(f'skill "{name}" already exists: {path if path.exists() else flat}')
    text = render_skill(
        name,
        edits.description if edits.description is not None else candidate.description,
        edits.body if edits.body is not None else candidate.body,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError as exc:
        raise AlreadyExists(f'skill "{name}" already exists: {path}') from exc
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())
    return path
