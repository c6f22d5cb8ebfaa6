"""Lockless readers never see a torn fact (S4.4, RELIABILITY C16), with a control that does."""

from __future__ import annotations

import dataclasses
import multiprocessing
import time
from pathlib import Path

import pytest
from context_engine.facts.codec import render_fact
from context_engine.facts.memory import Memory
from support.store import make_paths, reader_worker

SPAWN = multiprocessing.get_context("spawn")
SIZE = 500_000
UPDATES = 10


def _run(tmp_path: Path, write: object) -> tuple[int, int]:
    memory = Memory(make_paths(tmp_path))
    fact = memory.save(name="big", description="d", body="a" * SIZE).fact
    assert fact is not None
    stop = tmp_path / "stop"
    with SPAWN.Pool(2) as pool:
        pending = pool.starmap_async(reader_worker, [(str(tmp_path), SIZE, str(stop))] * 2)
        # Spawned readers import the engine first (seconds on a loaded machine): a fixed
        # sleep let the control's writes finish before anyone read, and it saw nothing torn.
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("stop.ready-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        for i in range(UPDATES):
            write(memory, fact.id, "bcdefghijklmnopqrstuvwxyz"[i % 25])  # type: ignore[operator]
        stop.touch()
        results = pending.get(60)
    return sum(r for r, _ in results), sum(t for _, t in results)


def _atomic(memory: Memory, fact_id: str, letter: str) -> None:
    memory.save(id=fact_id, body=letter * SIZE)


def _in_place(memory: Memory, fact_id: str, letter: str) -> None:
    """The control: a naive writer that rewrites the file in place, in chunks."""
    fact = memory.resolve(fact_id)
    data = render_fact(dataclasses.replace(fact, body=letter * SIZE))
    assert fact.path is not None
    with open(fact.path, "wb") as handle:
        for start in range(0, len(data), 65536):
            handle.write(data[start : start + 65536])
            handle.flush()
            time.sleep(0.002)


@pytest.mark.slow
def test_atomic_replace_never_shows_a_torn_file(tmp_path: Path) -> None:
    reads, torn = _run(tmp_path, _atomic)
    assert reads > 0
    assert torn == 0


@pytest.mark.slow
def test_control_in_place_writer_is_seen_torn(tmp_path: Path) -> None:
    reads, torn = _run(tmp_path, _in_place)
    assert reads > 0
    assert torn > 0
