"""Bare ``memory`` lists every fact: through a pager on a terminal, plain when piped."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

import pytest
from context_engine.facts.memory import Memory
from support import cli_argv
from support.store import make_paths

APP = Path(__file__).resolve().parents[3] / "app"


def _setup(tmp_path: Path) -> list[str]:
    paths = make_paths(tmp_path)
    memory = Memory(paths)
    for i in range(40):
        memory.save(name=f"fact-{i:03d}", description=f"Fact {i}", body="b", type="project")
    return cli_argv(paths, "memory")


@pytest.mark.slow
def test_piped_memory_lists_every_fact_plainly(tmp_path: Path) -> None:
    argv = _setup(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(APP), PAGER="false")
    out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True).stdout
    assert "Facts (40):" in out
    assert all(f"fact-{i:03d}" in out for i in range(40))


@pytest.mark.slow
def test_terminal_memory_goes_through_the_pager(tmp_path: Path) -> None:
    argv = _setup(tmp_path)
    paged = tmp_path / "paged.txt"
    env = dict(os.environ, PYTHONPATH=str(APP), PAGER=f"tee {paged}")
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(argv, stdin=secondary, stdout=secondary, stderr=secondary, env=env)
    os.close(secondary)
    while True:  # drain the terminal so the child never blocks on it
        try:
            if not os.read(primary, 65536):
                break
        except OSError:
            break
    assert proc.wait(timeout=60) == 0
    os.close(primary)
    text = paged.read_text()
    assert "Facts (40):" in text and "fact-039" in text
