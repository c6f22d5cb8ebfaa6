"""Stable-prefix build time and per-turn overhead (recall + notes) at N facts (issue 5).

Prints medians over several runs: building a session's stable prefix, a warm user turn that
recalls (index kept between turns), a turn with nothing to recall, and a turn right after one
fact changed (incremental index update + one turn-tail note); the baseline in the same run is a
turn that rebuilds the recall index from scratch, as a host without a kept session would.

    .venv/bin/python bench/session_bench.py              # 10,000 facts
    .venv/bin/python bench/session_bench.py --facts 50000 --runs 7
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _timing import median

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "app"), str(ROOT / "bench")]

from _facts import make_workspace  # noqa: E402
from context_engine.engine import ContextEngine  # noqa: E402
from context_engine.facts.memory import Memory  # noqa: E402

PROMPT = "why does the docker release build time out after the cache migration?"


def median_ms(action: Callable[[], object], runs: int) -> float:
    """Median wall time of ``action`` in ms."""
    return median(action, runs) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="session-bench-"))
    try:
        paths = make_workspace(base, args.facts)
        engine = ContextEngine(paths)
        engine.active_facts()  # first read of the stores (parse) is the store bench's business
        prefix_ms = median_ms(lambda: engine.start_session("headless"), args.runs)
        session = engine.start_session("headless")
        session.process_user_turn(PROMPT)  # builds the recall index once
        warm_ms = median_ms(lambda: session.process_user_turn(PROMPT), args.runs)
        generic_ms = median_ms(lambda: session.process_user_turn("continue"), args.runs)
        memory = Memory(paths)
        counter = iter(range(10**6))

        def changed_turn() -> None:
            memory.save(
                name=f"bench-change-{next(counter)}",
                description="A fact saved mid-session",
                body="The docker release build now times out after 20 minutes.",
                type="project",
            )
            start = time.perf_counter()
            turn = session.process_user_turn(PROMPT)
            changed.append(time.perf_counter() - start)
            assert "<memory-update>" in turn.notes

        changed: list[float] = []
        for _ in range(args.runs):
            changed_turn()
        changed_ms = statistics.median(changed) * 1000

        def cold_turn() -> None:
            ContextEngine(paths, memory=engine.memory).start_session("headless").process_user_turn(
                PROMPT
            )

        cold_ms = median_ms(cold_turn, max(3, args.runs // 2))

        def restored_turn() -> None:
            # A new host process: facts through the snapshot cache, index from its saved copy.
            ContextEngine(paths).start_session("headless").process_user_turn(PROMPT)

        restored_turn()  # writes both caches for the current stores
        restored_ms = median_ms(restored_turn, max(3, args.runs // 2))
        print(f"session, {args.facts:,} facts, {args.runs} runs (median)")
        size = len(session.stable_prefix)
        print(f"  stable prefix build          : {prefix_ms:8.1f} ms  ({size:,} chars)")
        print(f"  turn with recall (warm index): {warm_ms:8.1f} ms")
        print(f"  generic turn ('continue')    : {generic_ms:8.1f} ms")
        print(f"  turn after one fact changed  : {changed_ms:8.1f} ms  (incremental index + note)")
        print(f"  baseline: new session + turn : {cold_ms:8.1f} ms  (index rebuilt)"
              f"   ratio warm/baseline {warm_ms / cold_ms:.3f}")
        print(f"  new engine + session + turn  : {restored_ms:8.1f} ms  (caches: facts + index)"
              f"   ratio /baseline {restored_ms / cold_ms:.3f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
