"""``list --json`` and ``memory`` printed by one query of the derived index: the same bytes.

The index keeps each fact's S12 object up to its freshness (``facts/rendered.py``); SQLite
appends the freshness and joins the rows (``facts/printed_listing.py``). Compared on random
stores — unicode and escapes in every field, odd file names, diagnostics, duplicate ids and
names across files and stores, edits by other programs after the rows were recorded — with
what the per-fact formatters print for a full parse of the files.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from unittest import mock

import pytest
from context_engine.catalog.local import LocalCatalog
from context_engine.cli import listed
from context_engine.cli.listed import Clock, listed_json, listed_lines
from context_engine.cli.reads import printed_facts, summary, summary_printed
from context_engine.facts import derived_index, printed_listing
from context_engine.facts.codec import render_fact
from context_engine.facts.listing import list_memory
from context_engine.facts.memory import Memory
from context_engine.facts.model import FACT_TYPES, Fact
from context_engine.facts.printed_listing import CHUNK_ROWS, PrintedFacts
from context_engine.facts.rendered import json_head, json_tail, stamp_us
from context_engine.paths import EnginePaths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NOW = datetime.now(UTC).replace(microsecond=0)
# Stamps on both sides of every freshness edge, the zero time, the future, other offsets.
moments = st.sampled_from([
    NOW - timedelta(days=1), NOW - timedelta(days=20), NOW - timedelta(days=60),
    NOW - timedelta(days=200), NOW - timedelta(days=400), NOW + timedelta(days=3),
    datetime(1, 1, 1, tzinfo=UTC), datetime(1970, 1, 1, tzinfo=UTC),
    datetime(2025, 3, 4, 5, 6, 7, 890123, tzinfo=timezone(timedelta(hours=8))),
    datetime(999, 1, 2, tzinfo=UTC),
])
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=10) | st.sampled_from(
    ["", 'quo"te', "back\\slash", "tab\there", "日本語の説明", "emoji 🧪", "\x1b[31mred",
     "a\u2028b", "nul\x00in"]
)
names = st.sampled_from(["alpha", "beta", "gamma-δ", "数据", "dup", "x y"]) | st.text(
    st.characters(whitelist_categories=("Ll", "Lo", "Nd")), min_size=1, max_size=8
)
ids = st.sampled_from(["mem-" + "a" * 32, "mem-" + "b" * 32, "mem-" + "c" * 32]) | st.text(
    "0123456789abcdef", min_size=32, max_size=32
).map(lambda h: "mem-" + h)
stems = st.sampled_from(["alpha", "beta", "dup", "dup-2", "数据", "x y", "-dash", "a.b", "ZZ"])
facts = st.builds(
    Fact,
    id=ids,
    revision=st.integers(1, 10**6),
    name=names,
    title=texts,
    description=texts,
    type=st.sampled_from(FACT_TYPES),
    scope=st.sampled_from(["project", "global"]),
    body=texts,
    created_at=st.none() | moments,
    updated_at=st.none() | moments,
)
entries = st.lists(
    st.tuples(st.sampled_from(["project", "global"]), stems, facts, st.sampled_from(
        ["fact", "fact", "fact", "garbage", "symlink"])),
    max_size=10,
)
# Later edits by another program: (store, stem, what).
edits = st.lists(
    st.tuples(st.sampled_from(["project", "global"]), stems,
              st.sampled_from(["delete", "garbage", "rewrite"]), facts),
    max_size=3,
)


def _write(path: Path, kind: str, fact: Fact) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    if kind == "symlink":
        os.symlink(path.parent / "elsewhere.txt", path)
    elif kind == "garbage":
        path.write_bytes(b"---\nid: [unclosed\n---\nnot a fact\n")
    else:
        path.write_bytes(render_fact(fact))


def _expected_json(paths: EnginePaths, clock: Clock) -> bytes:
    """``list --json`` of a full parse, each fact by ``listed_json`` (= ``fact_json``)."""
    memory = Memory(paths)
    for store in memory.stores.all():
        store.index = None
    items = list(listed_json(list_memory(memory).facts, clock))
    return json.dumps({"facts": items}, ensure_ascii=False, indent=2).encode()


def _printed_both(
    paths: EnginePaths, clock: Clock
) -> tuple[PrintedFacts | None, PrintedFacts | None]:
    """``list --json``'s and ``memory``'s printed facts, from a fresh catalog of ``paths``."""
    catalog = LocalCatalog(paths)
    try:
        return printed_facts(catalog, "json", clock), printed_facts(catalog, "lines", clock)
    finally:
        catalog.close()


def _odd_scope(paths: EnginePaths) -> bool:
    memory = Memory(paths)
    for store in memory.stores.all():
        store.index = None
    return any(
        (f.scope != "project") == (f.path is not None and f.path.parent == paths.project_store)
        for f in memory.snapshot().facts
    )


@pytest.mark.slow  # many stores
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=entries, later=edits, settled=st.booleans(), chunk=st.sampled_from([1, 2, 3, 2048]))
def test_printed_facts_are_the_listing_printed_fact_by_fact(
    start: list[tuple[str, str, Fact, str]],
    later: list[tuple[str, str, str, Fact]],
    settled: bool,
    chunk: int,
) -> None:
    base = Path(tempfile.mkdtemp(prefix="ce-printed-"))
    saved = derived_index.RACY_NS
    try:
        printed_listing.CHUNK_ROWS = chunk  # chunks of any size join to the same listing
        if settled:
            derived_index.RACY_NS = -(10**18)
        ws = base / "ws"
        (ws / ".git").mkdir(parents=True)
        paths = EnginePaths.resolve(home=base / "home", workspace=ws, root=ws)
        for scope, stem, fact, kind in start:
            _write(paths.store_dir(scope) / f"{stem}.md", kind, fact)  # type: ignore[arg-type]
        memory = Memory(paths)
        for store in memory.stores.all():
            assert store.index is not None
            store.index.create = True
        list_memory(memory)  # records every row
        for store in memory.stores.all():
            assert store.index is not None
            store.index.names()  # an empty store's index too (the listing opens none)
        memory.close()
        for scope, stem, what, fact in later:
            target = paths.store_dir(scope) / f"{stem}.md"  # type: ignore[arg-type]
            if what == "delete":
                target.unlink(missing_ok=True)
            else:
                _write(target, "garbage" if what == "garbage" else "fact", fact)
        clock = Clock(NOW)
        printed, lines = _printed_both(paths, clock)
        expected = _expected_json(paths, clock)
        if _odd_scope(paths):
            assert printed is None and lines is None  # the stable sort across stores decides
            return
        assert printed is not None and lines is not None
        full = list_memory(_unindexed(paths))
        assert printed.total == lines.total == len(full.facts)
        body = b'{\n  "facts": [\n    ' + printed.text + b"\n  ]\n}" if printed.total else (
            b'{\n  "facts": []\n}'
        )
        assert body == expected
        assert lines.text.decode() == "\n".join(f"  {line}" for line in listed_lines(full.facts,
                                                                                      clock))
        assert printed.diagnostics == lines.diagnostics == full.diagnostics
    finally:
        derived_index.RACY_NS = saved
        printed_listing.CHUNK_ROWS = CHUNK_ROWS
        shutil.rmtree(base, ignore_errors=True)


def _unindexed(paths: EnginePaths) -> Memory:
    memory = Memory(paths)
    for store in memory.stores.all():
        store.index = None
    return memory


@pytest.fixture()
def paths(tmp_path: Path) -> EnginePaths:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=ws, root=ws)
    memory = Memory(paths)
    for i in range(4):
        memory.save(name=f"fact-{i}", description=f"Fact «{i}»", body="Body.", type="project")
    memory.save(name="pref", description="Pref", body="Tabs.", type="user", scope="global")
    memory.close()
    (paths.project_store / "broken.md").write_bytes(b"---\nnot: [yaml\n---\n")
    return paths


def test_the_memory_summary_printed_by_the_index_is_the_summary(paths: EnginePaths) -> None:
    clock = Clock()
    with mock.patch.object(listed, "Clock", lambda: clock):
        catalog = LocalCatalog(paths)
        try:
            printed = summary_printed(catalog)
        finally:
            catalog.close()
        unindexed = LocalCatalog(paths, memory=_unindexed(paths))
        _, text = summary(unindexed)
    assert printed is not None
    assert b"".join(printed).decode() == text
    assert "  ! " in text and "Facts (5):" in text


def test_a_home_without_an_index_prints_nothing_this_way_and_writes_nothing(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=ws, root=ws)
    paths.project_store.mkdir(parents=True)
    fact = Fact(id="mem-" + "d" * 32, revision=1, name="n", title="", description="d",
                type="project", scope="project", body="b")
    (paths.project_store / "n.md").write_bytes(render_fact(fact))
    before = sorted(p for p in tmp_path.rglob("*"))
    catalog = LocalCatalog(paths)
    try:
        assert printed_facts(catalog, "json", Clock()) is None
    finally:
        catalog.close()
    assert sorted(p for p in tmp_path.rglob("*")) == before


@settings(max_examples=200)
@given(fact=facts)
def test_the_stored_head_and_stamp_print_what_the_formatter_prints(fact: Fact) -> None:
    clock = Clock(NOW)
    created = None if fact.created_at is None else fact.created_at.isoformat()
    updated = None if fact.updated_at is None else fact.updated_at.isoformat()
    head = json_head(fact.id, fact.revision, fact.name, fact.title, fact.description, fact.type,
                     fact.scope, created, updated)
    assert head is not None
    expected = clock.freshness(fact.type, updated or created)
    # The freshness SQL compares stamp_us with the clock's edges in microseconds.
    now, edges, default = clock.edges()
    stamp = stamp_us(created, updated)
    fresh_edge, current_edge = edges.get(fact.type, default)
    from context_engine.facts.rendered import micros

    if stamp is None or stamp > micros(now):
        got = "current"
    elif stamp >= micros(fresh_edge):
        got = "fresh"
    elif stamp >= micros(current_edge):
        got = "current"
    else:
        got = "stale"
    assert got == expected
    item = json.loads(head + json_tail(got, ""))
    assert item == next(listed_json([_listed(fact)], clock))


def _listed(fact: Fact) -> object:
    from context_engine.facts.listing import ListedFact

    return ListedFact.of(fact)


def test_a_deleted_fact_of_the_other_scope_does_not_stop_the_printing(tmp_path: Path) -> None:
    """Its row (a declared scope of the other store) goes before the scope check counts it."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=ws, root=ws)
    odd = Fact(id="mem-" + "a" * 32, revision=1, name="alpha", title="", description="",
               type="user", scope="project", body="")
    _write(paths.global_store / "alpha.md", "fact", odd)
    _write(paths.project_store / "kept.md", "fact",
           Fact(id="mem-" + "b" * 32, revision=1, name="kept", title="", description="Kept",
                type="user", scope="project", body="Kept."))
    memory = Memory(paths)
    for store in memory.stores.all():
        assert store.index is not None
        store.index.create = True
    list_memory(memory)  # records both rows
    memory.close()
    (paths.global_store / "alpha.md").unlink()
    clock = Clock(NOW)
    catalog = LocalCatalog(paths)
    try:
        printed = printed_facts(catalog, "json", clock)
    finally:
        catalog.close()
    assert printed is not None and printed.total == 1
    assert b'{\n  "facts": [\n    ' + printed.text + b"\n  ]\n}" == _expected_json(paths, clock)


