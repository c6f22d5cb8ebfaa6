"""The strong-match gate (S8.5): keeps recall out of one-common-word territory.

A fact is a candidate only if ≥ 2 distinct query terms occur in it; or exactly one does and
(the query has ≤ 2 content terms and that term is ≥ 6 characters) or the term is distinctive.
Stopwords and request words (``ignored``) never count; generic activity words and bare numbers
(``weak``) count only beside a subject term, so they never make a match on their own.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # NumPy is imported only by the path that uses it (recall/index.py)
    import numpy as np
    import numpy.typing as npt

LONG_TERM = 6
# A word that stands alone for a short query must also be rare in the pool: in at most this
# share of the facts (and never fewer than RARE_MIN). "invoice" in an invoicing app's store is
# long but says nothing on its own; "sentry" does.
RARE_SHARE = 0.03
RARE_MIN = 3


def rare_enough(df: int, pool_size: int) -> bool:
    """Whether a word found in ``df`` of ``pool_size`` facts may match alone."""
    return df <= max(RARE_MIN, RARE_SHARE * pool_size)


def strong_terms(
    terms: Sequence[str],
    distinctive: Collection[str],
    ignored: Collection[str] = (),
    weak: Collection[str] = (),
    typed_lengths: dict[str, int] | None = None,
) -> frozenset[str]:
    """The query terms that pass the gate on their own (never an ignored or generic term).

    The "≤ 2 terms" rule counts content terms only (S8.5): ``check sentry crash`` is two.
    In such a short query a bare number of three or more digits (``what about 6928``) also
    passes alone; in a longer one a number only helps a subject word.
    ``typed_lengths`` gives the length of each term as typed (a folded stem is shorter).
    """
    skip = set(ignored)
    generic = {t for t in weak if not _is_number(t)}
    content = [t for t in terms if t not in skip and t not in generic]
    lengths = typed_lengths or {}
    alone: set[str] = set()
    if len(content) <= 2:
        for t in content:
            if _is_number(t):
                if len(t) >= 3:
                    alone.add(t)
            elif lengths.get(t, len(t)) >= LONG_TERM:
                alone.add(t)
    return frozenset((alone | (set(distinctive) - set(weak))) - skip)


def _is_number(term: str) -> bool:
    return term.isascii() and term.isdigit()


def passes(
    matched: Collection[str],
    strong: Collection[str],
    ignored: Collection[str] = (),
    weak: Collection[str] = (),
) -> bool:
    """Scalar gate for one fact given the distinct query terms it contains.

    ``ignored`` terms (stopwords) still score but do not count as matches here; ``weak``
    terms count only when a term that is neither ignored nor weak matched too.
    """
    counted = [t for t in matched if t not in ignored]
    if len(counted) >= 2:
        return any(t not in weak for t in counted)
    return len(counted) == 1 and counted[0] in strong


def gate_mask(
    count: npt.NDArray[np.int64],
    single_ok: npt.NDArray[np.bool_],
    specific: npt.NDArray[np.int64] | None = None,
) -> npt.NDArray[np.bool_]:
    """Vectorised gate: ``count`` distinct matches, ``single_ok`` when a strong term matched,
    ``specific`` the matches that are not weak (``None``: every match is specific)."""
    pair = count >= 2
    if specific is not None:
        pair &= specific >= 1
    mask: npt.NDArray[np.bool_] = pair | ((count == 1) & single_ok)
    return mask
