"""A write asks the store monitor what changed since its checkpoint (``facts/write_state.py``).

With the monitor up, a write after another program's change reads only the named files — no
listing of the store — and MEMORY.md still equals a full regeneration. The token is taken
before whatever it vouches for, so a change made while a write lists the store reaches the
next write; an in-place edit by another program (same inode, the directory untouched, which
the directory's identity cannot show) reaches MEMORY.md at the next write, not only at the
next rebuild.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from context_engine.facts import codec, write_state
from context_engine.facts.index_file import render_index
from context_engine.facts.memory import Memory
from context_engine.facts.store import Store
from context_engine.monitor import client
from context_engine.paths import EnginePaths
from support.index import edit_in_place_same_size
from support.monitor import Monitors
from support.store import make_paths

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture()
def monitors(monkeypatch: pytest.MonkeyPatch) -> Iterator[Monitors]:
    found = Monitors(monkeypatch)
    try:
        yield found
    finally:
        found.close()


def _memory(paths: EnginePaths) -> Memory:
    return Memory(paths, clock=lambda: NOW)


def _fill(paths: EnginePaths, count: int) -> None:
    store = paths.project_store
    store.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        fact = codec.Fact(f"mem-{i:032x}", 1, f"fact-{i:03d}", f"Title {i}", f"about {i}",
                          "project", "project", f"body {i}", NOW, NOW)
        (store / f"fact-{i:03d}.md").write_bytes(codec.render_fact(fact))


def _replace_outside(path: Path, **changes: object) -> None:
    """Another program rewrites a fact atomically (new inode)."""
    fact = codec.parse_fact(path.read_bytes(), path=path, store_scope="project", mtime=NOW).fact
    data = codec.render_fact(dataclasses.replace(fact, **changes))  # type: ignore[arg-type]
    temp = path.with_name(".outside.tmp")
    temp.write_bytes(data)
    os.replace(temp, path)


def _index(paths: EnginePaths) -> bytes:
    return (paths.project_store / "MEMORY.md").read_bytes()


def _regenerated(paths: EnginePaths) -> bytes:
    """MEMORY.md as a full regeneration from every parsed file makes it."""
    memory = Memory(paths)
    store = memory.stores.get("project")
    store.index = None
    text = render_index(_index(paths).decode("utf-8", "surrogateescape"), store.snapshot().facts)
    return text.encode("utf-8", "surrogateescape")


class _Listings:
    """``scandir``/``listdir`` calls on the project store."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
        self.count = 0
        for name in ("scandir", "listdir"):
            monkeypatch.setattr(os, name, self._counting(getattr(os, name), str(root)))

    def _counting(self, real, root: str):  # type: ignore[no-untyped-def]
        def call(path=".", *args, **kwargs):  # type: ignore[no-untyped-def]
            if isinstance(path, (str, os.PathLike)) and os.fspath(path) == root:
                self.count += 1
            return real(path, *args, **kwargs)

        return call


def _warm(paths: EnginePaths, monitors: Monitors) -> None:
    """A monitor up, and a writer state whose checkpoint holds its token."""
    monitors.thread(paths.state)
    _fill(paths, 6)
    _memory(paths).save(name="warm", body="x")  # state built, the token recorded with it


def test_another_programs_change_is_read_without_listing_the_store(
    tmp_path: Path, monitors: Monitors, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = make_paths(tmp_path)
    _warm(paths, monitors)
    _replace_outside(paths.project_store / "fact-002.md", title="Edited elsewhere", revision=2)
    stale = paths.project_store / ".tmp-0123456789abcdef.partial"  # a crashed writer's temp
    stale.write_bytes(b"half")
    with monkeypatch.context() as patch:
        listings = _Listings(patch, paths.project_store)
        _memory(paths).save(name="after", body="y")
    assert listings.count == 0
    assert not stale.exists()  # named by the monitor, swept as a listing would
    assert "[Edited elsewhere](fact-002.md)" in _index(paths).decode()
    assert _index(paths) == _regenerated(paths)
    # Without the monitor the same write lists the store once (what the token saves).
    _replace_outside(paths.project_store / "fact-003.md", title="Edited again", revision=2)
    with monkeypatch.context() as patch:
        patch.setenv(client.ENV, "0")
        listings = _Listings(patch, paths.project_store)
        _memory(paths).save(name="later", body="z")
    assert listings.count == 1
    assert _index(paths) == _regenerated(paths)


def test_an_in_place_edit_by_another_program_reaches_memory_md_at_the_next_write(
    tmp_path: Path, monitors: Monitors
) -> None:
    paths = make_paths(tmp_path)
    _warm(paths, monitors)
    target = paths.project_store / "fact-004.md"
    assert edit_in_place_same_size(target, b"Title 4", b"TITLE 4")  # same inode and size
    _memory(paths).save(name="next", body="y")
    assert "[TITLE 4](fact-004.md)" in _index(paths).decode()
    assert _index(paths) == _regenerated(paths)


def test_a_change_made_while_a_write_lists_the_store_reaches_the_next_write(
    tmp_path: Path, monitors: Monitors, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = make_paths(tmp_path)
    _warm(paths, monitors)
    store = paths.project_store
    # The checkpoint's token forgotten and the directory changed: the next write lists.
    with sqlite3.connect(write_state.state_path(paths, "project")) as db:
        db.execute("UPDATE meta SET value = '' WHERE key = 'monitor'")
    db.close()
    _replace_outside(store / "fact-001.md", title="Before the listing", revision=2)
    real = write_state._listing

    def listing(root: Path) -> dict[str, int]:
        found = real(root)
        if root == store:  # another program, just after the write listed the store
            _replace_outside(store / "fact-005.md", title="During the listing", revision=2)
        return found

    with monkeypatch.context() as patch:
        patch.setattr(write_state, "_listing", listing)
        _memory(paths).save(name="listed", body="y")
    assert "[Before the listing](fact-001.md)" in _index(paths).decode()
    _memory(paths).save(name="next", body="z")
    assert "[During the listing](fact-005.md)" in _index(paths).decode()
    assert _index(paths) == _regenerated(paths)


@pytest.mark.slow
def test_the_next_write_does_not_read_again_the_files_the_last_one_made(
    tmp_path: Path, monitors: Monitors, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = make_paths(tmp_path)
    _warm(paths, monitors)
    _memory(paths).save(name="first", body="x")
    read: list[str] = []
    real = Store._read_entry

    def read_entry(self: Store, path: Path, st: os.stat_result) -> object:
        read.append(path.name)
        return real(self, path, st)

    with monkeypatch.context() as patch:
        patch.setattr(Store, "_read_entry", read_entry)
        _memory(paths).save(name="second", description="second about", body="y")
    assert read == ["second.md"]  # named by the monitor, but as the last write left it
    # Changed since by another program (a new ctime): read again, as any named file.
    time.sleep(0.05)  # past one coarse clock tick: the edit's ctime differs from the write's
    assert edit_in_place_same_size(paths.project_store / "second.md", b"second about",
                                   b"SECOND ABOUT")
    _memory(paths).save(name="third", body="z")
    assert "[second](second.md) — [project/project] SECOND ABOUT" in _index(paths).decode()
    assert _index(paths) == _regenerated(paths)