def _chunked_home(tmp_path: Path) -> EnginePaths:
    """Both stores, names shared across them and within one (ties at the chunk bounds)."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=ws, root=ws)
    n = 0
    for scope, stems in (("project", ["b", "d", "d2", "f", "h", "j", "k"]),
                         ("global", ["a", "d", "e", "k", "z"])):
        for stem in stems:
            n += 1
            name = stem.rstrip("2")  # d2.md declares the name "d" too
            fact = Fact(id=f"mem-{n:032x}", revision=1, name=name, title="",
                        description=f"{scope} {stem} «é»", type="project", scope=scope,
                        body="Body.", updated_at=NOW - timedelta(days=n))
            _write(paths.store_dir(scope) / f"{stem}.md", "fact", fact)  # type: ignore[arg-type]
    memory = Memory(paths)
    for store in memory.stores.all():
        assert store.index is not None
        store.index.create = True
    list_memory(memory)  # records every row
    memory.close()
    return paths


def _list_json(paths: EnginePaths, capsys: pytest.CaptureFixture[str]) -> bytes:
    """``context-engine --json list`` as the plain command line runs it, its stdout."""
    from context_engine.cli import fast

    capsys.readouterr()
    argv = ["--home", str(paths.home), "--workspace", str(paths.workspace), "--json", "list"]
    plain = fast.plain_command(argv)
    assert plain is not None
    clock = Clock(NOW)
    with mock.patch.object(listed, "Clock", lambda: clock), \
            mock.patch.dict(sys.modules, {"click": None}):
        del sys.modules["click"]  # as in a process that never loaded click: streamed
        assert fast.run(plain) == 0
    return capsys.readouterr().out.encode()


@pytest.mark.parametrize("chunk", [1, 2, 5, 2048])
def test_list_json_streamed_in_chunks_is_the_full_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    chunk: int,
) -> None:
    paths = _chunked_home(tmp_path)
    monkeypatch.setattr(printed_listing, "CHUNK_ROWS", chunk)
    assert _list_json(paths, capsys) == _expected_json(paths, Clock(NOW)) + b"\n"
    taken: list[bytes] = []
    catalog = LocalCatalog(paths)
    try:
        printed = printed_facts(catalog, "json", Clock(NOW), taken.append)
    finally:
        catalog.close()
    assert printed is not None and printed.total == 12 and printed.chunks == []
    assert (len(taken) > 1) == (chunk < 12)  # handed on as printed, none kept


def test_list_json_broken_off_mid_way_ends_with_the_full_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row the template cannot write after chunks went out: the rest from a full parse."""
    import sqlite3

    monkeypatch.setattr(derived_index, "RACY_NS", -(10**18))  # the rows count as settled
    paths = _chunked_home(tmp_path)
    monkeypatch.setattr(printed_listing, "CHUNK_ROWS", 2)
    memory = Memory(paths)
    index = memory.stores.project.index
    assert index is not None
    target = index.path
    memory.close()
    with sqlite3.connect(target) as db:
        db.execute("UPDATE files SET json_head = NULL WHERE name = 'j.md'")
    catalog = LocalCatalog(paths)
    taken: list[bytes] = []
    try:
        assert printed_facts(catalog, "json", Clock(NOW), taken.append) is None
    finally:
        catalog.close()
    assert taken  # j.md's row is not in the first chunk
    assert _list_json(paths, capsys) == _expected_json(paths, Clock(NOW)) + b"\n"


def test_a_nul_in_a_printed_field_is_printed(tmp_path: Path) -> None:
    """YAML writes a NUL as ``\\0``: the lines keep it (``printf``'s ``%s`` would stop there)."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=ws, root=ws)
    fact = Fact(id="mem-" + "e" * 32, revision=2, name="nul\x00name", title="t\x00",
                description="before\x00after", type="user", scope="project", body="b")
    _write(paths.project_store / "nul.md", "fact", fact)
    memory = Memory(paths)
    for store in memory.stores.all():
        assert store.index is not None
        store.index.create = True
    list_memory(memory)
    memory.close()
    clock = Clock(NOW)
    printed, lines = _printed_both(paths, clock)
    assert printed is not None and lines is not None
    full = list_memory(_unindexed(paths))
    assert lines.text.decode() == "\n".join(f"  {line}" for line in listed_lines(full.facts,
                                                                                  clock))
    assert b"before\x00after" in lines.text
    assert b'{\n  "facts": [\n    ' + printed.text + b"\n  ]\n}" == _expected_json(paths, clock)
