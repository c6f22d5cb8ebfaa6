"""The body-less table listing (facts/table_listing.py) equals a full parse of the files."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.ops import Person, Save
from context_engine.facts import store as store_module
from context_engine.facts.memory import Memory
from context_engine.facts.table_listing import first_rows, list_stores
from support.store import make_paths, settle_all


def _saved(tmp_path: Path, count: int) -> LocalCatalog:
    catalog = LocalCatalog(make_paths(tmp_path))
    for i in range(count):
        scope = "global" if i % 3 == 0 else "project"
        catalog.apply(Save(name=f"{scope}/fact-{i:02d}.md", description=f"Fact {i}",
                           body=f"Body {i} text.", type="project" if scope == "project" else "user",
                           scope=scope), Person("cli"))
    return catalog


def _expected(paths: object) -> tuple[list[object], object, dict[Path, str]]:
    """A fresh process's full snapshot: facts without body and extra, diagnostics, bodies."""
    snapshot = Memory(paths).snapshot()  # type: ignore[arg-type]
    facts = [dataclasses.replace(f, body="", extra=()) for f in snapshot.facts]
    return facts, snapshot.diagnostics, {f.path: f.body for f in snapshot.facts}  # type: ignore[misc]


def _listed(paths: object) -> tuple[list[object], object, dict[Path, str]]:
    bodies: dict[Path, str] = {}
    memory = Memory(paths)  # type: ignore[arg-type]
    listing = list_stores(memory.stores.all(),
                          lambda fact, body: bodies.__setitem__(fact.path, body))  # type: ignore[arg-type]
    return list(listing.facts), listing.diagnostics, bodies


def test_listing_equals_a_full_parse_after_every_kind_of_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    paths = _saved(tmp_path, 9).paths
    store = paths.project_store
    assert _listed(paths) == _expected(paths)
    # An in-place same-size edit with the mtime restored, a new file nobody indexed, a removed
    # file, a file that does not parse, a symlink.
    victim = store / "fact-01.md"
    st = victim.stat()
    data = victim.read_bytes()
    victim.write_bytes(data.replace(b"Body 1 text.", b"Body X text."))
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    (store / "fact-02.md").rename(store / "moved-in.md")
    (store / "fact-04.md").unlink()
    (store / "broken.md").write_bytes(b"---\nrevision: abc\nid: x\n---\nb\n")
    (store / "link.md").symlink_to(store / "fact-05.md")
    facts, diagnostics, bodies = _listed(paths)
    assert (facts, diagnostics, bodies) == _expected(paths)
    assert bodies[victim] == "Body X text."
    assert {d.path.name for d in diagnostics} == {"broken.md", "link.md"}  # type: ignore[attr-defined]
    assert all(f.body == "" for f in facts)  # type: ignore[attr-defined]
    # Listed again: the index now vouches for the new rows and the diagnostic.
    assert _listed(paths) == (facts, diagnostics, bodies)


def test_the_listing_tells_the_index_so_the_next_one_reads_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    paths = _saved(tmp_path, 6).paths
    (paths.project_store / "fact-01.md").write_bytes(
        (paths.project_store / "fact-01.md").read_bytes().replace(b"Body 1", b"Body 9"))
    reads: list[Path] = []
    real = store_module.Store._read_entry

    def counting(self: store_module.Store, path: Path, st: os.stat_result) -> object:
        reads.append(path)
        return real(self, path, st)

    monkeypatch.setattr(store_module.Store, "_read_entry", counting)
    first = _listed(paths)
    assert [p.name for p in reads] == ["fact-01.md"]  # only the file the index cannot vouch for
    reads.clear()
    assert _listed(paths) == first
    assert reads == []


def test_racy_rows_are_not_trusted(tmp_path: Path) -> None:
    """Without settle_all every file was written just now: each is read, none trusted blindly."""
    paths = _saved(tmp_path, 3).paths
    assert _listed(paths) == _expected(paths)


def test_first_rows_check_each_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settle_all(monkeypatch)
    paths = _saved(tmp_path, 9).paths
    project = Memory(paths).stores.get("project")
    page = first_rows(project, 3)
    assert [f.name for f in page] == ["fact-01", "fact-02", "fact-04"]
    (paths.project_store / "fact-02.md").write_bytes(
        (paths.project_store / "fact-02.md").read_bytes() + b"\n")
    assert [f.name for f in first_rows(project, 3)] == ["fact-01", "fact-04"]


def test_no_index_lists_by_parsing(tmp_path: Path) -> None:
    paths = _saved(tmp_path, 4).paths
    for index_file in paths.state.rglob("*.sqlite*"):
        index_file.unlink()
    assert _listed(paths) == _expected(paths)
    assert not list(paths.state.rglob("*.sqlite"))  # a read never creates the index
