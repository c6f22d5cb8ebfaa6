"""A write leaves the other store's writer state unopened while the monitor vouches for it.

Every write locks both stores (S4.11) and checks each for legacy files on first use (S5.1).
A store the monitor names no change in since a session that found it clean (its token beside
the writer state, ``*.quiet``) is not opened; the first real use opens it — an S4.11 archive,
an update by id, a legacy file dropped in by another program — and every MEMORY.md is then
what a full regeneration gives.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from context_engine.facts import write_state
from context_engine.facts.index_file import render_index
from context_engine.facts.memory import Memory
from context_engine.facts.write_state import state_path
from context_engine.monitor import client
from context_engine.paths import EnginePaths
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
    settle_all(monkeypatch)
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    monitors.thread(paths.state)
    memory = Memory(paths)
    memory.save(name="tabs", body="Tabs, not spaces.", scope="global")
    memory.save(name="style", body="Short names.", scope="global")
    memory.save(name="first", body="A project fact.")  # the global store found clean here
    return paths


class _Opens:
    """Counts the connections made to each store's writer state."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.by_name: dict[str, int] = {}
        real = sqlite3.connect

        def connect(path: object, *args: object, **kwargs: object) -> sqlite3.Connection:
            name = Path(str(path)).name
            self.by_name[name] = self.by_name.get(name, 0) + 1
            return real(path, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(write_state.sqlite3, "connect", connect)

    def of(self, paths: EnginePaths, scope: str) -> int:
        return self.by_name.get(state_path(paths, scope).name, 0)  # type: ignore[arg-type]


def _regenerated(paths: EnginePaths, scope: str) -> str:
    """MEMORY.md as a full regeneration from every parsed fact of the store gives it."""
    path = paths.store_dir(scope) / "MEMORY.md"
    before = path.read_text() if path.exists() else ""
    store = Memory(paths).stores.get(scope)  # type: ignore[arg-type]
    store.index = None
    return render_index(before, store.snapshot().facts)


def _memory_md(paths: EnginePaths, scope: str) -> str:
    return (paths.store_dir(scope) / "MEMORY.md").read_text()


def test_project_writes_leave_the_quiet_global_state_unopened(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    opens = _Opens(monkeypatch)
    for n in range(3):
        Memory(paths).save(name=f"later-{n}", body="Another project fact.")
    assert opens.of(paths, "global") == 0
    assert opens.of(paths, "project") == 3
    assert _memory_md(paths, "project") == _regenerated(paths, "project")
    assert "(later-2.md)" in _memory_md(paths, "project")


def test_without_the_monitor_the_other_store_is_opened_as_before(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(client.ENV, "0")
    opens = _Opens(monkeypatch)
    Memory(paths).save(name="later", body="Another project fact.")
    assert opens.of(paths, "global") == 1


def test_an_unqualified_save_archives_the_other_copy_from_a_deferred_store(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S4.11 through a store not opened at first: its MEMORY.md and rows stay exact."""
    opens = _Opens(monkeypatch)
    changes = Memory(paths).save(name="tabs", body="Tabs in this project.", scope="project")
    assert changes.archived
    assert opens.of(paths, "global") == 1  # opened when the archive touched it
    assert "(tabs.md)" not in _memory_md(paths, "global")
    assert _memory_md(paths, "global") == _regenerated(paths, "global")
    Memory(paths).save(name="spaces", body="Spaces in the home.", scope="global")
    assert _memory_md(paths, "global") == _regenerated(paths, "global")
    assert "(spaces.md)" in _memory_md(paths, "global")


def test_an_update_by_name_of_a_fact_in_a_deferred_store(paths: EnginePaths) -> None:
    Memory(paths).save(name="later", body="Another project fact.")  # global deferred now
    changes = Memory(paths).save(name="tabs", body="Tabs, even in YAML.")
    assert changes.fact is not None and changes.fact.scope == "global"
    assert _memory_md(paths, "global") == _regenerated(paths, "global")
    assert _memory_md(paths, "project") == _regenerated(paths, "project")


def test_an_update_by_id_finds_a_fact_of_a_deferred_store(paths: EnginePaths) -> None:
    memory = Memory(paths)
    style = memory.resolve("global/style.md")
    Memory(paths).save(name="later", body="Another project fact.")  # global deferred now
    changes = Memory(paths).save(id=style.id, body="Short, plain names.")
    assert changes.fact is not None and changes.fact.revision == 2
    assert changes.fact.scope == "global"
    assert _memory_md(paths, "global") == _regenerated(paths, "global")


def test_a_legacy_file_dropped_into_a_quiet_store_is_still_upgraded(paths: EnginePaths) -> None:
    """The monitor names the new file: the store is opened, and the file migrated (S5.1)."""
    Memory(paths).save(name="later", body="Another project fact.")  # global deferred now
    legacy = paths.global_store / "old-note.md"
    legacy.write_text("---\nname: old-note\ndescription: An old note\n---\n\nFrom before v2.\n")
    Memory(paths).save(name="later-2", body="Another project fact.")
    text = legacy.read_text()
    assert "\nid: " in text and "\nrevision: 1\n" in text
    assert "(old-note.md)" in _memory_md(paths, "global")


@pytest.mark.parametrize("saved", [b"not json", b'{"code": "other"}', b"[]", b""])
def test_a_damaged_quiet_file_only_costs_the_opening(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch, saved: bytes
) -> None:
    quiet = state_path(paths, "global").with_name(  # type: ignore[arg-type]
        state_path(paths, "global").name + ".quiet"  # type: ignore[arg-type]
    )
    assert quiet.exists()
    quiet.write_bytes(saved)
    opens = _Opens(monkeypatch)
    Memory(paths).save(name="later", body="Another project fact.")
    assert opens.of(paths, "global") == 1
    assert _memory_md(paths, "project") == _regenerated(paths, "project")
