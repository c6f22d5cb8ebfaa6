"""The derived index is made on ``PAGE_SIZE`` pages, and an earlier version's index on other
pages takes them when it is emptied for this version, unless another process holds it open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from context_engine.facts import derived_index
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from support.index import full_parse, read_in_fresh_process
from support.store import git_paths


@pytest.fixture()
def paths(tmp_path: Path) -> EnginePaths:
    paths = git_paths(tmp_path)
    memory = Memory(paths)
    for i in range(30):
        memory.save(name=f"fact-{i}", description=f"Fact {i}", body="Body. " * 200,
                    type="project")
    memory.save(name="pref", description="Pref", body="Tabs.", type="user", scope="global")
    memory.close()
    return paths


def _files(paths: EnginePaths) -> list[Path]:
    return [derived_index.index_path(paths, scope) for scope in ("project", "global")]


def _state(file: Path) -> tuple[int, str, str]:
    db = sqlite3.connect(f"file:{file}?mode=ro", uri=True)  # closed: no open connection left
    try:
        return (db.execute("PRAGMA page_size").fetchone()[0],
                db.execute("PRAGMA journal_mode").fetchone()[0],
                db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()


def _as_an_earlier_version(file: Path) -> None:
    """The index as a version on 4 KiB pages left it, its meta another version's."""
    db = sqlite3.connect(file, isolation_level=None)
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("PRAGMA page_size=4096")
    db.execute("VACUUM")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    db.close()


def test_a_new_index_is_made_on_the_page_size(paths: EnginePaths) -> None:
    for file in _files(paths):
        assert _state(file) == (derived_index.PAGE_SIZE, "wal", "ok")


def test_an_earlier_versions_index_takes_the_page_size_when_rebuilt(paths: EnginePaths) -> None:
    expected = full_parse(paths)
    for file in _files(paths):
        _as_an_earlier_version(file)
        assert _state(file)[0] == 4096
    assert read_in_fresh_process(paths, create=True) == expected
    for file in _files(paths):
        assert _state(file) == (derived_index.PAGE_SIZE, "wal", "ok")
    assert read_in_fresh_process(paths) == expected  # and it is read as before


def test_an_index_another_process_holds_open_keeps_its_pages(paths: EnginePaths) -> None:
    expected = full_parse(paths)
    project = _files(paths)[0]
    _as_an_earlier_version(project)
    holder = sqlite3.connect(project, isolation_level=None)  # say, the app, still running
    holder.execute("BEGIN")
    holder.execute("SELECT count(*) FROM files").fetchone()
    try:
        assert read_in_fresh_process(paths, create=True) == expected
    finally:
        holder.execute("COMMIT")
        holder.close()
    assert _state(project) == (4096, "wal", "ok")
    assert read_in_fresh_process(paths) == expected
    db = sqlite3.connect(f"file:{project}?mode=ro", uri=True)
    schema = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    db.close()
    assert schema == (str(derived_index.SCHEMA),)  # rebuilt for this version all the same
