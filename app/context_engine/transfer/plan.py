"""Which candidates are new: skip what is already here, flag what looks secret (S10.1, S10.2)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..facts.model import Fact, normalize_key
from ..policy.sensitive import rule_ids, scan_fields
from ..policy.write_policy import RememberArgs, find_duplicates
from .candidate import Candidate, Planned

REASON_SAME_CONTENT = "the same content is already a memory"
REASON_DUPLICATE = "an existing memory may already cover this fact"  # S10.1's wording
REASON_REPEAT = "found earlier in this import"


def _as_fact(candidate: Candidate) -> Fact:
    """A stand-in active fact, so later candidates are checked against earlier ones."""
    return Fact("", 0, candidate.name, candidate.title, candidate.description, candidate.type,
                candidate.scope, candidate.body)


def _args(candidate: Candidate) -> RememberArgs:
    return RememberArgs(name=candidate.name, title=candidate.title or None,
                        description=candidate.description or None, type=candidate.type,
                        scope=candidate.scope, body=candidate.body)


def findings_of(candidate: Candidate) -> tuple[str, ...]:
    """The sensitive rules any written field matches (rule ids only)."""
    return rule_ids(scan_fields(_args(candidate).as_fields()))


def plan(candidates: Sequence[Candidate], active: Iterable[Fact]) -> tuple[Planned, ...]:
    """Each candidate with its status against the active facts of both stores, in order."""
    existing = list(active)
    bodies = {normalize_key(f.body) for f in existing if f.body.strip()}
    taken: list[Fact] = []
    planned: list[Planned] = []
    for candidate in candidates:
        findings = findings_of(candidate)
        body_key = normalize_key(candidate.body)
        if body_key and body_key in bodies:
            planned.append(Planned(candidate, "exists", REASON_SAME_CONTENT, findings))
            continue
        hits = find_duplicates(_args(candidate), candidate.name, existing)
        if hits:
            reason = f"{REASON_DUPLICATE}: {hits[0].reference}"
            planned.append(Planned(candidate, "exists", reason, findings))
            continue
        if find_duplicates(_args(candidate), candidate.name, taken) or any(
            normalize_key(t.body) == body_key for t in taken
        ):
            planned.append(Planned(candidate, "repeat", REASON_REPEAT, findings))
            continue
        taken.append(_as_fact(candidate))
        planned.append(Planned(candidate, "new", "", findings))
    return tuple(planned)
