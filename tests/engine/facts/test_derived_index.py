"""The derived on-disk index never answers differently from a full parse of the files (issue 14)."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from context_engine.facts import codec, derived_index
from context_engine.facts.index_file import render_index
from context_engine.facts.memory import Memory
from context_engine.facts.store import Store
from context_engine.paths import EnginePaths
from support.index import (
    child_env,
    cli_from_full_parse,
    cli_in_fresh_process,
    crash_after_file_write,
    edit_in_place_same_size,
    full_parse,
    raw_fact,
    read_in_fresh_process,
    replace_raw,
    save_worker,
)
from support.store import parsed_diagnostics, parsed_snapshot, settle_all

SPAWN = multiprocessing.get_context("spawn")


ALL_FILES = ["fact-0.md", "fact-1.md", "fact-2.md", "fact-3.md", "fact-4.md", "pref.md"]


def rows(paths: EnginePaths) -> list[tuple[object, ...]]:
    return [(f, f.path, f.stamp) for f in Memory(paths).snapshot().facts]


def index_files(paths: EnginePaths) -> list[Path]:
    return [derived_index.index_path(paths, scope) for scope in ("project", "global")]


@pytest.fixture()
def paths(tmp_path: Path) -> EnginePaths:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=ws, root=ws)
    memory = Memory(paths)
    for i in range(5):
        memory.save(name=f"fact-{i}", description=f"Fact {i}", body=f"Body {i}.", type="project")
    memory.save(name="pref", description="Pref", body="Tabs.", type="user", scope="global")
    return paths


@pytest.fixture()
def settled(paths: EnginePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as settled, and a first read has recorded every row."""
    settle_all(monkeypatch)
    rows(paths)


