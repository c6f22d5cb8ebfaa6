"""Symlink-swap race (RELIABILITY §2 checklist S3; SPEC S6.5).

A thread keeps swapping an in-root directory for a symlink to an outside directory while the
resolver runs again and again for about a second: nothing outside may ever be read. A naive
"canonicalise, then open" control reader over the same swapping tree must leak at least once,
which proves the test can fail.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from context_engine.instructions import resolve_instructions
from support.instructions import RecordingFS, engine_paths

SECRET = "OUTSIDE-SECRET-race"


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (ws / "data/info.md").write_text("inside rule\n")
    (ws / "AGENTS.md").write_text("rules\n@data/info.md\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "info.md").write_text(f"{SECRET}\n")
    return ws, outside


@contextmanager
def _swapping(ws: Path, outside: Path) -> Iterator[None]:
    stop = threading.Event()

    def swap() -> None:
        data, parked = ws / "data", ws / "data.parked"
        while not stop.is_set():
            os.rename(data, parked)
            os.symlink(outside, data)
            time.sleep(0)  # let the reader see each state, not only the gaps
            os.unlink(data)
            os.rename(parked, data)
            time.sleep(0)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the two threads finely
    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old)


def _naive_read(ws: Path, rel: str) -> str | None:
    """The classic bug: check the canonical path, then open the path again by name."""
    try:
        real = os.path.realpath(ws / rel)
        if not real.startswith(os.path.realpath(ws) + os.sep):
            return None
        with open(ws / rel, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None


@pytest.mark.slow
def test_resolver_reads_nothing_outside_while_tree_is_swapped(tmp_path: Path) -> None:
    ws, outside = _tree(tmp_path)
    paths = engine_paths(tmp_path / "home", ws)
    fs = RecordingFS()
    outcomes: Counter[str] = Counter()
    with _swapping(ws, outside):
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            res = resolve_instructions(paths, ws, fs=fs)
            (doc,) = res.documents
            assert SECRET not in doc.body
            codes = [d.code for d in res.diagnostics]
            assert set(codes) <= {"import_symlink_escape", "import_unreadable"}
            outcomes[codes[0] if codes else "loaded"] += 1
    assert not [p for p in fs.read_paths if p.startswith(str(outside))]
    # The swap really happened under the resolver: both outcomes were seen.
    assert outcomes["loaded"] > 0
    assert outcomes["import_symlink_escape"] + outcomes["import_unreadable"] > 0


def test_naive_control_leaks(tmp_path: Path) -> None:
    ws, outside = _tree(tmp_path)
    leaks = 0
    with _swapping(ws, outside):
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and leaks == 0:
            text = _naive_read(ws, "data/info.md")
            if text is not None and SECRET in text:
                leaks += 1
    assert leaks > 0, "the naive control never leaked: the race test could not fail"
