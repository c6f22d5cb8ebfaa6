"""The column table of the Facts tab shows exactly the rows, notes and search results of the
per-row path (``build_rows`` over a full listing), patches included; no Fact per row is kept."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from context_center.services.backend import Backend
from context_center.services.fact_rows import FactFilter, build_rows, filter_rows
from context_center.services.fact_table import (
    Rows,
    _freshness,
    build_table,
    merge_rows,
    name_keys,
    normalized,
    patch_table,
    sort_values,
)
from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.ops import Person, Save
from context_engine.facts.codec import render_fact
from context_engine.facts.equivalence import name_key
from context_engine.facts.freshness import freshness_of
from context_engine.facts.model import Fact, normalize_key
from context_engine.facts.table_columns import FactColumns, list_columns, search_text
from context_engine.facts.table_listing import list_stores
from hypothesis import given
from hypothesis import strategies as st
from support.store import make_paths, settle_all

WHEN = datetime(2026, 11, 20, 8, 30, tzinfo=UTC)


def _write(catalog: LocalCatalog, ref: str, **fields: str) -> None:
    scope = ref.split("/", 1)[0]
    catalog.apply(Save(name=ref, type=fields.pop("type", "project"), scope=scope,
                       description=fields.pop("description", f"About {ref}"),
                       body=fields.pop("body", f"Body of {ref}."), **fields), Person("cli"))


def _home(tmp_path: Path) -> LocalCatalog:
    """Overrides, duplicates, a copied file, an unreadable one, names in several scripts."""
    catalog = LocalCatalog(make_paths(tmp_path))
    _write(catalog, "project/release-target.md", title="Release target",
           body="We deploy from the release branch.")
    _write(catalog, "global/release-target.md", title="Release target", type="user",
           body="Globally the main branch.")
    _write(catalog, "global/only-global.md", title="Tabs", type="feedback",
           description="Use tabs", body="Indent with TABS, ΣΊΣΥΦΟΣ.")
    _write(catalog, "project/twin-one.md", description="The same description")
    _write(catalog, "project/twin-two.md", description="the same  description!")
    _write(catalog, "project/twin-three.md", description="The SAME description")
    _write(catalog, "project/部署-说明.md", title="部署 说明", body="后端 部署 ticket42")
    _write(catalog, "project/straße.md", title="Straße", body="Grüße aus KÖLN")
    catalog.apply(Save(name="global/tabs-rule.md", title="tabs", type="user", scope="global",
                       description="Tabs", body="b"), Person("cli"))
    store = catalog.paths.project_store
    (store / "copy-of-twin.md").write_bytes((store / "twin-one.md").read_bytes())
    (store / "broken.md").write_bytes(b"---\nid: [unclosed\nrevision: x\n---\nbody\n")
    return LocalCatalog(catalog.paths)


def _old_rows(catalog: LocalCatalog) -> list[tuple[object, ...]]:
    listing = list_stores(catalog.memory.stores.all())
    return [_shown(r) for r in build_rows(listing.facts, WHEN, lazy=True)]


def _shown(row: object) -> tuple[object, ...]:
    r = row  # a FactRow
    return (r.fact, str(r.fact.path), r.fact.stamp, r.freshness, r.note,  # type: ignore[attr-defined]
            r.overridden, r.conflict, r.updated)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_rows_and_notes_equal_the_per_row_path(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    settle_all(monkeypatch)
    catalog = _home(tmp_path)
    catalog.memory.snapshot()  # the index records every file (as any hook or write does)
    stores = catalog.memory.stores.all()
    cols = list_columns(stores)
    assert not cols.texts  # every row vouched for by the index: no text held per row
    table = build_table(cols, WHEN)
    rows = Rows(table)
    assert [_shown(r) for r in rows] == _old_rows(catalog)
    old = list_stores(stores).diagnostics
    assert tuple(cols.diagnostics) == old and [d.path.name for d in old] == ["broken.md"]
    assert any("Conflict: 2 files have the same id" in n for n in table.notes.values())
    assert any(n.startswith("Overridden: the project fact project/release-target.md")
               for n in table.notes.values())
    assert any("Possible duplicate of" in n for n in table.notes.values())


@pytest.mark.slow
def test_unindexed_files_are_parsed_and_searched_in_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settle_all(monkeypatch)
    catalog = _home(tmp_path)
    for index_file in catalog.paths.state.rglob("*.sqlite*"):
        index_file.unlink()
    catalog = LocalCatalog(catalog.paths)
    cols = list_columns(catalog.memory.stores.all())
    assert len(cols.texts) == len(cols)  # no index vouched: each parsed row keeps its text
    assert [_shown(r) for r in Rows(build_table(cols, WHEN))] == _old_rows(catalog)


SEARCHED = ["release", "branch", "部署", "ticket42 后端", "köln", "STRASSE", "straße",
            "σίσυφος", "tabs", "global", "project", "zzz", "same description", "ab%", "_"]


@pytest.mark.slow
def test_search_through_the_index_finds_what_the_search_text_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settle_all(monkeypatch)
    catalog = _home(tmp_path)
    full = catalog.memory.snapshot()
    backend = Backend(catalog)
    snapshot = backend.listed_table()
    assert snapshot is not None and snapshot.columns
    every = build_rows(full.facts, WHEN)
    for text in SEARCHED:
        criteria = FactFilter(text=text)
        expected = [r.fact.reference for r in filter_rows(every, criteria)]
        found = [r.fact.reference for r in filter_rows(snapshot.rows, criteria)]
        assert found == expected, text
        # Narrowing (typing on) finds the same.
        narrowed = snapshot.rows.filtered(criteria).filtered(  # type: ignore[attr-defined]
            criteria, narrowing=True)
        assert [r.fact.reference for r in narrowed] == expected, text
        # Phase one (no query): what the fields held as columns hold, every body left out.
        words = text.lower().split()
        own = [r.fact.reference for r in every if all(w in search_text(
            r.fact.name, r.fact.title, r.fact.description, "", r.fact.type, r.fact.scope)
            for w in words)]
        fields = snapshot.rows.filtered_fields(criteria)  # type: ignore[attr-defined]
        assert [r.fact.reference for r in fields] == own, text
        assert set(own) <= set(expected), text
    # Bodies add rows the fields do not hold ("branch", "köln" are only in bodies).
    for text in ("branch", "köln"):
        fields = snapshot.rows.filtered_fields(FactFilter(text=text))  # type: ignore[attr-defined]
        assert len(fields) == 0 and len(filter_rows(snapshot.rows, FactFilter(text=text))) > 0


@pytest.mark.slow
@pytest.mark.parametrize("word", ["branch", "köln"])  # LIKE, and the registered lower()
def test_a_superseded_body_search_aborts_its_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, word: str) -> None:
    """The progress handler asks ``cancelled`` while SQLite scans: a true answer stops it."""
    from context_engine.facts import table_columns
    from context_engine.facts.table_columns import SearchInterrupted

    settle_all(monkeypatch)
    catalog = _home(tmp_path)
    catalog.memory.snapshot()
    backend = Backend(catalog)
    assert backend.listed_table() is not None  # the indexes are open, as in the window
    assert backend.search([word], None, lambda: False)[0]  # found when still wanted
    monkeypatch.setattr(table_columns, "_PROGRESS_STEPS", 1)  # asked at every VM step
    asked: list[int] = []

    def cancelled() -> bool:
        asked.append(1)
        return True

    with pytest.raises(SearchInterrupted):
        backend.search([word], None, cancelled)
    assert asked


@pytest.mark.slow
def test_a_patch_gives_the_table_of_a_full_listing(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    settle_all(monkeypatch)
    catalog = _home(tmp_path)
    catalog.memory.snapshot()
    stores = catalog.memory.stores.all()
    table = build_table(list_columns(stores), WHEN)
    shown = Rows(table).sorted_by(1, False)
    store = catalog.paths.project_store
    # A new twin, a removed override winner, an edited fact, a copy removed.
    twin = Fact("mem-new-twin", 1, "twin-four", "", "the same description", "project",
                "project", "new words", WHEN, WHEN)
    (store / "twin-four.md").write_bytes(render_fact(twin))
    (store / "release-target.md").unlink()
    (store / "copy-of-twin.md").unlink()
    edited = catalog.memory.resolve("project/straße.md")
    (store / "straße.md").write_bytes(render_fact(
        Fact(edited.id, edited.revision + 1, edited.name, "Straße neu", edited.description,
             "project", "project", "changed body", WHEN, WHEN)))
    from context_center.services.fact_delta import read_changed

    paths = [store / n for n in ("twin-four.md", "release-target.md", "copy-of-twin.md",
                                 "straße.md")]
    result = patch_table(table, read_changed(stores, [str(p) for p in paths]), WHEN)
    assert result.changed
    patched = Rows(result.table)
    assert sorted(map(_shown, patched), key=str) == sorted(_old_rows(catalog), key=str)
    merged = merge_rows(shown, result.table, result, 1, False)
    assert [r.fact.reference for r in merged] == \
        [r.fact.reference for r in patched.sorted_by(1, False)]
    # New words are found in memory (the patched file's body is not in the listed index).
    assert [r.fact.name for r in patched.filtered(FactFilter(text="changed body"))] == \
        ["straße"]
    # The echo of the same files changes nothing.
    again = patch_table(result.table, read_changed(stores, [str(paths[0])]), WHEN)
    assert not again.changed


@pytest.mark.slow
def test_an_unchanged_relisting_keeps_the_table_on_screen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settle_all(monkeypatch)
    catalog = _home(tmp_path)
    catalog.memory.snapshot()
    backend = Backend(LocalCatalog(catalog.paths))
    first = backend.listed_table()
    assert first is not None
    assert backend.listed_table(previous=first) is first  # F5, nothing changed: no new table
    target = catalog.paths.project_store / "twin-two.md"
    os.utime(target, ns=(1, 1))  # a new identity: listed again (the strings still shared)
    second = backend.listed_table(previous=first)
    assert second is not None and second is not first
    assert second.rows.table.cols.reused == len(first.rows) - 1  # type: ignore[attr-defined]


@pytest.mark.slow
def test_the_listing_leaves_no_equivalence_key_cache(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from context_engine.facts import equivalence

    settle_all(monkeypatch)
    catalog = _home(tmp_path)
    catalog.memory.snapshot()
    equivalence._KEY_CACHE.clear()
    Backend(LocalCatalog(catalog.paths)).listed_table()
    assert equivalence._KEY_CACHE == {}


text_values = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@pytest.mark.slow
@given(st.lists(text_values, max_size=8))
def test_normalized_keys_equal_one_by_one(values: list[str]) -> None:
    assert normalized(values) == [normalize_key(v) for v in values]
    assert name_keys(values) == [name_key(v) for v in values]


def test_name_keys_of_special_letters() -> None:
    names = ["ΣΊΣΥΦΟΣ", "İstanbul", "straße", "a_b", " x ", "--", "ab-cd", "Kelvin-\u212a",
             "x" * 300, "部署-说明"]
    assert name_keys(names) == [name_key(n) for n in names]


def test_freshness_from_text_equals_freshness_of() -> None:
    from context_engine.facts.freshness import WINDOWS

    moment = datetime(2026, 11, 20, 8, 30, 15, 500_000, tzinfo=UTC)
    stamps: list[str | None] = [None, "1970-01-01T00:00:00+00:00", "1971-01-01T00:00:00+00:00",
                                "2030-01-01T00:00:00+00:00", moment.isoformat(),
                                "2026-11-20T10:30:00+02:00"]
    # Around now and later (the future is "current"), to the second.
    stamps += [(moment.replace(microsecond=0) + timedelta(seconds=s)).isoformat()
               for s in (-1, 0, 1, 2, 86_400 * 400)]
    for fresh, current in WINDOWS.values():
        for edge in (fresh, current):
            at = (moment - edge).replace(microsecond=0)
            stamps += [(at + timedelta(seconds=s)).isoformat() for s in (-1, 0, 1)]
    kinds = ["project", "reference", "user", "feedback", "other"]
    cols = FactColumns()
    for kind in kinds:
        for stamp in stamps:
            cols.type.append(kind)
            cols.updated.append(stamp)
            cols.created.append(None)
    got = _freshness(cols, range(len(cols.type)), moment)
    expected = [freshness_of(k, None if s is None else datetime.fromisoformat(s), moment)
                for k, s in zip(cols.type, cols.updated, strict=True)]
    assert got == expected


@pytest.mark.slow
def test_sort_by_updated_orders_as_the_shown_text(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    settle_all(monkeypatch)
    catalog = _home(tmp_path)
    table = build_table(list_columns(catalog.memory.stores.all()), WHEN)
    values = sort_values(table, 6)
    assert values is not None
    assert [v.replace("T", " ") for v in values] == \
        [table.updated_text(i) for i in range(len(table.cols))]


@pytest.mark.slow
def test_typing_runs_no_search_for_keystrokes_already_superseded(
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each search scans every body in the index: the queued, stale ones are skipped."""
    from context_center.presenters.facts import FactsPresenter
    from context_center.services.hub import Hub
    from context_center.services.tasks import TaskManager
    from context_center.widgets.facts_tab import FactsTab

    settle_all(monkeypatch)
    catalog = _home(tmp_path)
    catalog.memory.snapshot()
    searches: list[tuple[str, ...]] = []

    class Counting(Backend):
        def search(self, words, names=None, cancelled=None):  # type: ignore[no-untyped-def]
            searches.append(tuple(words))
            return super().search(words, names, cancelled)

    tab = FactsTab()
    qtbot.addWidget(tab)
    tasks = TaskManager(readers=1)
    presenter = FactsPresenter(tab, Counting(LocalCatalog(catalog.paths)), tasks, Hub())
    try:
        presenter.reload()
        qtbot.waitUntil(lambda: tab.model.rowCount() == 10, timeout=10000)
        import threading

        from context_center.services.tasks import Op

        busy = threading.Event()
        tasks.read(Op("busy", lambda token: busy.wait(10)))  # the one reader, held
        for end in range(1, len("ticket42") + 1):
            tab.search.setText("ticket42"[:end])  # eight filters queue behind it
        busy.set()
        qtbot.waitUntil(lambda: tab.model.rowCount() == 1, timeout=10000)
        assert tab.model.row_at(0).fact.name == "部署-说明"
        assert searches == [("ticket42",)]  # the seven superseded ones never searched
    finally:
        tasks.shutdown()


