"""A watched long-lived host (issue 14): told of store changes by the kernel, never wrong.

After every kind of edit another program makes — atomic replace, in-place same-size edit with
the mtime put back, create, delete, rename, garbage, a burst that overflows the kernel's queue,
the store directory itself replaced — the host's facts, diagnostics and recall answer equal a
from-scratch read and index of the files; a quiet turn touches no fact file at all.
"""

from __future__ import annotations

import gc
import hashlib
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from context_engine.engine import ContextEngine
from context_engine.facts import dir_watch
from context_engine.facts.codec import render_fact
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact, FactType, Scope
from context_engine.paths import EnginePaths
from context_engine.recall import Recaller
from context_engine.recall.live import LiveFacts, MaskTracker
from context_engine.session.core import run_turn
from context_engine.session.prefix import masked_global_ids
from support.index import edit_in_place_same_size, raw_fact, replace_raw
from support.recall import NOW

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or dir_watch.DirWatch.open() is None,
    reason="inotify is Linux only",
)

QUERIES = (
    "docker release build cache",
    "kernel socket retry",
    "zebra quokka",
    "vault rotation",
    "ocelot",
)
TESTS = Path(__file__).resolve().parents[2]


def _fact_bytes(
    name: str, body: str, scope: Scope = "project", type: FactType = "project", revision: int = 1
) -> bytes:
    fact_id = "mem-" + hashlib.sha256(f"{scope}/{name}".encode()).hexdigest()[:32]
    return render_fact(Fact(id=fact_id, revision=revision, name=name, title="",
                            description=f"About {name}", type=type, scope=scope, body=body))


@pytest.fixture()
def paths(tmp_path: Path) -> EnginePaths:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    bodies = [
        "The docker release build times out when the cache is cold.",
        "Kernel socket errors need a retry with backoff.",
        "Vault secret rotation runs every Monday.",
        "记忆召回只在真实用户回合触发，预算 2400 字符。",
        "The docker image for the release is pushed by CI.",
    ]
    paths.project_store.mkdir(parents=True)
    paths.global_store.mkdir(parents=True)
    for i, body in enumerate(bodies):
        (paths.project_store / f"fact-{i}.md").write_bytes(_fact_bytes(f"fact-{i}", body))
    (paths.global_store / "style.md").write_bytes(
        _fact_bytes("style", "Tabs, not spaces.", "global", "user")
    )
    # Masked by project/fact-1 (S7.2).
    (paths.global_store / "fact-1.md").write_bytes(
        _fact_bytes("fact-1", "Kernel socket retry, globally.", "global", "reference")
    )
    return paths


_HOSTS: list[ContextEngine] = []


@pytest.fixture(autouse=True)
def _close_hosts() -> Iterator[None]:
    # inotify instances are limited per user (fs.inotify.max_user_instances, often 128)
    yield
    while _HOSTS:
        _HOSTS.pop().close()


def _host(paths: EnginePaths) -> ContextEngine:
    engine = ContextEngine(paths, watch=True)
    _HOSTS.append(engine)
    run_turn(engine, None, "docker release")  # the first read: the stores watched from here
    return engine


def _same_as_fresh(engine: ContextEngine) -> None:
    """The host's facts, diagnostics and answers equal a fresh read and index of the files."""
    facts = engine.active_facts()
    fresh = Memory(engine.paths).snapshot()
    for got, want in zip(facts, fresh.facts, strict=True):
        assert got == want, (got.stamp, want.stamp, got.created_at, want.created_at)
    assert list(facts) == list(fresh.facts)
    assert service_diagnostics(engine) == fresh.diagnostics
    recaller = engine.catalog.index.recaller(facts)
    scratch = Recaller(fresh.facts, diagnostics=fresh.diagnostics)
    for query in QUERIES:
        got = recaller.recall(query, now=NOW)
        want = scratch.recall(query, now=NOW)
        assert got.block == want.block, query
        assert got.trace.to_dict() == want.trace.to_dict(), query
    if isinstance(facts, LiveFacts):
        assert facts.masked() == masked_global_ids(fresh.facts)


def service_diagnostics(engine: ContextEngine) -> tuple[object, ...]:
    service = engine.catalog.index
    return service._current_diagnostics if service._current_read is None else service._diagnostics


