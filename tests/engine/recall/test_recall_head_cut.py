"""The head's first cut by a sample keeps exactly the candidates a full partition keeps."""

from __future__ import annotations

import numpy as np
from context_engine.recall import scoring
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([0.5, 1.0, 1.25, 2.0, 3.5]) | st.floats(0.01, 100.0),
             min_size=1, max_size=600),
    st.integers(min_value=1, max_value=40),
)
def test_the_sampled_cut_keeps_what_a_full_partition_keeps(values, want) -> None:  # type: ignore[no-untyped-def]
    array = np.array(values)
    want = min(want, len(array))
    cutoff = np.sort(array)[len(array) - want]  # the want-th largest
    expected = np.flatnonzero(array >= cutoff).tolist()
    assert scoring._at_least_the_best(np, array, want).tolist() == expected


def test_a_sample_whose_best_are_low_still_finds_the_best() -> None:
    values = np.ones(4096)
    values[1::16] = 50.0  # never sampled (the sample takes every 16th from 0)
    values[1] = 60.0  # one best of all, then 255 tied at 50: the cut keeps every tie
    assert scoring._at_least_the_best(np, values, 24).tolist() == list(range(1, 4096, 16))
