"""The benches' one timing helper: the median of several runs of a call."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median(
    func: Callable[[], object],
    runs: int,
    *,
    clock: Callable[[], float] = time.perf_counter,
    warm_up: bool = False,
) -> float:
    """Median ``clock`` time of ``runs`` calls of ``func``, in seconds (after one warm-up)."""
    if warm_up:
        func()
    samples = []
    for _ in range(runs):
        start = clock()
        func()
        samples.append(clock() - start)
    return statistics.median(samples)
