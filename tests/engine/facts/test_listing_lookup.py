"""``list`` and ``read`` through the derived index: the answer of a full parse, at a lookup's cost.

The listing takes trusted rows' list fields (no body, no ``Fact``) and parses only changed
files; a read validates the one file it returns, and the duplicate and shadowing rules of the
ref resolver (first by id, own file, first claimant by name) stay exactly those of a full parse.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from context_engine.errors import ContextEngineError
from context_engine.facts import derived_index
from context_engine.facts.listing import ListedFact, list_memory
from context_engine.facts.memory import Memory
from context_engine.facts.store import Store
from context_engine.paths import EnginePaths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.index import edit_in_place_same_size, full_parse_resolve, raw_fact, replace_raw
from support.store import settle_all


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
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = Store._read_entry

    def spy(self: Store, path: Path, st: os.stat_result) -> object:
        seen.append(path.name)
        return real(self, path, st)

    monkeypatch.setattr(Store, "_read_entry", spy)
    return seen


def full_listing(paths: EnginePaths) -> tuple[list[ListedFact], list[tuple[object, ...]]]:
    memory = Memory(paths)
    for store in memory.stores.all():
        store.index = None
    snap = memory.snapshot()
    return ([ListedFact.of(f) for f in snap.facts],
            [(d.code, d.path, d.message, d.line) for d in snap.diagnostics])


def listed(paths: EnginePaths) -> tuple[list[ListedFact], list[tuple[object, ...]]]:
    found = list_memory(Memory(paths))
    return found.facts, [(d.code, d.path, d.message, d.line) for d in found.diagnostics]


def test_a_settled_listing_parses_nothing_reads_no_body_and_builds_no_fact(
    paths: EnginePaths, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    assert listed(paths) == full_listing(paths)  # records every row (the writes were racy)
    parses.clear()
    statements: list[str] = []
    built: list[object] = []
    real_item = derived_index._item
    monkeypatch.setattr(derived_index, "_item", lambda *a: built.append(a) or real_item(*a))
    memory = Memory(paths)
    for store in memory.stores.all():
        db = store.index._open() if store.index is not None else None
        assert db is not None
        db.set_trace_callback(statements.append)
    found = list_memory(memory)
    assert [f.name for f in found.facts] == ["fact-0", "fact-1", "fact-2", "fact-3", "fact-4",
                                             "pref"]
    assert parses == [] and built == []
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    rows = [s for s in selects if " FROM files" in s]
    assert len(rows) == 2 and not any("body" in s for s in selects)  # one query per store


def test_the_listing_sees_every_kind_of_change_and_parses_only_those_files(
    paths: EnginePaths, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    listed(paths)
    store = paths.project_store
    one = store / "fact-1.md"
    replace_raw(one, one.read_bytes().replace(b"Fact 1", b"Fact one, replaced"))
    assert edit_in_place_same_size(store / "fact-3.md", b"Fact 3", b"Fact X")
    (store / "fact-2.md").unlink()
    (store / "created.md").write_bytes(raw_fact("created", "By an editor.", id_hex="a" * 32))
    (store / "broken.md").write_bytes(b"---\nname: [oops\n---\nbody\n")
    (store / "link.md").symlink_to(store / "fact-0.md")
    parses.clear()
    got = listed(paths)
    assert sorted(parses) == ["broken.md", "created.md", "fact-1.md", "fact-3.md"]
    assert got == full_listing(paths)  # (parses every file itself)
    assert [d[0] for d in got[1]] == ["yaml_syntax", "symlink"]
    assert any(f.description == "Fact X" for f in got[0])
    parses.clear()
    again = listed(paths)
    assert parses == []  # the changes were recorded: the next listing parses nothing
    assert again == full_listing(paths)


def test_recent_rows_are_never_trusted_by_the_listing(
    paths: EnginePaths, parses: list[str]
) -> None:
    listed(paths)
    store = paths.project_store
    assert edit_in_place_same_size(store / "fact-4.md", b"Fact 4", b"Fact Y")
    parses.clear()
    got = listed(paths)
    assert "fact-4.md" in parses
    assert got == full_listing(paths)


# -- read: the resolver's rules, through the index ---------------------------------------------

NAMES = ("alpha", "beta", "gamma")
IDS = ("a" * 32, "b" * 32, "c" * 32)
# One file: (file stem, frontmatter name, id, scope); several may share a name or an id.
files = st.lists(
    st.tuples(st.sampled_from(("alpha", "beta", "gamma", "copy", "old")),
              st.sampled_from(NAMES), st.sampled_from(IDS), st.sampled_from(("project", "global"))),
    min_size=1,
    max_size=6,
    unique_by=lambda f: (f[0], f[3]),
)
# Later edits by other programs: (kind, which file — an existing one when that number is
# below the count of files, else a new stem —, new frontmatter name, new id).
later = st.lists(st.tuples(st.sampled_from(("in-place", "replace", "delete", "create")),
                           st.integers(0, 7), st.sampled_from(NAMES), st.sampled_from(IDS)),
                 min_size=1, max_size=4)
refs = st.sampled_from(
    [*NAMES, *(f"mem-{i}" for i in IDS), "project/alpha.md", "global/beta", "copy", "missing"]
)


def _outcome(memory: Memory, ref: str, *, full_parse: bool) -> object:
    try:
        loaded = full_parse_resolve(memory, ref) if full_parse else memory.load(ref)
    except ContextEngineError as exc:
        return type(exc).__name__, str(exc)
    return loaded.path, loaded.data, loaded.parsed, loaded.digest


def _write(root: Path, stem: str, name: str, fact_id: str, body: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{stem}.md").write_bytes(raw_fact(name, body, id_hex=fact_id))


@pytest.mark.slow  # many stores
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=files, changes=later, settled=st.booleans(), ref_list=st.lists(refs, max_size=5))
def test_read_resolves_like_a_full_parse(
    start: list[tuple[str, str, str, str]],
    changes: list[tuple[str, int, str, str]],
    settled: bool,
    ref_list: list[str],
) -> None:
    base = Path(tempfile.mkdtemp(prefix="ce-lookup-"))
    saved = derived_index.RACY_NS
    try:
        if settled:
            derived_index.RACY_NS = -(10**18)
        ws = base / "ws"
        ws.mkdir()
        paths = EnginePaths.resolve(home=base / "home", workspace=ws, root=ws)
        for stem, name, fact_id, scope in start:
            _write(paths.store_dir(scope), stem, name, fact_id, f"Body of {stem}.")  # type: ignore[arg-type]
        memory = Memory(paths)
        for store in memory.stores.all():
            assert store.index is not None
            store.index.create = True
        list_memory(memory)  # records every row
        existing = [paths.store_dir(scope) / f"{stem}.md" for stem, _, _, scope in start]  # type: ignore[arg-type]
        for kind, which, name, fact_id in changes:
            target = existing[which] if which < len(existing) else (
                paths.project_store / ("alpha", "copy", "old", "zeta")[which % 4]
            ).with_suffix(".md")
            if kind == "in-place" and target.exists():
                data = target.read_bytes()
                old = next((n.encode() for n in NAMES if f"name: {n}\n".encode() in data), b"")
                new = name.encode()
                if old and len(old) == len(new):
                    edit_in_place_same_size(target, b"name: " + old, b"name: " + new)
            elif kind == "replace" and target.exists():
                replace_raw(target, raw_fact(name, "Replaced.", id_hex=fact_id))
            elif kind == "delete":
                target.unlink(missing_ok=True)
            elif kind == "create" and not target.exists():
                _write(target.parent, target.stem, name, fact_id, "Created elsewhere.")
        plain = Memory(paths)
        for store in plain.stores.all():
            store.index = None
        for ref in [*ref_list, *(f"mem-{i}" for i in IDS), *NAMES]:
            expected = _outcome(plain, ref, full_parse=True)
            assert _outcome(Memory(paths), ref, full_parse=False) == expected, ref
    finally:
        derived_index.RACY_NS = saved
        shutil.rmtree(base, ignore_errors=True)


def test_read_by_name_validates_one_file_and_parses_nothing_when_settled(
    paths: EnginePaths, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    list_memory(Memory(paths))
    parses.clear()
    lstats: list[str] = []
    real = os.lstat

    def spy(path: object, *args: object, **kwargs: object) -> os.stat_result:
        lstats.append(str(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    listings: list[object] = []
    real_listdir, real_scandir = os.listdir, os.scandir
    monkeypatch.setattr(os, "lstat", spy)
    monkeypatch.setattr(os, "listdir", lambda *a: listings.append(a) or real_listdir(*a))
    monkeypatch.setattr(os, "scandir", lambda *a: listings.append(a) or real_scandir(*a))
    loaded = Memory(paths).load("project/fact-2.md")
    assert loaded.fact.body.startswith("Body 2.") and loaded.fact.name == "fact-2"
    assert parses == [] and listings == []  # no directory listed, no file parsed
    assert {p for p in lstats if p.endswith(".md")} <= {str(loaded.path)}


def test_read_sees_an_in_place_edit_of_a_settled_file(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    list_memory(Memory(paths))
    target = paths.project_store / "fact-0.md"
    assert edit_in_place_same_size(target, b"Body 0.", b"Body Z.")
    db = sqlite3.connect(derived_index.index_path(paths, "project"))
    assert db.execute("SELECT body FROM files WHERE name = 'fact-0.md'").fetchone()[0].startswith(
        "Body 0."
    )  # the row still holds the old body: the identity (ctime) tells it apart
    db.close()
    assert "Body Z." in Memory(paths).load("fact-0").fact.body