# Another program's edits, each made by a separate process (the kernel reports it as it would
# report Reasonix or an editor).
EDIT = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from support.index import edit_in_place_same_size, raw_fact, replace_raw
kind, store = sys.argv[2], Path(sys.argv[3])
target = store / "fact-2.md"
if kind == "replace":
    replace_raw(target, target.read_bytes().replace(b"every Monday", b"zebra quokka Friday"))
elif kind == "in-place":
    assert edit_in_place_same_size(target, b"every Monday", b"zebra Monday")
elif kind == "create":
    (store / "fresh-one.md").write_bytes(raw_fact("fresh-one", "A zebra quokka note."))
elif kind == "delete":
    os.unlink(target)
elif kind == "rename":
    os.rename(target, store / "renamed-two.md")
elif kind == "garbage":
    target.write_bytes(b"---\nnot: [valid\n")
elif kind == "touch":
    os.utime(target)
elif kind == "dup":
    (store / "copy-two.md").write_bytes(target.read_bytes())
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind", ["replace", "in-place", "create", "delete", "rename", "garbage", "touch"]
)
def test_an_edit_by_another_process_reaches_the_next_turn(paths: EnginePaths, kind: str) -> None:
    engine = _host(paths)
    _same_as_fresh(engine)
    subprocess.run(
        [sys.executable, "-c", EDIT, str(TESTS), kind, str(paths.project_store)], check=True
    )
    _same_as_fresh(engine)
    service = engine.catalog.index
    assert service.watch_stats["applied"] >= 1 and service.watch_stats["rescans"] == 0


