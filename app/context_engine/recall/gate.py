"""The strong-match gate (S8.5): keeps recall out of one-common-word territory.

A fact is a candidate only if ≥ 2 distinct query terms occur in it; or exactly one does and
(the query has ≤ 2 terms and that term is ≥ 6 characters) or the term is distinctive.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import numpy.typing as npt

LONG_TERM = 6


def strong_terms(
    terms: Sequence[str], distinctive: Collection[str], ignored: Collection[str] = ()
) -> frozenset[str]:
    """The query terms that pass the gate on their own (never an ignored stopword)."""
    alone = {t for t in terms if len(t) >= LONG_TERM} if len(terms) <= 2 else set()
    return frozenset((alone | set(distinctive)) - set(ignored))


def passes(
    matched: Collection[str], strong: Collection[str], ignored: Collection[str] = ()
) -> bool:
    """Scalar gate for one fact given the distinct query terms it contains.

    ``ignored`` terms (stopwords) still score but do not count as matches here.
    """
    counted = [t for t in matched if t not in ignored]
    if len(counted) >= 2:
        return True
    return len(counted) == 1 and counted[0] in strong


def gate_mask(
    count: npt.NDArray[np.int64], single_ok: npt.NDArray[np.bool_]
) -> npt.NDArray[np.bool_]:
    """Vectorised gate: ``count`` distinct matches, ``single_ok`` when a strong term matched."""
    mask: npt.NDArray[np.bool_] = (count >= 2) | ((count == 1) & single_ok)
    return mask
