"""``CI=true`` makes every Hypothesis test draw the same examples in every run (two fresh clones
get the same result); without it each run draws new ones."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

# Loads the suite's conftest (its profiles), then prints what one property test drew.
DRAWS = """
import runpy, sys
runpy.run_path(sys.argv[1])
from hypothesis import given, settings, strategies as st
seen = []
@settings(max_examples=25)
@given(st.integers(0, 2**64))
def probe(n):
    seen.append(n)
probe()
print(seen)
"""


def draws(ci: bool) -> str:
    """The examples one fresh interpreter draws."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    if ci:
        env["CI"] = "true"
    done = subprocess.run([sys.executable, "-c", DRAWS, str(TESTS / "conftest.py")], env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


@pytest.mark.slow
def test_ci_runs_draw_the_same_examples_and_local_runs_do_not() -> None:
    assert draws(ci=True) == draws(ci=True)
    assert draws(ci=False) != draws(ci=False)
