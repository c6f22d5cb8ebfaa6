"""Random edits from several processes, read by fresh processes: always a full parse (issue 14).

Reads: a fresh process reading both stores, and the ``list --json`` and ``read`` commands in
fresh processes, printing exactly what they print after a full parse.

Edits: our writes from worker processes and by the ``remember`` command (through the store,
which keeps the index), and other programs' raw atomic replacements, in-place same-size edits
(of the body or a listed field) with the mtime put back, deletes and creates. Every read is a
new process going through the derived index and must equal a full parse of the files; short
pauses let rows settle so the trusted path is exercised too.
"""

from __future__ import annotations

import multiprocessing
import shutil
import tempfile
import time
from collections.abc import Iterator
from multiprocessing.pool import Pool
from pathlib import Path

import pytest
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.index import (
    cli_from_full_parse,
    cli_in_fresh_process,
    edit_in_place_same_size,
    full_parse,
    raw_fact,
    read_in_fresh_process,
    replace_raw,
    save_worker,
)

NAMES = ("alpha", "beta", "gamma", "delta", "epsilon")
step = st.one_of(
    st.tuples(st.just("ours"), st.sampled_from(NAMES)),
    st.tuples(st.just("remember"), st.sampled_from(NAMES)),  # our write, by the command
    st.tuples(st.just("replace"), st.sampled_from(NAMES)),
    st.tuples(st.just("in-place"), st.sampled_from(NAMES)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES)),
    st.tuples(st.just("create"), st.sampled_from(NAMES)),
    st.tuples(st.just("read"), st.just("")),
    # The commands themselves, in fresh processes: ``list --json``, and ``read`` of a name, a
    # reference, an id (``#name``: the id a full parse gives that name now) or a missing one.
    st.tuples(st.just("cli"), st.sampled_from(["list", *NAMES, "project/beta.md", "#alpha",
                                               "#gamma", "missing"])),
    st.tuples(st.just("settle"), st.just("")),
)


@pytest.fixture(scope="module")
def writers() -> Iterator[Pool]:
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        yield pool


def _apply(paths: EnginePaths, pool: Pool, kind: str, name: str, counter: int) -> None:
    store = paths.project_store
    target = store / f"{name}.md"
    if kind == "ours":
        pool.apply(save_worker, (str(paths.home), str(paths.root), [name]))
    elif kind == "remember":
        code, out = cli_in_fresh_process(
            paths, "remember", "--name", name, "--body", f"Remembered {counter}."
        )
        assert code == 0, out
    elif kind == "replace" and target.exists():
        data = target.read_bytes().replace(b"Body", b"Text", 1)
        replace_raw(target, data + f"\nReplaced {counter}.\n".encode())
    elif kind == "in-place" and target.exists():
        data = target.read_bytes()
        edits = ((b"Body", b"BODY"), (b"BODY", b"Body"), (b"Text", b"TEXT"))
        if counter % 2:  # a listed field (the description) rather than the body
            edits = ((b"about", b"ABOUT"), (b"ABOUT", b"about"), (b"About", b"ABOUT"))
        for old, new in edits:
            if old in data and edit_in_place_same_size(target, old, new):
                break
    elif kind == "delete":
        target.unlink(missing_ok=True)
    elif kind == "create" and not target.exists():
        target.write_bytes(raw_fact(name, f"Body made by another program {counter}."))
    elif kind == "settle":
        time.sleep(0.05)  # longer than the readers' racy window: their rows become trusted


def _ref(paths: EnginePaths, name: str) -> str:
    """``name`` as typed; ``#name``: the id of the fact a full parse reads under that name."""
    if not name.startswith("#"):
        return name
    memory = Memory(paths)
    for store in memory.stores.all():
        store.index = None
    ids = [f.id for f in memory.snapshot().facts if f.name == name[1:]]
    return ids[0] if ids else "mem-" + "0" * 32


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=10))
def test_every_fresh_read_equals_a_full_parse(writers: Pool, steps: list[tuple[str, str]]) -> None:
    base = Path(tempfile.mkdtemp(prefix="ce-index-"))
    try:
        ws = base / "ws"
        ws.mkdir()
        paths = EnginePaths.resolve(home=base / "home", workspace=ws, root=ws)
        memory = Memory(paths)
        for name in NAMES[:3]:
            memory.save(name=name, description=f"About {name}", body=f"Body of {name}.")
        for counter, (kind, name) in enumerate([*steps, ("read", ""), ("cli", "list")]):
            if kind == "read":
                assert read_in_fresh_process(paths) == full_parse(paths), steps
            elif kind == "cli":
                args = ("list",) if name == "list" else ("read", _ref(paths, name))
                assert cli_in_fresh_process(paths, *args) == cli_from_full_parse(paths, *args), (
                    steps, args
                )
            else:
                _apply(paths, writers, kind, name, counter)
    finally:
        shutil.rmtree(base, ignore_errors=True)
