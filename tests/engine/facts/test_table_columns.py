"""The table's rows straight from the derived index, then checked against the files
(facts/table_columns.py): shown rows equal a full listing once checked, whatever changed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.ops import Person, Save
from context_engine.facts.memory import Memory
from context_engine.facts.table_columns import (
    FactColumns,
    indexed_columns,
    list_columns,
    validated_columns,
)
from support.store import make_paths, settle_all

FIELDS = ("store", "file", "id", "revision", "name", "title", "description", "type", "scope",
          "created", "updated")


def _saved(tmp_path: Path, count: int) -> LocalCatalog:
    catalog = LocalCatalog(make_paths(tmp_path))
    for i in range(count):
        scope = "global" if i % 3 == 0 else "project"
        # Names shared across the stores: the two stores' rows interleave in listing order.
        catalog.apply(Save(name=f"{scope}/fact-{i // 2:02d}.md", description=f"Fact {i}",
                           title=f"Title {i}", body=f"Body {i} text.",
                           type="project" if scope == "project" else "user", scope=scope),
                      Person("cli"))
    return catalog


def _stores(paths: Any) -> list[Any]:
    return list(Memory(paths).stores.all())  # a fresh process's stores


def _shown(cols: FactColumns, idents: bool = True) -> list[tuple[Any, ...]]:
    names = (*FIELDS, "ident") if idents else FIELDS
    return list(zip(*(list(getattr(cols, n)) for n in names), strict=True))


def _diagnostics(cols: FactColumns) -> list[tuple[str, str]]:
    return [(d.code, str(d.path)) for d in cols.diagnostics]


def test_indexed_rows_are_the_listing_and_read_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    paths = _saved(tmp_path, 12).paths
    expected = list_columns(_stores(paths))
    stores = _stores(paths)
    for store in stores:
        assert store.index is not None
        store.index._open()  # the index file itself is opened as before
    calls: list[str] = []

    def refuse(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            raise AssertionError(f"{name} of a fact file")
        return call

    for name in ("lstat", "scandir", "stat"):
        monkeypatch.setattr(os, name, refuse(name))
    indexed = indexed_columns(stores)
    monkeypatch.undo()
    assert calls == []
    assert indexed is not None
    assert _shown(indexed.cols, idents=False) == _shown(expected, idents=False)
    assert len(set(indexed.cols.store)) == 2  # both stores, in one listing order


@pytest.mark.slow
def test_a_first_page_holds_the_listing_s_first_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    paths = _saved(tmp_path, 12).paths
    expected = _shown(list_columns(_stores(paths)), idents=False)
    page = indexed_columns(_stores(paths), limit=3)
    assert page is not None
    rows = _shown(page.cols, idents=False)
    assert 3 <= len(rows) <= 6 and rows == sorted(rows, key=expected.index)
    assert rows[:3] == expected[:3]  # each store's first three: the listing's first three


@pytest.mark.slow
def test_checked_rows_keep_the_very_lists_when_every_file_vouches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    paths = _saved(tmp_path, 9).paths
    expected = list_columns(_stores(paths))
    stores = _stores(paths)
    indexed = indexed_columns(stores)
    assert indexed is not None
    checked = validated_columns(stores, indexed)
    assert checked.file is indexed.cols.file and checked.title is indexed.cols.title
    assert _shown(checked) == _shown(expected)


def _in_place_edit(store: Path) -> None:
    victim = store / "fact-01.md"
    st = victim.stat()
    data = victim.read_bytes()
    victim.write_bytes(data.replace(b"Fact 1", b"Fact Z"))  # same size, mtime put back
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))


def _new_file(store: Path) -> None:
    (store / "outside.md").write_bytes((store / "fact-02.md").read_bytes().replace(
        b"fact-02", b"outside"))


def _removed(store: Path) -> None:
    (store / "fact-02.md").unlink()


def _garbage(store: Path) -> None:
    (store / "broken.md").write_bytes(b"---\nrevision: abc\nid: x\n---\nb\n")


def _symlink(store: Path) -> None:
    (store / "link.md").symlink_to(store / "fact-03.md")


@pytest.mark.slow
@pytest.mark.parametrize("change", [_in_place_edit, _new_file, _removed, _garbage, _symlink])
def test_checked_rows_equal_a_full_listing_after_an_outside_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Any
) -> None:
    settle_all(monkeypatch)
    paths = _saved(tmp_path, 9).paths
    (paths.project_store / "old-broken.md").write_bytes(b"---\nid: [\n---\n")
    list_columns(_stores(paths))  # the index records the unparsable file too
    stores = _stores(paths)
    indexed = indexed_columns(stores)
    assert indexed is not None
    change(paths.project_store)  # after the rows were shown, before the files are checked
    checked = validated_columns(stores, indexed)
    expected = list_columns(_stores(paths))
    assert _shown(checked) == _shown(expected)
    assert _diagnostics(checked) == _diagnostics(expected)
    if change is not _symlink:  # a symlink is no fact: the rows shown stay, with its note
        assert checked.file is not indexed.cols.file  # a changed store is listed again


@pytest.mark.slow
@pytest.mark.parametrize("garbage", [False, True])
def test_a_row_recorded_again_after_it_was_shown_is_not_vouched_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, garbage: bool
) -> None:
    settle_all(monkeypatch)
    paths = _saved(tmp_path, 9).paths
    stores = _stores(paths)
    indexed = indexed_columns(stores)
    assert indexed is not None
    # Another program rewrites a file, and another process records its row at once: the
    # file's identity then equals its (new) row, but the row shown is the old one.
    victim = paths.project_store / "fact-01.md"
    data = victim.read_bytes()
    victim.write_bytes(b"---\nid: [\n---\n" if garbage else data.replace(b"Title 2", b"Title Q"))
    list_columns(_stores(paths))
    checked = validated_columns(stores, indexed)
    expected = list_columns(_stores(paths))
    assert _shown(checked) == _shown(expected)
    assert _diagnostics(checked) == _diagnostics(expected)
    assert "Title 2" not in checked.title
    assert ("Title Q" in checked.title) is not garbage


def test_no_indexed_row_is_no_table(tmp_path: Path) -> None:
    paths = make_paths(tmp_path)
    assert indexed_columns(_stores(paths)) is None  # a home without an index: listed as before


def _never_indexed(tmp_path: Path, project: int, global_: int) -> Any:
    """A home whose stores were written by another program: files only, no derived index."""
    from context_engine.facts.codec import render_fact
    from context_engine.facts.model import Fact

    paths = make_paths(tmp_path)
    for store, scope, count in ((paths.project_store, "project", project),
                                (paths.global_store, "global", global_)):
        store.mkdir(parents=True, exist_ok=True)
        for i in range(count):
            # Names shared across the stores: their rows interleave in listing order.
            fact = Fact(f"mem-{scope}-{i:08d}", 1, f"fact-{i:05d}", f"Title {i}",
                        f"Fact {i}", "project" if scope == "project" else "user", scope,
                        f"Body {i} text.")
            (store / f"fact-{i:05d}.md").write_bytes(render_fact(fact))
    # Read in the last batch of its store: a diagnostic among the batched rows.
    (paths.project_store / "zz-broken.md").write_bytes(b"---\nid: [\n---\n")
    return paths


def _host_stores(paths: Any) -> list[Any]:
    """A fresh host's stores (the app, a hook): it creates the derived index when missing."""
    stores = _stores(paths)
    for store in stores:
        store.index.create = True
    return stores


