"""The derived index vouched for by the store monitor: no walk while nothing changed, never stale.

A listing (``list``, ``list --json``, ``memory``) or a read by id records the monitor's token
after validating every row, with the index's write generation; the next one asks the monitor
what changed since and looks at those files only. The race a token alone would lose — a reader
that looked at a file before another program changed it writes its stale row after the vouch
was recorded — is played out step by step: the generation bumped by that row write makes the
next reader walk. Unknown answers, no answer, another monitor instance and rows moved on since
the monitor was asked all fall back to the walk; our own writes keep the vouch.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from context_engine.catalog.local import LocalCatalog
from context_engine.cli.listed import Clock
from context_engine.cli.reads import printed_facts
from context_engine.facts import derived_index, watched
from context_engine.facts.listing import Listing, list_memory
from context_engine.facts.memory import Memory
from context_engine.facts.stat_listing import identity_of
from context_engine.monitor import client
from context_engine.paths import EnginePaths
from support.index import raw_fact, replace_raw
from support.monitor import Monitors
from support.store import settle_all


@pytest.fixture()
def monitors(monkeypatch: pytest.MonkeyPatch) -> Iterator[Monitors]:
    found = Monitors(monkeypatch)
    try:
        yield found
    finally:
        found.close()


@pytest.fixture()
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, monitors: Monitors) -> EnginePaths:
    settle_all(monkeypatch)  # rows count as settled at once: only the monitor's word is left
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    for n in range(6):
        _write(paths.project_store, f"fact-{n}", f"Body {n}.", f"Fact {n}")
    _write(paths.global_store, "tabs", "Tabs.", "Style")
    memory = Memory(paths)
    for store in memory.stores.all():
        assert store.index is not None
        store.index.create = True  # as a hook or a writer makes them
        store.index.names()
    monitors.thread(paths.state)
    return paths


def _write(store: Path, name: str, body: str, description: str) -> None:
    store.mkdir(parents=True, exist_ok=True)
    data = raw_fact(name, body, description=description)
    if store.name == "global":
        data = data.replace(b"scope: project", b"scope: global")
    (store / f"{name}.md").write_bytes(data)


class StoreCalls:
    """``lstat``/``stat``/``listdir``/``scandir`` calls on the stores' entries."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, paths: EnginePaths) -> None:
        self.roots = (str(paths.project_store), str(paths.global_store))
        self.calls: list[str] = []
        for name in ("lstat", "stat", "listdir", "scandir"):
            monkeypatch.setattr(os, name, self._counting(getattr(os, name)))

    def _counting(self, real):  # type: ignore[no-untyped-def]
        def call(path=".", *args, **kwargs):  # type: ignore[no-untyped-def]
            text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
            if "dir_fd" in kwargs or not isinstance(path, (str, bytes, os.PathLike)):
                self.calls.append(text)  # relative to an open store directory
            elif text.startswith(self.roots) and text not in self.roots:
                self.calls.append(text)
            return real(path, *args, **kwargs)

        return call


def listed(paths: EnginePaths) -> list[tuple[object, ...]]:
    return _rows(list_memory(Memory(paths)))


def full(paths: EnginePaths) -> list[tuple[object, ...]]:
    memory = Memory(paths)
    for store in memory.stores.all():
        store.index = None
    return _rows(list_memory(memory))


def _rows(listing: Listing) -> list[tuple[object, ...]]:
    return [(f.file, f.id, f.revision, f.name, f.description, f.scope) for f in listing.facts]


def watch_of(paths: EnginePaths) -> derived_index.Watch:
    index = Memory(paths).stores.project.index
    assert index is not None
    found = index.watch()
    assert found is not None
    return found


