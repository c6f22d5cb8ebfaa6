"""The Facts table lists through the derived index: a first page, then every row; no body kept."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from context_center.presenters.facts import FactsPresenter
from context_center.services.backend import Backend, Unchecked
from context_center.services.fact_rows import FactsSnapshot
from context_center.services.hub import ChangeSet, Hub
from context_center.services.tasks import CancelToken, TaskManager
from context_center.widgets.facts_tab import FactsTab
from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.ops import Person, Save
from support.store import make_paths, settle_all


class SlowListing(Backend):
    """A local backend whose complete listing waits until the test lets it go."""

    def __init__(self, catalog: LocalCatalog) -> None:
        super().__init__(catalog)
        self.release = threading.Event()
        self.bodies: list[str] = []
        self.full_reads = 0
        self.listings = 0

    def listed_facts(
        self, token: CancelToken | None = None, previous: FactsSnapshot | None = None
    ) -> FactsSnapshot | None:
        assert self.release.wait(20)
        self.listings += 1
        return super().listed_facts(token, previous)

    def listed_table(
        self, token: CancelToken | None = None, previous: FactsSnapshot | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> FactsSnapshot | None:
        assert self.release.wait(20)
        self.listings += 1
        return super().listed_table(token, previous, progress)

    def validated_table(self, unchecked: Unchecked,
                        token: CancelToken | None = None) -> FactsSnapshot:
        assert self.release.wait(20)
        self.listings += 1
        return super().validated_table(unchecked, token)

    def facts(self, token: CancelToken | None = None) -> FactsSnapshot:
        self.full_reads += 1
        return super().facts(token)

    def body(self, ref: str) -> str:
        self.bodies.append(ref)
        return super().body(ref)


class LateCheck(SlowListing):
    """A local backend whose check of the files ends, then waits until the test lets it go."""

    def __init__(self, catalog: LocalCatalog) -> None:
        super().__init__(catalog)
        self.checked = threading.Event()

    def validated_table(self, unchecked: Unchecked,
                        token: CancelToken | None = None) -> FactsSnapshot:
        result = Backend.validated_table(self, unchecked, token)
        self.checked.set()
        assert self.release.wait(20)
        return result


def _home(tmp_path: Path, count: int) -> LocalCatalog:
    catalog = LocalCatalog(make_paths(tmp_path))
    for i in range(count):
        catalog.apply(Save(name=f"project/fact-{i:02d}.md", description=f"Fact {i}",
                           body=f"Body text number {i}.", type="project", scope="project"),
                      Person("cli"))
    return LocalCatalog(catalog.paths)  # a fresh window: nothing cached in process


def _window(
    qtbot, backend: Backend, hub: Hub | None = None
) -> tuple[FactsTab, FactsPresenter, TaskManager]:
    tab = FactsTab()
    qtbot.addWidget(tab)
    tasks = TaskManager()
    return tab, FactsPresenter(tab, backend, tasks, hub or Hub()), tasks


def test_every_indexed_row_at_once_then_the_checked_rows_without_bodies(
    qtbot, qtmodeltester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    backend = SlowListing(_home(tmp_path, 8))
    tab, presenter, tasks = _window(qtbot, backend)
    try:
        presenter.reload()
        # Every row the index holds, before a file is checked (the check waits for the test).
        qtbot.waitUntil(lambda: tab.model.rowCount() == 8, timeout=5000)
        assert presenter.snapshot.partial  # the files are still to be checked
        assert "Checking them against the files" in tab.summary.text()
        assert backend.listings == 0
        qtmodeltester.check(tab.model)
        backend.release.set()
        qtbot.waitUntil(lambda: not presenter.snapshot.partial, timeout=10000)
        qtbot.waitUntil(lambda: tab.model.rowCount() == 8, timeout=5000)
        qtbot.waitUntil(lambda: "Checking" not in tab.summary.text(), timeout=5000)
        assert all(row.lazy and row.fact.body == "" for row in tab.model.rows)
        assert backend.full_reads == 0  # no snapshot with every body, ever
        qtmodeltester.check(tab.model)
        # Showing a row reads that one body from its file.
        tab.table.selectRow(0)
        shown = tab.model.row_at(0).fact
        qtbot.waitUntil(lambda: "Body text number" in tab.detail.toHtml(), timeout=5000)
        assert backend.bodies == [shown.reference]
        # Full-text search still finds words of the bodies.
        tab.search.setText("number 5")
        qtbot.waitUntil(lambda: tab.model.rowCount() == 1, timeout=5000)
        assert tab.model.row_at(0).fact.name == "fact-05"
        # F5 lists again, through the index, still without a full read.
        presenter.reload()
        qtbot.wait(200)
        assert backend.full_reads == 0
    finally:
        backend.release.set()
        tasks.shutdown()


def test_a_home_without_an_index_is_listed_by_parsing(
    qtbot, qtmodeltester, tmp_path: Path
) -> None:
    catalog = _home(tmp_path, 3)
    for index_file in catalog.paths.state.rglob("*.sqlite*"):
        index_file.unlink()
    backend = SlowListing(catalog)
    assert backend.first_rows() is None
    tab, presenter, tasks = _window(qtbot, backend)
    try:
        presenter.reload()
        backend.release.set()
        qtbot.waitUntil(lambda: tab.model.rowCount() == 3, timeout=10000)
        assert not presenter.snapshot.partial
        assert backend.full_reads == 0
        tab.search.setText("number 2")
        qtbot.waitUntil(lambda: tab.model.rowCount() == 1, timeout=5000)
        qtmodeltester.check(tab.model)
    finally:
        backend.release.set()
        tasks.shutdown()


def test_rows_shown_before_the_check_are_made_true_by_it(
    qtbot, qtmodeltester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files changed and added while the rows from the index are on screen, unseen by any
    watcher: the check of the files corrects the row and brings the missing fact in."""
    settle_all(monkeypatch)
    backend = SlowListing(_home(tmp_path, 4))
    store = backend.catalog.paths.project_store  # type: ignore[attr-defined]
    tab, presenter, tasks = _window(qtbot, backend)
    try:
        presenter.reload()
        qtbot.waitUntil(lambda: tab.model.rowCount() == 4, timeout=5000)
        assert presenter.snapshot.partial
        edited = store / "fact-01.md"
        edited.write_bytes(edited.read_bytes().replace(b"Fact 1", b"Fact Z"))
        added = store / "fact-09.md"
        added.write_bytes((store / "fact-02.md").read_bytes().replace(
            b"fact-02", b"fact-09").replace(b"Fact 2", b"Fact 9").replace(
            b"id: mem-", b"id: mem-9"))
        backend.release.set()
        qtbot.waitUntil(lambda: not presenter.snapshot.partial, timeout=10000)
        qtbot.waitUntil(lambda: tab.model.rowCount() == 5, timeout=5000)
        shown = {r.fact.name: r.fact.description for r in tab.model.rows}
        assert shown["fact-01"] == "Fact Z" and shown["fact-09"] == "Fact 9"
        qtmodeltester.check(tab.model)
    finally:
        backend.release.set()
        tasks.shutdown()