@pytest.fixture()
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The file names the store reads and parses (index misses)."""
    seen: list[str] = []
    real = Store._read_entry

    def spy(self: Store, path: Path, st: os.stat_result) -> object:
        seen.append(path.name)
        return real(self, path, st)

    monkeypatch.setattr(Store, "_read_entry", spy)
    return seen


def test_writes_create_the_index_private_and_rows_are_trusted_once_settled(
    paths: EnginePaths, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for file in index_files(paths):
        assert file.is_file() and file.stat().st_mode & 0o777 == 0o600
        assert file.parent.stat().st_mode & 0o777 == 0o700
    settle_all(monkeypatch)
    assert rows(paths) == parsed_snapshot(paths)
    parses.clear()
    assert rows(paths) == parsed_snapshot(paths)
    assert sorted(parses) == ALL_FILES  # only the index-less reference parsed
    parses.clear()
    rows(paths)
    assert parses == []  # a cold reader parsed nothing


def test_recent_files_are_never_trusted(paths: EnginePaths, parses: list[str]) -> None:
    rows(paths)  # written within the racy window just now: read again, never taken on trust
    assert sorted(parses) == ALL_FILES
    assert rows(paths) == parsed_snapshot(paths)


def test_every_kind_of_change_by_another_program_is_seen(
    paths: EnginePaths, settled: None, parses: list[str]
) -> None:
    store = paths.project_store
    one = store / "fact-1.md"
    replace_raw(one, one.read_bytes().replace(b"Body 1.", b"Body one, replaced."))
    assert edit_in_place_same_size(store / "fact-3.md", b"Body 3.", b"Body X.")
    (store / "fact-2.md").unlink()
    (store / "created.md").write_bytes(
        raw_fact("created", "Created by an editor.", description="Made elsewhere", id_hex="a" * 32)
    )
    (store / "broken.md").write_bytes(b"---\nname: [oops\n---\nbody\n")
    parses.clear()
    got = rows(paths)
    assert sorted(set(parses)) == ["broken.md", "created.md", "fact-1.md", "fact-3.md"]
    assert got == parsed_snapshot(paths)
    assert any("Body X." in f.body for f, _, _ in got)  # type: ignore[attr-defined]
    diags = [(d.code, d.path, d.message, d.line) for d in Memory(paths).snapshot().diagnostics]
    assert diags == parsed_diagnostics(paths) and diags


@pytest.mark.slow  # whole processes
@pytest.mark.parametrize("damage", ["delete", "truncate", "garbage", "other-version"])
def test_a_damaged_index_is_rebuilt_by_the_next_command(paths: EnginePaths, damage: str) -> None:
    expected = full_parse(paths)
    _damage(paths, damage)
    assert read_in_fresh_process(paths) == expected
    for file in index_files(paths):
        db = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        schema = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        assert schema == (str(derived_index.SCHEMA),)
        db.close()
    Memory(paths).save(name="after", description="After the damage", body="Fine.")
    assert read_in_fresh_process(paths) == full_parse(paths)
    for args in (("list",), ("read", "fact-1"), ("read", "pref")):  # the commands, too
        _damage(paths, damage)
        assert cli_in_fresh_process(paths, *args) == cli_from_full_parse(paths, *args), args


def _damage(paths: EnginePaths, damage: str) -> None:
    for file in index_files(paths):
        if damage == "delete":
            file.unlink(missing_ok=True)
        elif damage == "truncate":
            file.write_bytes(file.read_bytes()[:700])
        elif damage == "garbage":
            file.write_bytes(b"\x00not a database\xff" * 300)
        else:
            db = sqlite3.connect(file)
            db.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
            db.commit()
            db.close()


@pytest.mark.slow  # a whole process
def test_an_index_writable_by_others_is_never_read(paths: EnginePaths) -> None:
    file = index_files(paths)[0]
    db = sqlite3.connect(file)  # a forged row: if it were trusted, the reader would show it
    db.execute("UPDATE files SET body = 'forged', checked_ns = 9223372036854775807")
    db.commit()
    db.close()
    os.chmod(file, 0o666)
    assert read_in_fresh_process(paths) == full_parse(paths)


@pytest.mark.slow  # whole processes
def test_read_only_commands_on_a_home_without_index_write_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    paths = EnginePaths.resolve(home=home, workspace=ws, root=ws)
    store = paths.project_store
    store.mkdir(parents=True)
    fact = Memory(paths).snapshot()  # nothing yet: reads write nothing
    assert fact.facts == ()
    sample = raw_fact(
        "release", "Release from main docker build.", description="Release", id_hex="b" * 32
    )
    (store / "release.md").write_bytes(sample)  # written by Reasonix, not by us

    def state() -> dict[str, tuple[int, int]]:
        found = {}
        for dirpath, dirs, files in os.walk(tmp_path):
            for name in [*dirs, *files]:
                st = os.lstat(os.path.join(dirpath, name))
                found[os.path.join(dirpath, name)] = (st.st_mtime_ns, st.st_size)
        return found

    before = state()
    exe = str(Path(sys.executable).parent / "context-engine")
    base = [exe, "--home", str(home), "--workspace", str(ws)]
    for args in (["--json", "list"], ["read", "release"], ["search", "docker"], ["memory"]):
        subprocess.run([*base, *args], check=True, capture_output=True, env=child_env())
    assert read_in_fresh_process(paths, create=False)["facts"]
    assert state() == before
    assert not any(file.exists() for file in index_files(paths))


@pytest.mark.slow  # whole processes
def test_a_crash_between_file_write_and_index_update_hides_nothing(paths: EnginePaths) -> None:
    child = SPAWN.Process(target=crash_after_file_write, args=(str(paths.home), str(paths.root)))
    child.start()
    child.join(60)
    assert child.exitcode == 3
    assert (paths.project_store / "crashed.md").exists()
    seen = read_in_fresh_process(paths, racy_ns=0)
    assert seen == full_parse(paths)
    assert any("crashed" in fact[0] for fact in seen["facts"])  # type: ignore[operator]


@pytest.mark.slow  # whole processes
def test_two_processes_writing_at_once_leave_an_index_that_agrees(paths: EnginePaths) -> None:
    names = [[f"left-{i}" for i in range(12)], [f"right-{i}" for i in range(12)]]
    with SPAWN.Pool(2) as pool:
        done = pool.starmap(save_worker, [(str(paths.home), str(paths.root), n) for n in names])
    assert done == [12, 12]
    assert read_in_fresh_process(paths, racy_ns=0) == full_parse(paths)
    recorded = derived_index.store_index(paths, "project").names()
    listed = {p.name for p in paths.project_store.glob("*.md")} - {"MEMORY.md"}
    assert recorded == listed


def test_a_store_edited_while_a_host_runs_is_seen_on_its_next_turn(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.engine import ContextEngine

    settle_all(monkeypatch)
    engine = ContextEngine(paths, keep_index=True)
    first = engine.active_facts()
    assert [(f, f.path, f.stamp) for f in first] == parsed_snapshot(paths)
    Memory(paths).save(name="fact-1", body="Changed body.")
    Memory(paths).forget("fact-2")
    assert edit_in_place_same_size(paths.project_store / "fact-3.md", b"Body 3.", b"Body X.")
    second = engine.active_facts()
    assert [(f, f.path, f.stamp) for f in second] == parsed_snapshot(paths)
    kept = {f.name: f for f in first}
    assert second[0] is kept["fact-0"]  # unchanged facts are the very same objects
    assert engine.active_facts() is second  # nothing changed since: the same snapshot


@pytest.mark.slow  # whole processes
def test_a_read_only_medium_is_read_without_writing(paths: EnginePaths) -> None:
    Memory(paths).save(name="fact-0", body="Last write.")
    expected = full_parse(paths)

    def walk(writable: bool) -> dict[str, tuple[bytes | None, int]]:
        found: dict[str, tuple[bytes | None, int]] = {}
        for dirpath, dirs, files in os.walk(paths.home):
            for name in dirs + files:
                path = os.path.join(dirpath, name)
                mode = os.stat(path).st_mode
                os.chmod(path, (mode | 0o200) if writable else (mode & ~0o222))
                data = None if name in dirs else Path(path).read_bytes()
                found[path] = (data, os.stat(path).st_mtime_ns)
        return found

    before = walk(writable=False)
    try:
        assert read_in_fresh_process(paths) == expected
        assert read_in_fresh_process(paths, create=False) == expected
        after = walk(writable=False)
    finally:
        walk(writable=True)
    assert after == before


def test_memory_md_after_indexed_writes_is_byte_identical_to_a_full_regeneration(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    index_md = paths.project_store / "MEMORY.md"
    index_md.write_text("# Memory\n\nHand-written note.\n\n" + index_md.read_text("utf-8"))
    rows(paths)
    # Another program edits a description; our next write must carry it into MEMORY.md.
    target = paths.project_store / "fact-3.md"
    replace_raw(target, target.read_bytes().replace(b"Fact 3", b"Fact three, edited"))
    memory = Memory(paths)
    memory.save(name="zeta", description="Last one", body="Z.")
    memory.forget("fact-0")
    memory.save(name="fact-1", title="Renamed title", body="B1")
    parsed = Memory(paths)
    for store in parsed.stores.all():
        store.index = None
    for scope in ("project", "global"):
        path = paths.store_dir(scope) / "MEMORY.md"
        text = path.read_text("utf-8")
        facts = parsed.stores.get(scope).snapshot().facts
        assert render_index(text, facts) == text
        assert "Fact three, edited" in text or scope == "global"


@pytest.mark.slow  # many durable writes
def test_a_write_in_a_settled_store_parses_only_what_it_touches(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    memory = Memory(paths)
    for i in range(15):
        memory.save(name=f"more-{i}", description=f"More {i}", body=f"More body {i}.")
    rows(paths)
    parsed: list[str] = []
    real = codec.parse_fact  # ``Store.parse`` looks it up on each parse

    def spy(data: bytes, **kwargs: object) -> object:
        path = kwargs.get("path")
        parsed.append(getattr(path, "name", "?"))
        return real(data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(codec, "parse_fact", spy)
    fresh = Memory.open(paths)  # the S5.1 check on open: every row says "already upgraded"
    fresh.save(name="more-7", body="Edited once more.")
    fresh.save(name="brand-new", description="New", body="New.")
    assert len(parsed) <= 4, parsed
    assert rows(paths) == parsed_snapshot(paths)


def test_summaries_list_settled_rows_without_reading_a_file(
    paths: EnginePaths, settled: None, parses: list[str]
) -> None:
    assert edit_in_place_same_size(paths.project_store / "fact-3.md", b"Body 3.", b"Body X.")
    parses.clear()
    found = Memory(paths).summaries()
    assert parses == []
    expected = [
        (f.name, f.scope, f.id, f.revision, f.title, f.description, f.type)
        for f in Memory(paths).snapshot().facts
        if f.name != "fact-3"  # changed since it was indexed: left to the full snapshot
    ]
    assert [
        (r.name, r.scope, r.id, r.revision, r.title, r.description, r.type) for r in found
    ] == expected


# One process: a writer closes the index connection (to checkpoint under the store lock) while
# a reader thread of the same process is fetching rows from it. Closing a sqlite3 connection
# another thread is using crashed the interpreter (seen as a segfault in the app's read pool).
CLOSE_WHILE_READING = """
import sys, threading, time
sys.path[:0] = sys.argv[1:3]
from context_engine.facts import codec, derived_index
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
paths = EnginePaths.resolve(home=sys.argv[3], workspace=sys.argv[4], root=sys.argv[4])
memory = Memory(paths)
memory.snapshot()
index = next(s.index for s in memory.stores.all() if s.index is not None)
stop = time.monotonic() + 2.0
def read():
    while time.monotonic() < stop:
        index.rows()