def test_a_vouched_read_lstats_no_fact_file_and_answers_as_a_full_parse(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert listed(paths) == full(paths)  # walks, then records the monitor's token
    assert watch_of(paths).valid
    some = Memory(paths).load("fact-3").fact
    expected = full(paths)
    with monkeypatch.context() as patch:
        calls = StoreCalls(patch, paths)
        assert listed(paths) == expected
        catalog = LocalCatalog(paths)
        try:
            printed = printed_facts(catalog, "json", Clock())
            by_id = catalog.read(some.id).fact
        finally:
            catalog.close()
    assert set(calls.calls) <= {str(some.path)}  # the file read is checked, no other
    assert printed is not None and printed.total == 7
    assert (by_id.id, by_id.body, by_id.path) == (some.id, some.body, some.path)


def test_a_stale_row_written_after_the_vouch_makes_the_next_reader_walk(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race a token saved beside the rows would lose (it needs the generation)."""
    listed(paths)
    memory = Memory(paths)
    store = memory.stores.project
    index = store.index
    assert index is not None and index.watch() is not None and watch_of(paths).valid
    target = paths.project_store / "fact-2.md"
    # Reader A looks at fact-2 before another program replaces it, then stalls.
    seen_by_a = index.watch()
    st = os.lstat(target)
    parsed_by_a = store.read_entry(target, st)
    assert parsed_by_a is not None
    replace_raw(target, raw_fact("fact-2", "Replaced by another program.", description="New"))
    # Reader B: the monitor names fact-2; B records its row and rolls the vouch forward.
    assert listed(paths) == full(paths)
    assert watch_of(paths).valid
    # A wakes up and records what it saw, as a snapshot does (no watch state passed) ...
    stale = [("fact-2.md", identity_of(st), 0, parsed_by_a)]
    assert index.update(stale)
    assert not watch_of(paths).valid  # its row write bumped the generation
    # ... and C, asking the monitor since B's token (nothing changed since), must not trust
    # A's row: it walks, and finds the replaced file.
    with monkeypatch.context() as patch:
        calls = StoreCalls(patch, paths)
        got = listed(paths)
    assert got == full(paths)  # without the generation: A's stale row ("Fact 2")
    assert ("fact-2.md", "New") in {(r[0], r[4]) for r in got}
    assert len(calls.calls) >= 6
    assert watch_of(paths).valid  # C's walk vouched for the rows again
    # A's stale write with the state it saw before the change keeps no vouch either.
    assert seen_by_a is not None
    assert index.update(stale, seen=seen_by_a)
    assert not watch_of(paths).valid
    assert listed(paths) == full(paths)


def test_a_vouch_is_recorded_only_at_the_generation_its_rows_were_read(
    paths: EnginePaths,
) -> None:
    listed(paths)
    memory = Memory(paths)
    index = memory.stores.project.index
    assert index is not None
    seen = index.watch()
    assert seen is not None and seen.valid
    got = client.changes_since(str(paths.state), [str(paths.project_store)], None)
    assert got is not None
    token = got[0]
    # Another process writes a row between our read and our record: no vouch at our token.
    target = paths.project_store / "fact-1.md"
    st = os.lstat(target)
    entry = memory.stores.project.read_entry(target, st)
    assert entry is not None
    assert index.update([("fact-1.md", identity_of(st), 0, entry)])
    assert index.update((), (), seen=seen, token=token)
    now = index.watch()
    assert now is not None and not now.valid and now.generation == seen.generation + 1


def test_unknown_no_answer_or_another_monitor_walk_and_stay_correct(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch, monitors: Monitors
) -> None:
    listed(paths)
    assert watch_of(paths).valid
    replace_raw(paths.project_store / "fact-4.md", raw_fact("fact-4", "Edited.", description="E"))
    real = client.changes_since
    for answer in ("unknown", "none"):
        with monkeypatch.context() as patch:

            def fake(
                state: str, dirs: list[str], since: object, answer: str = answer, **kw: object
            ) -> object:
                got = real(state, dirs, since)
                if answer == "none" or got is None:
                    return None
                return got[0], [None for _ in dirs]  # "unknown" for every directory

            patch.setattr(client, "changes_since", fake)
            calls = StoreCalls(patch, paths)
            got = listed(paths)
        assert len(calls.calls) >= 6, answer
        assert got == full(paths), answer
    # The monitor replaced by another instance: the recorded token means nothing to it.
    client.stop(str(paths.state))
    for runner in monitors.threads:
        runner.join(5)
    monitors.thread(paths.state)
    replace_raw(paths.project_store / "fact-5.md", raw_fact("fact-5", "Again.", description="A"))
    with monkeypatch.context() as patch:
        calls = StoreCalls(patch, paths)
        got = listed(paths)
    assert len(calls.calls) >= 6
    assert got == full(paths)


def test_rows_moved_on_since_the_monitor_was_asked_are_walked(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed(paths)
    real = watched.look
    target = paths.project_store / "fact-0.md"

    def late(stores):  # type: ignore[no-untyped-def]
        views = real(stores)
        # Between the monitor's answer and the rows' read: a replace and a stale row write.
        memory = Memory(paths)
        store = memory.stores.project
        st = os.lstat(target)
        old = store.read_entry(target, st)
        replace_raw(target, raw_fact("fact-0", "Changed late.", description="Late"))
        assert store.index is not None and old is not None
        store.index.update([("fact-0.md", identity_of(st), 0, old)])
        return views

    with monkeypatch.context() as patch:
        from context_engine.facts import listing, printed_listing

        patch.setattr(listing, "look", late)
        got = listed(paths)
        assert got == full(paths)
        replace_raw(target, raw_fact("fact-0", "Once more.", description="More"))
        patch.setattr(printed_listing, "look", late)
        catalog = LocalCatalog(paths)
        try:
            printed = printed_facts(catalog, "json", Clock())
        finally:
            catalog.close()
    assert printed is not None and b'"description": "Late"' in printed.text


@pytest.mark.slow  # two writes, the first builds the writer state
def test_our_writes_keep_the_vouch_and_the_next_read_looks_at_that_file_only(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed(paths)
    Memory(paths).save(name="fresh", description="Fresh", body="Written by us.")
    Memory(paths).save(name="fact-1", description="Fact 1 again", body="Rewritten.")
    assert watch_of(paths).valid
    with monkeypatch.context() as patch:
        calls = StoreCalls(patch, paths)
        got = listed(paths)
    assert {os.path.basename(c) for c in calls.calls} <= {"fresh.md", "fact-1.md"}
    assert got == full(paths)
    with monkeypatch.context() as patch:
        calls = StoreCalls(patch, paths)
        assert listed(paths) == got
    assert calls.calls == []  # the vouch was rolled forward past the two names


def test_a_file_the_index_cannot_hold_is_never_vouched_for(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed(paths)
    odd = paths.project_store / "odd.md"
    # An extra key marshal cannot give back equal (NaN): the row is never recorded.
    odd.write_bytes(raw_fact("odd", "First.").replace(b"\n---\n", b"\nweird: .nan\n---\n", 1))
    assert "odd.md" in {r[0] for r in listed(paths)}
    assert "odd.md" in {r[0] for r in listed(paths)}  # no vouch was recorded without it
    assert watch_of(paths).valid  # kept: odd.md stays named since the token
    replace_raw(odd, odd.read_bytes().replace(b"First.", b"Second, longer."))
    replace_raw(paths.project_store / "fact-1.md", raw_fact("fact-1", "B.", description="B"))
    assert listed(paths) == full(paths)
    # However many readers come, odd.md is read again each time (no vouch hides it).
    replace_raw(odd, odd.read_bytes().replace(b"description: About odd", b"description: Third"))
    assert ("odd.md", "Third") in {(r[0], r[4]) for r in listed(paths)}


def test_a_missing_store_costs_no_write_per_read(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    shutil.rmtree(paths.global_store)
    listed(paths)
    index = Memory(paths).stores.global_.index
    assert index is not None
    writes: list[object] = []
    real = derived_index.FactIndex.record
    monkeypatch.setattr(derived_index.FactIndex, "record",
                        lambda *a, **kw: writes.append(a) or real(*a, **kw))
    for _ in range(3):
        assert listed(paths) == full(paths)
    assert writes == []