def test_files_changed_during_a_listing_are_patched_in_after_it(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No second listing (seconds at 100k): the named files are re-read once it has landed."""
    settle_all(monkeypatch)
    backend = SlowListing(_home(tmp_path, 4))
    hub = Hub()
    tab, presenter, tasks = _window(qtbot, backend, hub)
    try:
        presenter.reload()
        qtbot.wait(100)
        target = backend.catalog.paths.project_store / "fact-02.md"  # type: ignore[attr-defined]
        target.write_bytes(target.read_bytes().replace(b"revision: 1", b"revision: 7"))
        hub.publish(ChangeSet(frozenset({"facts"}), paths=frozenset({str(target)})))

        def shown() -> bool:
            return any(r.fact.name == "fact-02" and r.fact.revision == 7 for r in tab.model.rows)

        qtbot.waitUntil(shown, timeout=5000)  # patched into the first page at once
        assert backend.listings == 0
        backend.release.set()
        qtbot.waitUntil(lambda: not presenter.snapshot.partial, timeout=10000)
        qtbot.wait(300)
        assert shown()
        assert backend.listings == 1
        assert tab.model.rowCount() == 4
    finally:
        backend.release.set()
        tasks.shutdown()


def test_a_row_patched_while_the_files_are_checked_never_shows_older(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checked table lands with the outside write already in it (at 100k the re-read
    after it would otherwise show the old revision for a moment, seconds under load)."""
    settle_all(monkeypatch)
    backend = LateCheck(_home(tmp_path, 4))
    hub = Hub()
    tab, presenter, tasks = _window(qtbot, backend, hub)
    revisions: list[tuple[bool, int]] = []
    presenter.snapshot_applied.connect(lambda snap: revisions.append((snap.partial, next(
        r.fact.revision for r in snap.rows if r.fact.name == "fact-02"))))
    try:
        presenter.reload()
        qtbot.waitUntil(lambda: tab.model.rowCount() == 4, timeout=5000)
        assert backend.checked.wait(10)  # the files were checked before this write
        target = backend.catalog.paths.project_store / "fact-02.md"  # type: ignore[attr-defined]
        target.write_bytes(target.read_bytes().replace(b"revision: 1", b"revision: 7"))
        hub.publish(ChangeSet(frozenset({"facts"}), paths=frozenset({str(target)})))
        qtbot.waitUntil(lambda: revisions[-1] == (False, 7), timeout=5000)  # patched on screen
        backend.release.set()
        qtbot.waitUntil(lambda: presenter._loading is None, timeout=10000)
        qtbot.wait(300)
        patched = revisions.index((False, 7))
        assert set(revisions[:patched]) == {(True, 1)}  # the rows from the index
        assert all(revision == 7 for _, revision in revisions[patched:]), revisions
    finally:
        backend.release.set()
        tasks.shutdown()


def test_a_relisting_reuses_the_unchanged_facts_on_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F5 at 100,000 facts: the old rows stay on screen meanwhile, so nothing is held twice."""
    settle_all(monkeypatch)
    backend = Backend(_home(tmp_path, 5))
    first = backend.listed_facts()
    assert first is not None
    target = backend.paths.project_store / "fact-03.md"
    target.write_bytes(target.read_bytes().replace(b"Body text number 3.", b"Body text number 9."))
    again = backend.listed_facts(previous=first)
    assert again is not None
    old = {r.fact.name: r for r in first.rows}
    for row in again.rows:
        if row.fact.name == "fact-03":
            assert row.fact is not old["fact-03"].fact and "number 9" in row.haystack
        else:
            assert row.fact is old[row.fact.name].fact
            assert row.haystack is old[row.fact.name].haystack


def test_a_relisting_of_an_unchanged_store_keeps_the_very_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F5 with nothing changed builds no second set of rows (the peak memory at 100k)."""
    settle_all(monkeypatch)
    backend = Backend(_home(tmp_path, 5))
    first = backend.listed_facts()
    assert first is not None
    assert backend.listed_facts(previous=first) is first
    fresh = {r.fact.name: r.freshness for r in first.rows}
    # A fact's freshness moves with time alone: the rows are then built again.
    monkeypatch.setattr("context_center.services.fact_rows.freshness",
                        lambda fact, now=None: "stale")
    again = backend.listed_facts(previous=first)
    assert again is not None and again is not first
    assert {r.fact.name for r in again.rows} == set(fresh)
    assert all(r.freshness == "stale" for r in again.rows)