readers = [threading.Thread(target=read) for _ in range(3)]
for t in readers:
    t.start()
while time.monotonic() < stop:
    index.close()
for t in readers:
    t.join()
print("ok")
"""


@pytest.mark.slow
def test_closing_the_index_while_another_thread_reads_never_crashes(
    paths: EnginePaths, tmp_path: Path
) -> None:
    root = Path(__file__).resolve().parents[3]
    for i in range(200):
        Memory(paths).save(name=f"more-{i}", description=f"More {i}", body="x" * 200,
                           type="project")
    done = subprocess.run(
        [sys.executable, "-c", CLOSE_WHILE_READING, str(root / "app"), str(root / "tests"),
         str(paths.home), str(paths.workspace)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def _render_pages(path: Path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        (pages,) = db.execute(
            "SELECT count(*) FROM dbstat WHERE name = 'files_render'"
        ).fetchone()
    return int(pages)


def test_a_bulk_build_leaves_the_listing_indexes_packed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows recorded in file order, names in another: on close the listing indexes are rewritten
    in key order (fewer, full pages); a close after a few more rows leaves them as they are."""
    from datetime import UTC, datetime

    from context_engine.facts.listing import list_memory
    from context_engine.facts.model import Fact

    monkeypatch.setattr(derived_index, "_PACK_FROM", 50)
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=ws, root=ws)
    paths.project_store.mkdir(parents=True)
    for i in range(400):
        fact = Fact(id=f"mem-{i:032x}", revision=1, name=f"n-{(i * 7919) % 400:03d}", title="T",
                    description="d " * 150, type="project", scope="project", body="b",
                    created_at=datetime(2025, 1, 1, tzinfo=UTC))
        (paths.project_store / f"f-{i:03d}.md").write_bytes(codec.render_fact(fact))
    memory = Memory(paths)
    index = memory.stores.project.index
    assert index is not None
    index.create = True
    reindexed: list[str] = []
    list_memory(memory)  # the first build: 400 rows
    assert index._db is not None
    index._db.set_trace_callback(lambda sql: reindexed.append(sql) if "REINDEX" in sql else None)
    before = _render_pages(index.path)
    memory.close()
    after = _render_pages(index.path)
    assert reindexed == ["REINDEX files_render", "REINDEX files_table"]
    assert after < before  # packed
    memory = Memory(paths)
    (paths.project_store / "f-000.md").write_bytes(
        (paths.project_store / "f-000.md").read_bytes() + b"more\n"
    )
    list_memory(memory)  # one row
    memory.close()
    assert _render_pages(index.path) == after
