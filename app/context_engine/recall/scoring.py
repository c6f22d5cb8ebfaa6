"""Scoring after BM25 (S8.6–S8.7): boosts, the relative floor and the tie order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from ..facts.freshness import WINDOWS
from ..facts.model import Fact
from .index import NO_TIME, OLDEST, DocMeta, FloatArray, Scored, SparseIndex

RELATIVE_FLOOR = 0.24
PROJECT_BOOST = 1.08
STALE_PENALTY = 0.92

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ZERO_BEFORE = datetime(1971, 1, 1, tzinfo=UTC)  # Go's zero time and the epoch mean "unset"
_US = timedelta(microseconds=1)


def micros(value: datetime | None) -> int | None:
    """Microseconds since the epoch (naive = UTC); ``None`` for unset or zero times."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if value < _ZERO_BEFORE:
        return None
    return (value - _EPOCH) // _US


def doc_meta(fact: Fact) -> DocMeta:
    """Per-fact scoring inputs: scope boost, freshness clock, stale window, tie order."""
    fresh = micros(fact.updated_at or fact.created_at)
    updated = micros(fact.updated_at)
    window = WINDOWS.get(fact.type, WINDOWS["project"])[1]
    return DocMeta(
        project=fact.scope == "project",
        fresh_us=NO_TIME if fresh is None else fresh,
        stale_after_us=window // _US,
        updated_us=OLDEST if updated is None else updated,
    )


def boosted(
    index: SparseIndex, scored: Scored, now_us: int
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Scores × 1.08 for project facts, then × 0.92 for stale ones; and the stale mask."""
    slots = scored.slots
    scores = np.where(index.project(slots), scored.scores * PROJECT_BOOST, scored.scores)
    stale = index.stale(slots, now_us)
    return np.where(stale, scores * STALE_PENALTY, scores), stale


@dataclass(frozen=True, slots=True)
class Ranked:
    """A scored candidate after boosts; ``bits`` marks which query terms it matched."""

    reference: str
    score: float
    stale: bool
    bits: int = 0


@dataclass(frozen=True, slots=True)
class Ranking:
    """The exactly ordered head, the best few below the floor, and both totals."""

    head: list[Ranked]
    below: list[Ranked]
    kept: int
    below_total: int


def rank(
    index: SparseIndex,
    scored: Scored,
    now_us: int,
    want: int,
    detail: int,
    fact_id: Callable[[str], str],
) -> Ranking:
    """Boost, keep ≥ 0.24 × top, order by score, newer ``updated_at``, then id (S8.6).

    Only the first ``want`` kept candidates (and any tied with the last of them) are put in
    exact order: the block and the trace never show more. ``detail`` bounds the listed
    below-floor candidates.
    """
    adjusted, stale = boosted(index, scored, now_us)
    keep = adjusted >= RELATIVE_FLOOR * float(adjusted.max())
    kept = np.flatnonzero(keep)
    updated = index.updated(scored.slots)
    chosen = kept
    if len(kept) > 4 * want:
        neg = -adjusted[kept]
        cutoff = np.partition(neg, want - 1)[want - 1]
        chosen = kept[neg <= cutoff]
    order = chosen[np.lexsort((-updated[chosen], -adjusted[chosen]))]
    need = min(len(order), want)
    while need < len(order) and (
        adjusted[order[need]] == adjusted[order[need - 1]]
        and updated[order[need]] == updated[order[need - 1]]
    ):
        need += 1

    def record(i: int) -> Ranked:
        key = index.key(int(scored.slots[i]))
        return Ranked(key, float(adjusted[i]), bool(stale[i]), int(scored.bits[i]))

    head_idx = sorted(
        order[:need].tolist(),
        key=lambda i: (-adjusted[i], -updated[i], fact_id(index.key(int(scored.slots[i])))),
    )
    head = [record(i) for i in head_idx]
    below_idx = np.flatnonzero(~keep)
    if len(below_idx) > detail > 0:
        # Everything scoring at least the detail-th best (ties at the cut included).
        cut = -np.partition(-adjusted[below_idx], detail - 1)[detail - 1]
        below_idx = below_idx[adjusted[below_idx] >= cut]
    # The same total order as the head (score, newer, id): slot order differs between a
    # fresh build and a restored index, so it must never decide what the trace lists.
    below_sorted = sorted(
        below_idx.tolist(),
        key=lambda i: (-adjusted[i], -updated[i], fact_id(index.key(int(scored.slots[i])))),
    )[:detail]
    return Ranking(
        head=head,
        below=[record(int(i)) for i in below_sorted],
        kept=len(kept),
        below_total=int(len(adjusted) - len(kept)),
    )
