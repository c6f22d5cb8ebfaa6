"""Stale beside fresh: a stale fact is not recalled next to a fresher fact on the same subject.

Two recalled facts are on the same subject when the stale one matched no counting query term
the fresh one did not, and their names and titles share at least half of their words
(stopwords, generic words and numbers left out). The fresh fact must also be the newer one. The
stale fact is kept in the trace as ``superseded`` with the fact that won, never deleted (S8.7).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..facts.model import Fact
from .scoring import Ranked
from .stopwords import GATE_STOPWORDS, GENERIC_TERMS, is_bare_number
from .tokenize import tokens

SAME_SUBJECT = 0.5


def subject_words(fact: Fact) -> frozenset[str]:
    """The words that name a fact's subject: its name and title, minus filler."""
    return frozenset(
        t
        for t in tokens(f"{fact.name} {fact.title}")
        if t not in GATE_STOPWORDS and t not in GENERIC_TERMS and not is_bare_number(t)
    )


def same_subject(a: Fact, b: Fact) -> bool:
    """Whether two facts' names and titles share at least half their subject words."""
    left, right = subject_words(a), subject_words(b)
    if not left or not right:
        return False
    return len(left & right) / len(left | right) >= SAME_SUBJECT


def superseded(
    ranked: Sequence[Ranked],
    fact_of: Callable[[str], Fact],
    counting_bits: int,
    newer: Callable[[Fact, Fact], bool],
) -> dict[str, str]:
    """Stale candidates to leave out, each mapped to the reference of the fresher fact."""
    out: dict[str, str] = {}
    fresh = [r for r in ranked if not r.stale]
    for candidate in ranked:
        if not candidate.stale:
            continue
        old = fact_of(candidate.reference)
        wanted = candidate.bits & counting_bits
        for winner in fresh:
            if wanted & ~winner.bits:
                continue
            new = fact_of(winner.reference)
            if newer(new, old) and same_subject(new, old):
                out[candidate.reference] = winner.reference
                break
    return out
