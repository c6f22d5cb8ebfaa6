"""Random edits from several processes while the store monitor runs: every read is a full parse.

Edits: our writes from worker processes and by the ``remember`` command (after each of which
MEMORY.md must equal a full regeneration), other programs' raw
atomic replacements, in-place same-size edits with the mtime put back, deletes, creates, and
the project store directory replaced by a copy. Reads: fresh processes going through the
cold path (the saved recall state, validated by the monitor's answer), printing their facts,
session marks, masked globals and recall blocks, and before that ``list --json``, ``list`` and
``read`` by id (the derived index as the monitor vouches for it); each must equal what a parse
of every file gives. The readers' racy window is short (30 ms) and some steps pause past it, so the
monitor's word is what keeps a reader from trusting a stale row — a monitor that missed a
change would fail here. Each example ends with a read the monitor vouches for whole and one
after a change it names.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from multiprocessing.pool import Pool
from pathlib import Path

import pytest
from context_engine.facts.index_file import render_index
from context_engine.facts.listing import list_memory
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.recall import Recaller
from context_engine.session.prefix import masked_global_ids
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.index import (
    cli_in_fresh_process,
    edit_in_place_same_size,
    raw_fact,
    replace_raw,
    save_worker,
)
from support.monitor import Monitors
from support.recall import NOW

NAMES = ("alpha", "beta", "gamma", "delta")
QUERIES = ("body of alpha", "docker release", "remembered text", "made by another program")
step = st.one_of(
    st.tuples(st.just("ours"), st.sampled_from(NAMES)),
    st.tuples(st.just("remember"), st.sampled_from(NAMES)),
    st.tuples(st.just("replace"), st.sampled_from(NAMES)),
    st.tuples(st.just("in-place"), st.sampled_from(NAMES)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES)),
    st.tuples(st.just("create"), st.sampled_from(NAMES)),
    st.tuples(st.just("replace-dir"), st.just("")),
    st.tuples(st.just("read"), st.just("")),
    st.tuples(st.just("settle"), st.just("")),
)

# A fresh cold process: the saved state as the monitor's answer validates it, then printed.
READER = r"""
import json, sys
from context_engine.facts import derived_index, stat_listing, store
derived_index.RACY_NS = store.RACY_NS = stat_listing.RACY_NS = 30_000_000
from context_engine.engine import ContextEngine
from context_engine.paths import EnginePaths
from context_engine.recall import quiet
from context_engine.session.prefix import masked_global_ids
from support.recall import NOW
paths = EnginePaths.resolve(home=sys.argv[1], workspace=sys.argv[2])
# The read commands first (list --json, list, read by id): the derived index as the monitor
# vouches for it, or walked.
from context_engine.catalog.local import LocalCatalog
from context_engine.cli.listed import Clock
from context_engine.cli.reads import printed_facts
from context_engine.facts.listing import list_memory
catalog = LocalCatalog(paths)
printed = printed_facts(catalog, "json", Clock(NOW))
shown = None if printed is None else [
    [o["id"], o["revision"], o["description"]] for o in json.loads(b"[" + printed.text + b"]")
]
listing = [[f.file, f.id, f.revision, f.description] for f in list_memory(catalog.memory).facts]
by_id = {f[1]: catalog.read(f[1]).fact.body for f in listing}
catalog.close()
engine = ContextEngine(paths)
seen = engine.active_facts()
probe = engine.catalog.index._probe
if probe is None or probe.answer is None:
    mode = "none"
else:
    mode = "vouched" if probe.vouched() else ("walked" if probe.walked else "named")
if isinstance(seen, quiet.QuietFacts):
    marks = {i: [m.revision, m.reference] for i, m in seen.marks().items()}
    facts = {i: [seen.fact(i).body, seen.fact(i).description] for i in marks}
    masked = sorted(seen.masked())
else:
    marks = {f.id: [f.revision, f.reference] for f in seen}
    facts = {f.id: [f.body, f.description] for f in seen}
    masked = sorted(masked_global_ids(seen))
recaller = engine.recaller(seen)
blocks = [recaller.recall(q, now=NOW).block for q in json.loads(sys.argv[3])]
print(json.dumps({"mode": mode, "quiet": isinstance(seen, quiet.QuietFacts), "marks": marks,
                  "facts": facts, "masked": masked, "blocks": blocks, "printed": shown,
                  "listing": listing, "by_id": by_id}))
