"""``scan``: recent sessions → memory and skill candidates; reads only, never writes (S11)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..facts.model import Fact
from ..paths import EnginePaths
from . import sources
from .candidates import memory_candidates
from .model import ScanDiagnostic, Suggestions
from .roots import SourceRoots
from .sessions import MAX_SESSIONS, load_recent
from .similarity import CoverageIndex
from .skills import existing_skill_names, skill_candidates
from .text import marked_sentences


def scan(
    paths: EnginePaths,
    roots: SourceRoots | None = None,
    *,
    facts: Iterable[Fact] | None = None,
    instruction_bodies: Iterable[str] | None = None,
    limit: int = MAX_SESSIONS,
) -> Suggestions:
    """Scan the workspace's most recent sessions for memory and skill candidates.

    ``facts`` and ``instruction_bodies`` default to both stores and the loaded instruction
    files; tests pass them explicitly.
    """
    roots = roots if roots is not None else SourceRoots.from_env()
    diagnostics: list[ScanDiagnostic] = []
    recent = load_recent(paths.state, paths.root, roots, limit)
    turns = [turn for _session, result in recent.sessions for turn in result.turns]
    # The facts (and the coverage index of their text) only when there is a turn to check:
    # with no session, a store of 100,000 facts is neither read nor indexed.
    if facts is None:
        facts = sources.load_facts(paths, diagnostics) if turns else ()
    if instruction_bodies is None:
        instruction_bodies = sources.load_instruction_bodies(paths, diagnostics)
    diagnostics.extend(recent.diagnostics)
    fact_list = list(facts)
    covered = CoverageIndex(
        text for fact in fact_list for text in (fact.body, fact.title, fact.description) if text
    )
    for body in instruction_bodies:
        covered.add(body)
    try:
        memories = memory_candidates(turns, covered, taken_names=(f.name for f in fact_list))
        skills = skill_candidates(turns, existing_skill_names(paths.root, paths.home))
    finally:
        marked_sentences.cache_clear()  # shared by the two extractors of this scan only
    return Suggestions(
        available=True,
        memories=tuple(memories),
        skills=tuple(skills),
        diagnostics=tuple(diagnostics),
        sessions=tuple(f"{s.source}:{s.session_id}" for s, _r in recent.sessions),
    )


def unavailable() -> Suggestions:
    """What a remote workspace without the capability reports (S11.6)."""
    return Suggestions(available=False)


def session_roots(roots: SourceRoots, state: Path) -> list[Path]:
    """The directories whose changes can change a scan (for watchers, S13.3)."""
    base = roots.state if roots.state is not None else state
    return [
        base / "projects",
        base / "sessions",
        roots.claude / "projects",
        roots.codex / "sessions",
        roots.codex / "archived_sessions",
        roots.gemini / "tmp",
    ]