def _checked_ns(store: Any) -> set[int]:
    with store.index._using() as db:
        return {row[0] for row in db.execute("SELECT DISTINCT checked_ns FROM files")}


def test_a_first_listing_commits_batches_as_it_reads_and_an_interrupted_one_keeps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue: long work shows progress and can be interrupted without harm."""
    from context_engine.facts import table_columns

    batch = table_columns._BATCH
    settle_all(monkeypatch)
    project, global_ = 2 * batch + 400, 600
    paths = _never_indexed(tmp_path, project, global_)
    total = project + 1 + global_
    assert indexed_columns(_stores(paths)) is None  # never indexed
    # Today's listing: every file parsed in one go, nothing recorded anywhere.
    with monkeypatch.context() as m:
        m.setattr(table_columns, "_BATCH", 10**9)
        unindexed = _stores(paths)
        for store in unindexed:
            store.index = None
        expected = list_columns(unindexed)
    assert len(expected) == project + global_ and len(expected.diagnostics) == 1

    # A first read stopped by its caller after the second batch (a cancel, a closed window).
    seen: list[tuple[int, int]] = []

    class Stop(Exception):
        pass

    def stop_after_two(done: int, of: int) -> None:
        seen.append((done, of))
        if len(seen) == 2:
            raise Stop()

    with pytest.raises(Stop):
        list_columns(_host_stores(paths), progress=stop_after_two)
    assert seen == [(batch, total), (2 * batch, total)]
    # What it committed is there for any other reader (the app's table from the index).
    partial = indexed_columns(_stores(paths))
    assert partial is not None and len(partial.cols) >= 2 * batch
    assert set(_shown(partial.cols, idents=False)) <= set(_shown(expected, idents=False))

    # The next read parses only the rest, and lists exactly what one read of it all lists.
    seen.clear()
    stores = _host_stores(paths)
    listed = list_columns(stores, progress=lambda done, of: seen.append((done, of)))
    rest = total - 2 * batch  # the project store's last 401 files, then the global 600
    assert seen == [(401, rest), (rest, rest)]
    assert _shown(listed) == _shown(expected)
    assert _diagnostics(listed) == _diagnostics(expected)
    # Every batch of a store is recorded as of the moment its scan began (the racy rule).
    assert [len(_checked_ns(store)) for store in stores] == [2, 1]  # two reads of project
    again = _host_stores(paths)
    reread: list[tuple[int, int]] = []
    assert _shown(list_columns(again, progress=lambda *a: reread.append(a))) == _shown(expected)
    assert reread == []  # every file vouched for by its row


def test_a_first_listing_reports_increasing_counts_up_to_the_total(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.facts import table_columns

    monkeypatch.setattr(table_columns, "_BATCH", 7)
    paths = _never_indexed(tmp_path, 30, 10)
    seen: list[tuple[int, int]] = []
    stores = _host_stores(paths)
    listed = list_columns(stores, progress=lambda done, of: seen.append((done, of)))
    assert [done for done, _ in seen] == [7, 14, 21, 28, 31, 38, 41]  # per store, per batch
    assert {of for _, of in seen} == {41}
    assert len(listed) == 40
    # Files written just now are racy: every batch recorded them as of the scan's start,
    # so the next read does not trust those rows and reads every file again.
    assert [len(_checked_ns(store)) for store in stores] == [1, 1]
    seen.clear()
    assert _shown(list_columns(_host_stores(paths), progress=lambda d, o: seen.append((d, o)))) \
        == _shown(listed)
    assert seen and seen[-1] == (41, 41)
