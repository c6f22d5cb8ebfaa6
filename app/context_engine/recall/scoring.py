"""Scoring after BM25 (S8.6–S8.7): boosts, the relative floor and the tie order."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from ..facts.freshness import WINDOWS
from ..facts.model import Fact
from .index import NO_TIME, OLDEST, DocMeta, Scored, SparseIndex

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


def boosted(index: SparseIndex, scored: Scored, now_us: int) -> tuple[Any, Any]:
    """Scores × 1.08 for project facts, then × 0.92 for stale ones; and the stale mask.

    Lists for the plain path's ``scored``, NumPy arrays for NumPy's (the same floats).
    """
    slots = scored.slots
    if scored.plain:
        return index.boosted_plain(slots, scored.scores, now_us, PROJECT_BOOST, STALE_PENALTY)
    return index.boosted_np(slots, scored.scores, now_us, PROJECT_BOOST, STALE_PENALTY)


class Ranked(NamedTuple):
    """A scored candidate after boosts; ``bits`` marks which query terms it matched."""

    reference: str
    score: float
    stale: bool
    bits: int = 0


class Ranking(NamedTuple):
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
    tie: Callable[[str], tuple[str, ...]],
) -> Ranking:
    """Boost, keep ≥ 0.24 × top, order by score, newer ``updated_at``, then ``tie`` (S8.6:
    the id, then what tells apart files sharing one id).

    Only the first ``want`` kept candidates (and any tied with the last of them) are put in
    exact order: the block and the trace never show more. ``detail`` bounds the listed
    below-floor candidates.
    """
    adjusted, stale = boosted(index, scored, now_us)
    slots = scored.slots
    if scored.plain:
        updated: Any = index.updated_of(slots)
        floor = RELATIVE_FLOOR * max(adjusted)
        kept = [i for i, value in enumerate(adjusted) if value >= floor]
        below_idx = [i for i, value in enumerate(adjusted) if value < floor]
        head_idx = _best_head(kept, adjusted, updated, want)
        below_idx = _best_below(below_idx, adjusted, detail)
        kept_total = len(kept)
    else:
        head_idx, kept_total, below_idx = _numpy_head(index, scored, adjusted, want, detail)

    # The few listed candidates' values as Python scalars, fetched once (NumPy scalars
    # cost ~10× a float in the sort keys and comparisons below).
    chosen = [*head_idx, *below_idx]
    if scored.plain:
        values = [adjusted[i] for i in chosen]
        news = [updated[i] for i in chosen]
        keys = [index.key(slots[i]) for i in chosen]
        flags = [stale[i] for i in chosen]
    else:
        values = adjusted[chosen].tolist()
        news = index.updated(slots[chosen]).tolist()
        keys = [index.key(slot) for slot in slots[chosen].tolist()]
        flags = stale[chosen].tolist()
    marks = scored.bits_at(chosen)
    row = dict(zip(chosen, range(len(chosen)), strict=True))

    def key(i: int) -> tuple[float, int, tuple[str, ...]]:
        k = row[i]
        return (-values[k], -news[k], tie(keys[k]))

    def record(i: int) -> Ranked:
        k = row[i]
        return Ranked(keys[k], values[k], flags[k], marks[k])

    # The same total order for the head and the listed below-floor candidates (score, newer,
    # id, name, scope): slot order differs between a fresh build and a restored index, so it
    # must never decide what the trace lists.
    head = [record(i) for i in sorted(head_idx, key=key)]
    below = [record(i) for i in sorted(below_idx, key=key)[:detail]]
    return Ranking(head=head, below=below, kept=kept_total, below_total=len(adjusted) - kept_total)


def _best_head(kept: list[int], adjusted: list[float], updated: list[int], want: int) -> list[int]:
    """Every kept candidate at least as good (score, then newer) as the ``want``-th best: the
    head before its exact order, ties at the cut included."""
    if want <= 0 or not kept:
        return []
    if len(kept) <= want:
        return kept
    score, newer = min(heapq.nlargest(want, [(adjusted[i], updated[i]) for i in kept]))
    return [
        i for i in kept
        if adjusted[i] > score or (adjusted[i] == score and updated[i] >= newer)
    ]


def _best_below(below: list[int], adjusted: list[float], detail: int) -> list[int]:
    """Below-floor candidates scoring at least the ``detail``-th best (ties at the cut kept)."""
    if len(below) > detail > 0:
        cut = heapq.nlargest(detail, [adjusted[i] for i in below])[-1]
        return [i for i in below if adjusted[i] >= cut]
    return below


def _numpy_head(
    index: SparseIndex, scored: Scored, adjusted: Any, want: int, detail: int
) -> tuple[list[int], int, list[int]]:
    """``rank``'s selection with NumPy: head candidates, how many kept, listed below-floor.

    Update times are fetched for the few head contenders only, not every candidate."""
    import numpy as np

    keep = adjusted >= RELATIVE_FLOOR * float(adjusted.max())
    kept_total = int(np.count_nonzero(keep))
    if kept_total > 4 * want:
        # The ``want`` best scores are all kept (the top is); everything scoring at least the
        # ``want``-th best is a contender, ties at the cut included.
        chosen = _at_least_the_best(np, adjusted, want)
    else:
        chosen = np.flatnonzero(keep)
    updated = index.updated(scored.slots[chosen])
    ranks = np.lexsort((-updated, -adjusted[chosen]))
    order = chosen[ranks]
    news = updated[ranks]
    need = min(len(order), want)
    while need < len(order) and (
        adjusted[order[need]] == adjusted[order[need - 1]] and news[need] == news[need - 1]
    ):
        need += 1
    below_idx = np.flatnonzero(~keep)
    if len(below_idx) > detail > 0:
        below = adjusted[below_idx]
        cut = np.partition(below, len(below) - detail)[len(below) - detail]
        below_idx = below_idx[adjusted[below_idx] >= cut]
    return order[:need].tolist(), kept_total, below_idx.tolist()


# Every this many candidates, one is sampled for ``_at_least_the_best``'s first cut.
SAMPLE_EVERY = 16


def _at_least_the_best(np: Any, values: Any, want: int) -> Any:
    """Positions of every value at least the ``want``-th largest (ties at the cut included),
    in order; ``0 < want <= len(values)``.

    The ``want``-th largest of a sample is at most the ``want``-th largest of all (the sample's
    best are values too): only the values reaching the sample's cut, ~``want·SAMPLE_EVERY`` of
    them, are partitioned, not all tens of thousands.
    """
    sample = values[::SAMPLE_EVERY]
    if len(sample) >= want:
        floor = np.partition(sample, len(sample) - want)[len(sample) - want]
        near = np.flatnonzero(values >= floor)
        best = values[near]
        cutoff = np.partition(best, len(best) - want)[len(best) - want]
        return near[best >= cutoff]
    cutoff = np.partition(values, len(values) - want)[len(values) - want]
    return np.flatnonzero(values >= cutoff)