class _FileCalls:
    """``os.lstat`` / ``os.stat`` / ``os.scandir`` calls on paths inside the stores."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, paths: EnginePaths) -> None:
        self.roots = (str(paths.project_store), str(paths.global_store))
        self.calls: list[tuple[str, str]] = []
        for name in ("lstat", "stat", "scandir"):
            monkeypatch.setattr(os, name, self._counting(name, getattr(os, name)))

    def _counting(self, name: str, real):  # type: ignore[no-untyped-def]
        def call(path=".", *args, **kwargs):  # type: ignore[no-untyped-def]
            text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
            if text.startswith(self.roots):
                self.calls.append((name, text))
            return real(path, *args, **kwargs)

        return call

    def on_files(self) -> list[tuple[str, str]]:
        """Calls on fact files or listings (a store directory's own ``stat`` excluded)."""
        return [(n, p) for n, p in self.calls if not (n == "stat" and p in self.roots)]


def test_a_quiet_turn_touches_no_fact_file(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _host(paths)
    base = None
    _, base = run_turn(engine, base, "docker release")
    calls = _FileCalls(monkeypatch, paths)
    for _ in range(3):
        _, base = run_turn(engine, base, "kernel socket retry")
    assert calls.on_files() == []
    assert {n for n, _ in calls.calls} <= {"stat"}  # one stat per store directory, at most


def test_a_change_reads_only_the_changed_file(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _host(paths)
    target = paths.project_store / "fact-2.md"
    recaller = engine.catalog.index.recaller(engine.catalog.index._current)
    before = recaller.stats.tokenized
    calls = _FileCalls(monkeypatch, paths)
    replace_raw(target, target.read_bytes().replace(b"every Monday", b"zebra quokka Friday"))
    result, _ = run_turn(engine, None, "zebra quokka")
    assert "fact-2" in result.recall_block
    assert calls.on_files() == [("lstat", str(target))]
    # The old text out, the new text in: two tokenizations, not the store's.
    assert engine.catalog.index.recaller() is recaller
    assert recaller.stats.tokenized - before == 2


def test_the_notes_tell_a_change_once_as_an_unwatched_host_does(paths: EnginePaths) -> None:
    watched = _host(paths)
    plain = ContextEngine(paths)
    seen, reference = None, None
    _, seen = run_turn(watched, None, "docker")
    _, reference = run_turn(plain, None, "docker")
    rng = random.Random(7)
    store = paths.project_store
    for step in range(12):
        name = f"fact-{rng.randrange(5)}"
        target = store / f"{name}.md"
        if target.exists() and rng.random() < 0.3:
            os.unlink(target)
        elif rng.random() < 0.2:
            # A global twin appears or goes: project/<name> masks it (S7.2).
            twin = paths.global_store / "fact-0.md"
            if twin.exists():
                os.unlink(twin)
            else:
                twin.write_bytes(
                    _fact_bytes("fact-0", f"twin {step}", "global", "reference", step + 2)
                )
        else:
            replace_raw(target, _fact_bytes(name, f"Revised body {step} zebra.", revision=step + 2))
        got, seen = run_turn(watched, seen, "zebra")
        want, reference = run_turn(plain, reference, "zebra")
        assert got.notes == want.notes, step
        assert got.recall_block == want.recall_block, step
    _same_as_fresh(watched)


@pytest.mark.slow
def test_a_random_run_of_edits_always_equals_a_fresh_read(paths: EnginePaths) -> None:
    engine = _host(paths)
    rng = random.Random(3)
    store = paths.project_store
    for step in range(40):
        names = sorted(p.name for p in store.glob("*.md") if p.name != "MEMORY.md")
        op = rng.choice(["replace", "in-place", "create", "delete", "rename", "garbage", "dup"])
        victim = store / rng.choice(names) if names else None
        if op == "create" or victim is None:
            (store / f"new-{step}.md").write_bytes(raw_fact(f"new-{step}", f"zebra {step}"))
        elif op == "replace":
            replace_raw(victim, raw_fact(victim.stem, f"quokka replaced {step}"))
        elif op == "in-place":
            edit_in_place_same_size(victim, b"e", b"o")
        elif op == "delete":
            os.unlink(victim)
        elif op == "rename":
            os.rename(victim, store / f"moved-{step}.md")
        elif op == "garbage":
            victim.write_bytes(b"---\nbroken: [\n")
        else:  # the same id in two files: the host falls back to the full diff
            (store / f"copy-{step}.md").write_bytes(victim.read_bytes())
        _same_as_fresh(engine)


@pytest.mark.slow
def test_a_burst_larger_than_the_kernel_queue_rescans(paths: EnginePaths) -> None:
    engine = _host(paths)
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    burst = r"""
import os, sys
a, b, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    os.utime(a if i % 2 else b, ns=(i, i))  # alternating: the kernel cannot merge them
"""
    store = paths.project_store
    subprocess.run(
        [sys.executable, "-c", burst, str(store / "fact-0.md"), str(store / "fact-1.md"),
         str(limit + 100)],
        check=True,
    )
    replace_raw(store / "fact-2.md", raw_fact("fact-2", "zebra quokka after the burst"))
    _same_as_fresh(engine)
    service = engine.catalog.index
    assert service.watch_stats["rescans"] == 1
    assert service.last_rescan == "queue overflow"
    replace_raw(store / "fact-3.md", raw_fact("fact-3", "ocelot after the rescan"))
    _same_as_fresh(engine)
    assert service.watch_stats["applied"] >= 1  # watched again, per file


def test_a_store_directory_replaced_or_created_later_is_read_again(
    paths: EnginePaths, tmp_path: Path
) -> None:
    engine = _host(paths)
    store = paths.project_store
    moved = tmp_path / "elsewhere"
    os.rename(store, moved)
    _same_as_fresh(engine)  # the store is gone: no project facts
    assert not any(f.scope == "project" for f in engine.active_facts())
    store.mkdir()
    (store / "back.md").write_bytes(raw_fact("back", "zebra quokka is back"))
    _same_as_fresh(engine)
    assert any(f.name == "back" for f in engine.active_facts())
    (store / "more.md").write_bytes(raw_fact("more", "ocelot more"))
    _same_as_fresh(engine)
    (moved / "fact-0.md").write_bytes(raw_fact("fact-0", "ocelot in the old directory"))
    _same_as_fresh(engine)  # the old directory's events no longer count
    assert engine.catalog.index.watch_stats["rescans"] >= 2


def test_without_inotify_the_host_checks_the_listings(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dir_watch.DirWatch, "open", classmethod(lambda cls: None))
    engine = _host(paths)
    calls = _FileCalls(monkeypatch, paths)
    run_turn(engine, None, "docker")
    assert any(n == "scandir" for n, _ in calls.calls)  # today's scan per turn
    replace_raw(paths.project_store / "fact-2.md", raw_fact("fact-2", "zebra quokka"))
    _same_as_fresh(engine)


def test_the_watch_parses_an_overflow_and_directory_events() -> None:
    header = dir_watch._HEADER
    drained = dir_watch.Drained()
    name = b"a.md\0\0\0\0"
    data = (
        header.pack(1, dir_watch.IN_MODIFY, 0, len(name)) + name
        + header.pack(1, dir_watch.IN_DELETE_SELF, 0, 0)
        + header.pack(-1, dir_watch.IN_Q_OVERFLOW, 0, 0)
    )
    dir_watch.DirWatch._parse(data, drained)
    assert drained.names == {1: {"a.md"}}
    assert drained.selves == {1}
    assert drained.rescan == "queue overflow"


def _twins(rng: random.Random, count: int) -> Iterator[object]:
    from support.recall import fact

    for i in range(count):
        scope = rng.choice(["project", "global"])
        name = rng.choice(["alpha", "beta", "gamma", f"solo-{i}"])
        title = rng.choice(["", "Alpha", "Gamma"])
        yield fact(name, f"body {i}", scope=scope, id=f"mem_{i}", title=title)


def test_masks_kept_one_fact_at_a_time_equal_a_full_computation() -> None:
    rng = random.Random(11)
    pool = list(_twins(rng, 40))
    tracker, live = MaskTracker(), []
    for _ in range(300):
        if live and rng.random() < 0.4:
            gone = live.pop(rng.randrange(len(live)))
            tracker.remove(gone)  # type: ignore[arg-type]
        else:
            candidates = [f for f in pool if f not in live]
            if candidates:
                added = rng.choice(candidates)
                live.append(added)
                tracker.add(added)  # type: ignore[arg-type]
        assert tracker.masked == set(masked_global_ids(live))  # type: ignore[arg-type]


def test_temp_files_and_memory_md_leave_a_turn_quiet(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _host(paths)
    service = engine.catalog.index
    quiet = service.watch_stats["quiet"]
    store = paths.project_store
    (store / ".tmp-writer").write_bytes(b"half")
    os.replace(store / ".tmp-writer", store / "MEMORY.md")
    (store / ".archive").mkdir()
    calls = _FileCalls(monkeypatch, paths)
    run_turn(engine, None, "docker")
    assert calls.on_files() == []
    assert service.watch_stats["quiet"] == quiet + 1


def test_a_store_on_a_network_filesystem_is_scanned_per_turn(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.recall import live

    monkeypatch.setattr(live, "sees_every_change", lambda path: False)  # e.g. NFS, FUSE
    engine = _host(paths)
    assert engine.catalog.index._live is None
    calls = _FileCalls(monkeypatch, paths)
    replace_raw(paths.project_store / "fact-2.md", raw_fact("fact-2", "zebra quokka"))
    _same_as_fresh(engine)
    assert any(n == "scandir" for n, _ in calls.calls)


def test_the_filesystem_of_a_path_comes_from_mountinfo(tmp_path: Path) -> None:
    assert dir_watch.filesystem_of(tmp_path) is not None
    assert dir_watch._unescape(r"/mnt/a\040b\134c") == "/mnt/a b\\c"


def test_an_unwatched_host_reindexes_an_in_place_edit_that_keeps_the_stamp(
    paths: EnginePaths,
) -> None:
    engine = ContextEngine(paths)  # the listing check per turn (and a watched host's rescan)
    run_turn(engine, None, "docker release")
    target = paths.project_store / "fact-2.md"
    # Same inode, same size, the mtime put back: only the ctime tells; Recaller.sync used to
    # take the re-read fact for the indexed one by its stamp (dev, inode, size, mtime).
    assert edit_in_place_same_size(target, b"every Monday", b"zebra quokka")
    _same_as_fresh(engine)


def test_a_forked_child_leaves_the_parents_queue_alone(paths: EnginePaths) -> None:
    engine = _host(paths)
    target = paths.project_store / "fact-2.md"
    replace_raw(target, raw_fact("fact-2", "zebra quokka before the fork"))
    pid = os.fork()
    if pid == 0:  # the child: its read must not drain the parent's events
        try:
            engine.active_facts()
        finally:
            os._exit(0 if engine.catalog.index._live is None else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    _same_as_fresh(engine)
    assert engine.catalog.index.watch_stats["applied"] == 1


def _open_fds() -> set[tuple[str, str]]:
    """(descriptor, what it is) of every open descriptor (other tests' engines may hold some)."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.add((fd, os.readlink(f"/proc/self/fd/{fd}")))
        except OSError:
            continue  # the listing's own descriptor, closed already
    return found


@pytest.mark.slow
def test_closing_a_host_releases_its_watch_and_index_files(paths: EnginePaths) -> None:
    # Engines of earlier tests release their handles only when collected: collect them now,
    # or one still open hides this engine's inotify fd (same link name) from the difference.
    gc.collect()
    before = _open_fds()
    with ContextEngine(paths, watch=True) as engine:
        run_turn(engine, None, "docker release")
        engine.run_tool("remember", {"name": "closing", "description": "d", "body": "zebra"},
                        controller="headless", mode="yolo")
        replace_raw(paths.project_store / "fact-2.md", raw_fact("fact-2", "zebra quokka"))
        run_turn(engine, None, "zebra quokka")
        held = _open_fds() - before
        assert any("inotify" in what for _, what in held)
        assert any(what.endswith(".sqlite") for _, what in held)
    assert _open_fds() - before == set()
    _same_as_fresh(engine)  # still usable: reads check the listings and reopen what they need


# A host opened on a settled saved recall state (recall/quiet.py) answers quiet turns from it;
# its changes are applied to that state (recall/saved_live.py), never by reading every fact.


def _saved_host(paths: EnginePaths, *, changed_before: bool = False) -> ContextEngine:
    """A watched host whose first read came from the state an earlier cold turn saved
    (``changed_before``: brought up at open to files changed since, recall/delta.py)."""
    from context_engine.recall.quiet import QuietFacts

    plain = ContextEngine(paths)  # a cold turn: it saves the recall state
    run_turn(plain, None, "docker release")
    plain.close()
    if changed_before:
        # A project twin of global/style (S7.2) and a changed body, before the host opens.
        (paths.project_store / "style.md").write_bytes(_fact_bytes("style", "Spaces here."))
        replace_raw(paths.project_store / "fact-3.md", _fact_bytes("fact-3", "ocelot", revision=2))
    engine = _host(paths)
    current = engine.catalog.index._current
    assert isinstance(current, QuietFacts)
    assert (current._moved is not None) == changed_before
    return engine


def _state_same_as_fresh(engine: ContextEngine) -> None:
    """As ``_same_as_fresh``, before any read in full: traces, masks, marks, diagnostics."""
    from context_engine.session.notes import FactMark

    service = engine.catalog.index
    facts = engine.active_facts()
    fresh = Memory(engine.paths).snapshot()
    recaller = service.recaller(facts)
    scratch = Recaller(fresh.facts, diagnostics=fresh.diagnostics)
    for query in QUERIES:
        got = recaller.recall(query, now=NOW)
        want = scratch.recall(query, now=NOW)
        assert got.block == want.block, query
        assert got.trace.to_dict() == want.trace.to_dict(), query
    view = cast(Any, facts)
    if len({f.id for f in fresh.facts}) == len(fresh.facts):
        assert view.masked() == masked_global_ids(fresh.facts)
        for fact in fresh.facts:
            assert view.mark(fact.id) == FactMark(fact.id, fact.revision, fact.reference)
            assert view.fact(fact.id) == fact or view.fact(fact.id).body == fact.body
        assert len(view) == len(fresh.facts)
    got_diagnostics = [(d.code, d.path, d.message) for d in service_diagnostics(engine)]
    assert got_diagnostics == [(d.code, d.path, d.message) for d in fresh.diagnostics]
    _same_as_fresh(engine)  # and in full (this reads the stores)


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind", ["replace", "in-place", "create", "delete", "rename", "garbage", "touch", "dup"]
)
def test_a_host_on_a_saved_state_applies_an_edit_to_it(paths: EnginePaths, kind: str) -> None:
    from context_engine.recall.saved_live import SavedHostFacts

    engine = _saved_host(paths)
    subprocess.run(
        [sys.executable, "-c", EDIT, str(TESTS), kind, str(paths.project_store)], check=True
    )
    engine.active_facts()
    service = engine.catalog.index
    if kind == "dup":  # the same id in two files: the full read reports it, as before
        assert not isinstance(service._current, SavedHostFacts)
    else:
        assert isinstance(service._current, SavedHostFacts)
        assert service.watch_stats["applied"] == 1
    _state_same_as_fresh(engine)
    assert service.watch_stats["rescans"] == 0


def test_a_host_on_a_saved_state_reads_only_the_changed_file(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _saved_host(paths)
    target = paths.project_store / "fact-2.md"
    recaller = engine.catalog.index.recaller()
    before = recaller.stats.tokenized
    calls = _FileCalls(monkeypatch, paths)
    replace_raw(target, target.read_bytes().replace(b"every Monday", b"zebra quokka Friday"))
    result, _ = run_turn(engine, None, "zebra quokka")
    assert "fact-2" in result.recall_block
    # Not a scan of both stores and a read of every file: the one file named by the kernel.
    assert calls.on_files() == [("lstat", str(target))]
    assert engine.catalog.index.recaller() is recaller
    assert recaller.stats.tokenized - before == 2  # the old text out, the new in


@pytest.mark.slow
@pytest.mark.parametrize("changed_before", [False, True])
def test_a_host_on_a_saved_state_follows_a_random_run_as_a_plain_host_does(
    paths: EnginePaths, changed_before: bool
) -> None:
    watched = _saved_host(paths, changed_before=changed_before)
    plain = ContextEngine(paths)
    _, seen = run_turn(watched, None, "docker")
    _, reference = run_turn(plain, None, "docker")
    rng = random.Random(5)
    store = paths.project_store
    for step in range(30):
        names = sorted(p.name for p in store.glob("*.md") if p.name != "MEMORY.md")
        op = rng.choice(["replace", "in-place", "create", "delete", "rename", "garbage", "twin"])
        victim = store / rng.choice(names) if names else None
        if op == "create" or victim is None:
            (store / f"new-{step}.md").write_bytes(raw_fact(f"new-{step}", f"zebra {step}"))
        elif op == "replace":
            replace_raw(victim, _fact_bytes(victim.stem, f"quokka {step}", revision=step + 2))
        elif op == "in-place":
            edit_in_place_same_size(victim, b"e", b"o")
        elif op == "delete":
            os.unlink(victim)
        elif op == "rename":
            os.rename(victim, store / f"moved-{step}.md")
        elif op == "garbage":
            victim.write_bytes(b"---\nbroken: [\n")
        else:  # a global twin of a project fact appears or goes (S7.2 masks)
            twin = paths.global_store / victim.name
            if twin.exists():
                os.unlink(twin)
            else:
                twin.write_bytes(
                    _fact_bytes(victim.stem, f"twin {step}", "global", "reference", step + 2)
                )
        got, seen = run_turn(watched, seen, "zebra quokka")
        want, reference = run_turn(plain, reference, "zebra quokka")
        assert got.notes == want.notes, step
        assert got.recall_block == want.recall_block, step
    from context_engine.recall.saved_live import SavedHostFacts

    assert isinstance(watched.catalog.index._current, SavedHostFacts)
    _state_same_as_fresh(watched)


@pytest.mark.slow
def test_a_host_on_a_saved_state_sees_its_own_writes(paths: EnginePaths) -> None:
    from context_engine.recall.saved_live import SavedHostFacts

    engine = _saved_host(paths)
    args = {"name": "own-write", "description": "d", "body": "zebra ocelot", "type": "reference"}
    outcome = engine.run_tool("remember", args, controller="headless", mode="yolo")
    assert outcome.written, outcome
    result, _ = run_turn(engine, None, "zebra ocelot")
    assert "own write" in result.recall_block
    assert isinstance(engine.catalog.index._current, SavedHostFacts)
    args = {"name": "second-write", "description": "e", "body": "quokka", "type": "reference"}
    assert engine.run_tool("remember", args, controller="headless", mode="yolo").written
    _state_same_as_fresh(engine)