"""


def full_parse(paths: EnginePaths) -> dict[str, object]:
    """What the reader must print: every file parsed, indexed from scratch."""
    memory = Memory(paths)
    for store in memory.stores.all():
        store.index = None
    snapshot = memory.snapshot()
    facts = snapshot.facts
    recaller = Recaller(facts, diagnostics=snapshot.diagnostics)
    listing = [[f.file, f.id, f.revision, f.description] for f in list_memory(memory).facts]
    return {
        "printed": [[f[1], f[2], f[3]] for f in listing],
        "listing": listing,
        "by_id": {f[1]: memory.load(f[1]).fact.body for f in listing},
        "marks": {f.id: [f.revision, f.reference] for f in facts},
        "facts": {f.id: [f.body, f.description] for f in facts},
        "masked": sorted(masked_global_ids(facts)),
        "blocks": [recaller.recall(q, now=NOW).block for q in QUERIES],
    }


def memory_md(paths: EnginePaths) -> bytes:
    index = paths.project_store / "MEMORY.md"
    return index.read_bytes() if index.exists() else b""


def regenerated(paths: EnginePaths) -> bytes:
    """The project MEMORY.md a full regeneration from every parsed file gives (the writer
    asks the monitor what changed since its checkpoint: in-place edits included)."""
    memory = Memory(paths)
    store = memory.stores.get("project")
    store.index = None
    text = render_index(memory_md(paths).decode("utf-8", "surrogateescape"),
                        store.snapshot().facts)
    return text.encode("utf-8", "surrogateescape")


def read(paths: EnginePaths, monitors: Monitors) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", READER, str(paths.home), str(paths.workspace),
         json.dumps(QUERIES)],
        capture_output=True, env=monitors.env(), timeout=120, check=True,
    )
    return dict(json.loads(out.stdout))


def _apply(paths: EnginePaths, pool: Pool, kind: str, name: str, counter: int) -> None:
    store = paths.project_store
    target = store / f"{name}.md"
    if kind == "ours":
        pool.apply(save_worker, (str(paths.home), str(paths.workspace), [name]))
    elif kind == "remember":
        code, out = cli_in_fresh_process(
            paths, "remember", "--name", name, "--body", f"Remembered text {counter}."
        )
        assert code == 0, out
    elif kind == "replace" and target.exists():
        replace_raw(target, target.read_bytes() + f"\nReplaced {counter}.\n".encode())
    elif kind == "in-place" and target.exists():
        body = ((b"Body", b"BODY"), (b"BODY", b"Body"), (b"Text", b"TEXT"),
                (b"TEXT", b"Text"), (b"about", b"ABOUT"), (b"ABOUT", b"about"))
        described = ((b"About", b"ABOUT"), (b"ABOUT", b"About"))  # its MEMORY.md line too
        for old, new in (described + body) if counter % 2 else (body + described):
            if edit_in_place_same_size(target, old, new):
                break
    elif kind == "delete":
        target.unlink(missing_ok=True)
    elif kind == "create" and not target.exists():
        store.mkdir(parents=True, exist_ok=True)
        target.write_bytes(raw_fact(name, f"Body made by another program {counter}."))
    elif kind == "replace-dir" and store.exists():
        copy = store.with_name(f"{store.name}.copy")
        shutil.copytree(store, copy)
        os.rename(store, store.with_name(f"{store.name}.old"))
        os.rename(copy, store)
        shutil.rmtree(store.with_name(f"{store.name}.old"))
    elif kind == "settle":
        time.sleep(0.05)  # past the readers' racy window: only the monitor's word is left


@pytest.fixture(scope="module")
def writers() -> Iterator[Pool]:
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        yield pool


@pytest.fixture()
def monitors(monkeypatch: pytest.MonkeyPatch) -> Iterator[Monitors]:
    found = Monitors(monkeypatch)
    try:
        yield found
    finally:
        found.close()


@pytest.fixture()
def base() -> Iterator[Path]:
    made = Path(tempfile.mkdtemp(prefix="ce-mon-"))
    (made / "ws" / ".git").mkdir(parents=True)
    yield made
    shutil.rmtree(made, ignore_errors=True)


@pytest.mark.slow
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, min_size=1, max_size=8))
@example(steps=[("in-place", "beta"), ("remember", "alpha")])  # another file's line must change
def test_every_fresh_read_with_the_monitor_equals_a_full_parse(
    writers: Pool, monitors: Monitors, base: Path, steps: list[tuple[str, str]]
) -> None:
    home = base / "home"
    shutil.rmtree(home, ignore_errors=True)  # one state root (and monitor) for every example
    paths = EnginePaths.resolve(home=home, workspace=base / "ws")
    if not monitors.states:
        monitors.spawn(paths.state)
    memory = Memory(paths)
    for name in NAMES[:3]:
        memory.save(name=name, description=f"About {name}", body=f"Body of {name}.")
    memory.save(name="docker", description="Docker release", body="Docker release notes.",
                scope="global")
    modes: list[str] = []
    tail = [("read", ""), ("settle", ""), ("read", ""), ("read", ""), ("create", "omega"),
            ("read", "")]
    # The first read walks (nothing saved yet) and saves the state with the monitor's token:
    # every step after it is a change the monitor must tell.
    for counter, (kind, name) in enumerate([("read", ""), *steps, *tail]):
        if kind == "read":
            got = read(paths, monitors)
            modes.append(str(got.pop("mode")))
            quiet_view = got.pop("quiet")
            assert got == full_parse(paths), (steps, counter, modes, quiet_view)
        else:
            _apply(paths, writers, kind, name, counter)
            if kind == "remember":  # a write with the monitor: MEMORY.md as a full render
                assert memory_md(paths) == regenerated(paths), (steps, counter)
    assert modes[-2] == "vouched", (steps, modes)  # nothing changed between the two reads
    assert modes[-1] == "named", (steps, modes)  # one file created: named, the rest trusted
