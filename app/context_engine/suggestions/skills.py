"""Skill candidates: workflows repeated in at least two recent sessions (S11.4)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..policy.sensitive import scan_text
from .model import SkillCandidate, UserTurn
from .readers._io import list_dir
from .text import marked_sentences, shorten, stable_hash
from .words import word_set
from .workflows import signatures

MIN_SESSIONS = 2
MAX_SKILLS = 4
MAX_STEPS = 6
EVIDENCE_CHARS = 160
SKILL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_ACRONYMS = word_set("pr mr ci cd api ui db sql url cli sdk pdf json yaml css html")


@dataclass(slots=True)
class _Seen:
    order: int
    sessions: list[str] = field(default_factory=list)
    first_text: dict[str, str] = field(default_factory=dict)  # session -> sentence
    position: dict[str, int] = field(default_factory=dict)  # session -> index in that session


def existing_skill_names(root: Path, home: Path) -> set[str]:
    """Lowercased names of skills already in the project and home roots (transcripts.md §3)."""
    names: set[str] = set()
    dirs = [root / d / "skills" for d in (".reasonix", ".agents", ".agent", ".claude")]
    for directory in [*dirs, home / "skills"]:
        for entry in list_dir(directory):
            if entry.is_dir():
                if (Path(entry.path) / "SKILL.md").is_file():
                    names.add(entry.name.lower())
            elif entry.name.endswith(".md"):
                names.add(entry.name[:-3].lower())
    return names


def skill_name(signature: str) -> str:
    """``update pr`` → ``update-pr``; ``$ gh pr checkout`` → ``gh-pr-checkout``.

    Skill names are ASCII here (Reasonix's name rule is only known for ASCII): a Chinese
    signature keeps its Latin words and a stable hash, ``更新 pr`` → ``workflow-pr-1a2b3c``.
    """
    words = re.findall(r"[a-z0-9]+", signature.lower())
    if signature.isascii():
        return "-".join(words)[:64].strip("-")
    return "-".join(["workflow", *words, stable_hash("skill-name", signature)[:6]])[:64]


def _title(signature: str) -> str:
    words = signature.lstrip("$ ").split()
    return " ".join(w.upper() if w in _ACRONYMS else w for w in words)


def _step_label(signature: str) -> str:
    """``update pr`` → ``Update PR``; ``$ make test`` → ``Run `make test```."""
    if signature.startswith("$ "):
        return f"Run `{signature[2:]}`"
    title = _title(signature)
    return title[:1].upper() + title[1:]


def _collect(turns: Sequence[UserTurn]) -> dict[str, _Seen]:
    seen: dict[str, _Seen] = {}
    positions: dict[str, int] = {}
    for turn in turns:
        for sentence, marker in marked_sentences(turn):
            if marker is not None:
                continue  # a standing rule is a memory candidate, not a workflow step
            for sig in signatures(sentence):
                entry = seen.setdefault(sig, _Seen(len(seen)))
                sid = turn.session_id
                # A secret or address in the ask never reaches evidence or a SKILL.md (S10.2).
                if sid not in entry.first_text and not scan_text(sentence):
                    entry.sessions.append(sid)
                    entry.first_text[sid] = sentence
                    entry.position[sid] = positions.get(sid, 0)
                    positions[sid] = positions.get(sid, 0) + 1
    return seen


def skill_candidates(
    turns: Sequence[UserTurn],
    existing: Iterable[str] = (),
    limit: int = MAX_SKILLS,
) -> list[SkillCandidate]:
    """Group signatures seen in the same ≥ 2 sessions into one workflow each."""
    seen = _collect(turns)
    groups: dict[tuple[str, ...], list[str]] = {}
    for sig, entry in seen.items():
        if len(entry.sessions) >= MIN_SESSIONS:
            groups.setdefault(tuple(sorted(entry.sessions)), []).append(sig)
    taken = {n.lower() for n in existing}
    ranked = sorted(
        groups.items(),
        key=lambda kv: (-len(kv[0]), -len(kv[1]), min(seen[s].order for s in kv[1])),
    )
    out: list[SkillCandidate] = []
    for _sessions, sigs in ranked:
        newest = seen[min(sigs, key=lambda s: seen[s].order)].sessions[0]
        sigs.sort(key=lambda s: (seen[s].position.get(newest, 1 << 30), seen[s].order))
        name = skill_name(sigs[0])
        if not SKILL_NAME.match(name) or name.lower() in taken:
            continue
        taken.add(name.lower())
        out.append(_candidate(name, sigs[:MAX_STEPS], seen))
        if len(out) >= limit:
            break
    return out


def _candidate(name: str, sigs: list[str], seen: dict[str, _Seen]) -> SkillCandidate:
    head = seen[sigs[0]]
    title = _title(sigs[0])
    evidence = tuple(
        f"{sid}: {shorten(head.first_text[sid], EVIDENCE_CHARS)}" for sid in head.sessions
    )
    steps: list[str] = []
    quoted: set[str] = set()
    for i, sig in enumerate(sigs, start=1):
        sentence = seen[sig].first_text[seen[sig].sessions[0]]
        step = f"{i}. {_step_label(sig)}"
        if sentence not in quoted:  # one sentence often asks for several steps: quote it once
            quoted.add(sentence)
            step += f" — as asked: “{shorten(sentence, EVIDENCE_CHARS)}”"
        steps.append(step)
    description = f"Use when asked to {title} — a workflow repeated across recent sessions."
    body = "\n".join(
        [
            f"# {title[:1].upper()}{title[1:]}",
            "",
            f"Proposed from {len(head.sessions)} recent sessions that asked for the same work.",
            "",
            "## Steps",
            "",
            *steps,
            "",
            "## Evidence",
            "",
            *(f"- {line}" for line in evidence),
        ]
    )
    return SkillCandidate(
        id=f"sug-skill-{stable_hash('skill', name)[:16]}",
        name=name,
        description=description,
        evidence=evidence,
        body=body,
    )
