"""The Facts table fills from the derived index before the full snapshot; bodies on demand."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from context_center.presenters.facts import FactsPresenter
from context_center.services import backend as backend_module
from context_center.services.backend import Backend
from context_center.services.fact_rows import FactsSnapshot
from context_center.services.hub import Hub
from context_center.services.tasks import CancelToken, TaskManager
from context_center.widgets.facts_tab import FactsTab
from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.ops import Person, Save
from support.store import make_paths, settle_all


class SlowSnapshot(Backend):
    """A local backend whose full snapshot waits until the test lets it go."""

    def __init__(self, catalog: LocalCatalog) -> None:
        super().__init__(catalog)
        self.release = threading.Event()
        self.bodies: list[str] = []

    def facts(self, token: CancelToken | None = None) -> FactsSnapshot:
        assert self.release.wait(20)
        return super().facts(token)

    def body(self, ref: str) -> str:
        self.bodies.append(ref)
        return super().body(ref)


def _home(tmp_path: Path, count: int) -> LocalCatalog:
    catalog = LocalCatalog(make_paths(tmp_path))
    for i in range(count):
        catalog.apply(Save(name=f"project/fact-{i:02d}.md", description=f"Fact {i}",
                           body=f"Body text number {i}.", type="project", scope="project"),
                      Person("cli"))
    return LocalCatalog(catalog.paths)  # a fresh window: nothing cached in process


def _window(qtbot, backend: Backend) -> tuple[FactsTab, FactsPresenter, TaskManager]:
    tab = FactsTab()
    qtbot.addWidget(tab)
    tasks = TaskManager()
    return tab, FactsPresenter(tab, backend, tasks, Hub()), tasks


def test_rows_arrive_from_the_index_while_the_snapshot_is_pending(
    qtbot, qtmodeltester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    monkeypatch.setattr(backend_module, "FIRST_PAGE", 3)  # a first page, then every row
    backend = SlowSnapshot(_home(tmp_path, 8))
    tab, presenter, tasks = _window(qtbot, backend)
    try:
        presenter.reload()
        qtbot.waitUntil(lambda: tab.model.rowCount() == 8, timeout=5000)
        assert not backend.release.is_set()  # the full read has not answered yet
        assert presenter.snapshot.partial
        assert all(row.lazy and row.fact.body == "" for row in tab.model.rows)
        qtmodeltester.check(tab.model)
        # Showing a row reads that one body from its file.
        tab.table.selectRow(0)
        shown = tab.model.row_at(0).fact
        qtbot.waitUntil(lambda: "Body text number" in tab.detail.toHtml(), timeout=5000)
        assert backend.bodies == [shown.reference]
        # The full read replaces the indexed rows (bodies for full-text search).
        backend.release.set()
        qtbot.waitUntil(lambda: not presenter.snapshot.partial, timeout=10000)
        qtbot.waitUntil(lambda: tab.model.rowCount() == 8 and not any(
            r.lazy for r in tab.model.rows), timeout=5000)
        assert {r.fact.body for r in tab.model.rows} == {
            f"Body text number {i}." for i in range(8)}
    finally:
        backend.release.set()
        tasks.shutdown()


def test_a_home_without_an_index_falls_back_to_the_full_read(
    qtbot, qtmodeltester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = _home(tmp_path, 3)
    for index_file in catalog.paths.state.rglob("*.sqlite*"):
        index_file.unlink()
    backend = SlowSnapshot(catalog)
    assert backend.indexed_rows() is None
    tab, presenter, tasks = _window(qtbot, backend)
    try:
        presenter.reload()
        backend.release.set()
        qtbot.waitUntil(lambda: tab.model.rowCount() == 3, timeout=10000)
        assert not presenter.snapshot.partial
        assert not any(r.lazy for r in tab.model.rows)
        qtmodeltester.check(tab.model)
    finally:
        backend.release.set()
        tasks.shutdown()