def _slow_holds(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    """A registered lower() that takes 50 ms a row: a scan lasts until interrupted."""
    import time

    from context_engine.facts import table_columns

    real = table_columns._holds

    def slow(text: str | None, word: str) -> bool:
        calls.append(word)
        time.sleep(0.05)
        return real(text, word)

    monkeypatch.setattr(table_columns, "_holds", slow)
    monkeypatch.setattr(table_columns, "_PROGRESS_STEPS", 1)


class _Recording(Backend):
    """Records how each body search ended: ``done`` or ``interrupted``."""

    ended: list[tuple[tuple[str, ...], str]]

    def search(self, words, names=None, cancelled=None):  # type: ignore[no-untyped-def]
        from context_engine.facts.table_columns import SearchInterrupted

        try:
            found = super().search(words, names, cancelled)
        except SearchInterrupted:
            self.ended.append((tuple(words), "interrupted"))
            raise
        self.ended.append((tuple(words), "done"))
        return found


@pytest.mark.slow
def test_fields_show_at_once_then_bodies_merge_and_the_next_keystroke_aborts_the_scan(
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two phases: the fields' rows at once, "Searching bodies…" while the index is scanned;
    a newer keystroke interrupts that scan and its rows are never merged."""
    from context_center.presenters.facts import FactsPresenter
    from context_center.services.hub import Hub
    from context_center.services.tasks import TaskManager
    from context_center.widgets.facts_tab import FactsTab

    settle_all(monkeypatch)
    catalog = _home(tmp_path)
    catalog.memory.snapshot()
    calls: list[str] = []
    tab = FactsTab()
    qtbot.addWidget(tab)
    tasks = TaskManager(readers=1)
    backend = _Recording(LocalCatalog(catalog.paths))
    backend.ended = []
    presenter = FactsPresenter(tab, backend, tasks, Hub())
    labels: list[str] = []
    tasks.started.connect(lambda op: labels.append(op.label))
    try:
        presenter.reload()
        qtbot.waitUntil(lambda: tab.model.rowCount() == 10, timeout=10000)
        _slow_holds(monkeypatch, calls)
        tab.search.setText("部署")  # in a title (fields) and in a body
        qtbot.waitUntil(lambda: bool(calls), timeout=10000)  # the body scan runs
        assert [r.fact.name for r in tab.model.rows] == ["部署-说明"]  # phase one, shown
        assert "Searching bodies…" in labels
        tab.search.setText("grüße")  # only in a body: phase one finds nothing
        qtbot.waitUntil(lambda: len(backend.ended) >= 2, timeout=20000)
        assert backend.ended[0] == (("部署",), "interrupted")
        assert backend.ended[1] == (("grüße",), "done")
        qtbot.waitUntil(lambda: tab.model.rowCount() == 1, timeout=5000)
        assert tab.model.row_at(0).fact.name == "straße"
    finally:
        tasks.shutdown()


@pytest.mark.slow
def test_a_patch_is_shown_without_waiting_for_a_running_body_search(
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One reader, a body scan running: the watcher's patch interrupts it instead of
    queueing behind it (without the interrupt the scan would end first, "done")."""
    from context_center.presenters.facts import FactsPresenter
    from context_center.services.hub import ChangeSet, Hub
    from context_center.services.tasks import TaskManager
    from context_center.widgets.facts_tab import FactsTab

    settle_all(monkeypatch)
    catalog = _home(tmp_path)
    catalog.memory.snapshot()
    calls: list[str] = []
    tab = FactsTab()
    qtbot.addWidget(tab)
    tasks = TaskManager(readers=1)
    backend = _Recording(LocalCatalog(catalog.paths))
    backend.ended = []
    hub = Hub()
    presenter = FactsPresenter(tab, backend, tasks, hub)
    try:
        presenter.reload()
        qtbot.waitUntil(lambda: tab.model.rowCount() == 10, timeout=10000)
        _slow_holds(monkeypatch, calls)
        tab.search.setText("grüße")
        qtbot.waitUntil(lambda: bool(calls), timeout=10000)  # the body scan runs
        target = catalog.paths.project_store / "straße.md"
        target.write_bytes(target.read_bytes().replace(b"revision: 1", b"revision: 7"))
        hub.publish(ChangeSet(frozenset({"facts"}), paths=frozenset({str(target)})))
        qtbot.waitUntil(lambda: presenter.snapshot.rows is not None and any(
            r.fact.name == "straße" and r.fact.revision == 7 for r in presenter.snapshot.rows),
            timeout=20000)
        assert backend.ended[0] == (("grüße",), "interrupted")
        # The filter runs again on the patched rows and finds the edited fact in its body.
        qtbot.waitUntil(lambda: tab.model.rowCount() == 1 and
                        tab.model.row_at(0).fact.revision == 7, timeout=20000)
    finally:
        tasks.shutdown()
