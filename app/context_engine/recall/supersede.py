"""Stale beside fresh: a stale fact is not recalled next to a fresher fact on the same subject.

Two recalled facts are on the same subject when at least half of the smaller one's words
(stopwords, generic words and numbers left out) occur in the other: an older note and the one
that replaced it share most of their vocabulary. The fresh fact must also be the newer one and
must have matched at least half of the counting query terms the stale one did. The stale fact
is kept in the trace as ``superseded`` with the fact that won, never deleted (S8.7).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..facts.model import Fact
from .scoring import Ranked
from .stopwords import GATE_STOPWORDS, GENERIC_TERMS, is_bare_number
from .tokenize import document_text, tokens

SAME_SUBJECT = 0.5


def subject_words(fact: Fact) -> frozenset[str]:
    """The words of a fact that say what it is about (filler left out)."""
    # Each distinct token is judged once: a long body repeats most of its words.
    return frozenset(
        t
        for t in set(tokens(document_text(fact)))
        if t not in GATE_STOPWORDS and t not in GENERIC_TERMS and not is_bare_number(t)
    )


def same_subject(
    a: Fact, b: Fact, words: Callable[[Fact], frozenset[str]] = subject_words
) -> bool:
    """Whether at least half of the smaller fact's subject words occur in the other."""
    left, right = words(a), words(b)
    if not left or not right:
        return False
    return len(left & right) / min(len(left), len(right)) >= SAME_SUBJECT


def superseded(
    ranked: Sequence[Ranked],
    fact_of: Callable[[str], Fact],
    counting_bits: int,
    newer: Callable[[Fact, Fact], bool],
    subject: Callable[[Fact], frozenset[str]] = subject_words,
) -> dict[str, str]:
    """Stale candidates to leave out, each mapped to the reference of the fresher fact.

    ``subject`` gives a fact's subject words (the recaller hands in a cache of
    :func:`subject_words` kept across turns).
    """
    out: dict[str, str] = {}
    fresh = [r for r in ranked if not r.stale]
    if not fresh or len(fresh) == len(ranked):
        return out
    seen: dict[str, frozenset[str]] = {}

    def words(fact: Fact) -> frozenset[str]:
        key = fact.reference
        if key not in seen:
            seen[key] = subject(fact)
        return seen[key]

    for candidate in ranked:
        if not candidate.stale:
            continue
        old = fact_of(candidate.reference)
        wanted = candidate.bits & counting_bits
        for winner in fresh:
            if 2 * (wanted & winner.bits).bit_count() < wanted.bit_count():
                continue
            new = fact_of(winner.reference)
            if newer(new, old) and same_subject(new, old, words):
                out[candidate.reference] = winner.reference
                break
    return out


SUBJECT_CACHE = 512


class SubjectCache:
    """:func:`subject_words` per fact, kept across turns while the fact object stays the same.

    Tokenizing the candidates' whole documents was the largest part of a turn; a changed
    fact is a new object (facts are frozen), so identity is the version check. Bounded: a
    full cache starts over rather than grow with the store.
    """

    def __init__(self, size: int = SUBJECT_CACHE) -> None:
        self._size = size
        self._words: dict[str, tuple[Fact, frozenset[str]]] = {}

    def __call__(self, fact: Fact) -> frozenset[str]:
        """The subject words of ``fact`` (computed once per fact object)."""
        key = fact.reference
        cached = self._words.get(key)
        if cached is not None and cached[0] is fact:
            return cached[1]
        words = subject_words(fact)
        if len(self._words) >= self._size:
            self._words.clear()
        self._words[key] = (fact, words)
        return words
