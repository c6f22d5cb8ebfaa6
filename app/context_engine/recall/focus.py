"""Focus: a recalled fact beside the best one must be about the same request (S8.6 floor).

BM25's relative floor (0.24 × the top score) lets a long query pull in facts that share one
or two of its words with it (measured on the quality set: half of the injected facts were
such bystanders). A hit after the first is kept only when its score is at least
``FOCUS_FLOOR`` × the top score and the subject words it matched (counting terms that are not
generic, weighted by idf) cover at least ``FOCUS_COVERAGE`` × what the top hit covers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .scoring import Ranked

FOCUS_FLOOR = 0.6
FOCUS_COVERAGE = 0.7


def coverage(bits: int, subject: Sequence[tuple[int, float]]) -> float:
    """Sum of the idf of the subject terms (bit, idf) marked in ``bits``."""
    return sum(weight for bit, weight in subject if bits >> bit & 1)


def focused(
    ranked: Sequence[Ranked],
    subject_terms: Sequence[str],
    all_terms: Sequence[str],
    weights: Mapping[str, float],
    mask_terms: int,
) -> tuple[list[Ranked], list[Ranked]]:
    """(kept, dropped): the best hit and the hits close enough to it in score and subject."""
    if len(ranked) <= 1:
        return list(ranked), []
    wanted = set(subject_terms)
    subject = [
        (j, weights.get(t, 0.0)) for j, t in enumerate(all_terms[:mask_terms]) if t in wanted
    ]
    top = ranked[0]
    top_cover = coverage(top.bits, subject)
    kept: list[Ranked] = [top]
    dropped: list[Ranked] = []
    for hit in ranked[1:]:
        close = hit.score >= FOCUS_FLOOR * top.score
        covers = top_cover <= 0 or coverage(hit.bits, subject) >= FOCUS_COVERAGE * top_cover
        (kept if close and covers else dropped).append(hit)
    return kept, dropped
