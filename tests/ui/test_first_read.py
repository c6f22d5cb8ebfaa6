"""The first read of a home without a derived index: rows arrive as they are parsed, with a count
of the files read in the status bar; cancelling stops it and keeps what was committed."""

from __future__ import annotations

from pathlib import Path

import pytest
from context_center.application import build
from context_center.presenters import facts as facts_presenter
from context_center.presenters.facts import FactsPresenter
from context_center.services.backend import Backend
from context_center.services.hub import Hub
from context_center.services.tasks import Op, TaskManager
from context_center.widgets.facts_tab import FactsTab
from context_engine.catalog.local import LocalCatalog
from context_engine.facts import table_columns
from context_engine.facts.codec import render_fact
from context_engine.facts.model import Fact
from context_engine.facts.table_columns import indexed_columns
from context_engine.paths import EnginePaths
from PySide6.QtCore import QSettings
from support.store import make_paths

FACTS = 3_000  # 2,700 project, 300 global
BATCH = 200


def _never_indexed(tmp_path: Path) -> EnginePaths:
    """A home whose facts another program wrote: the files, no derived index."""
    paths = make_paths(tmp_path)
    for store in (paths.project_store, paths.global_store):
        store.mkdir(parents=True, exist_ok=True)
    for i in range(FACTS):
        scope = "global" if i % 10 == 0 else "project"
        fact = Fact(f"mem-{i:032x}", 1, f"fact-{i:05d}", f"Title {i}", f"Fact {i}",
                    "user" if scope == "global" else "project", scope, f"Body {i} text.")
        store = paths.global_store if scope == "global" else paths.project_store
        (store / f"fact-{i:05d}.md").write_bytes(render_fact(fact))
    return paths


def _presenter_over_never_indexed(
    qtbot, tmp_path: Path
) -> tuple[EnginePaths, FactsTab, TaskManager, FactsPresenter]:
    """A Facts tab and its presenter (not started) over a never-indexed home, as the app has
    them for a local window (the window creates the derived index)."""
    paths = _never_indexed(tmp_path)
    backend = Backend(LocalCatalog(paths), keep_index=True)
    tab = FactsTab()
    qtbot.addWidget(tab)
    tasks = TaskManager()
    return paths, tab, tasks, FactsPresenter(tab, backend, tasks, Hub())


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches and showings small and frequent enough to be seen at a few thousand facts."""
    monkeypatch.setattr(table_columns, "_BATCH", BATCH)
    monkeypatch.setattr(facts_presenter, "POST_EVERY", 0.0)
    monkeypatch.setattr(facts_presenter, "POST_COST", 1.0)
    monkeypatch.setattr(facts_presenter, "POST_GROWTH", 1.0)


@pytest.mark.usefixtures("small_batches")
def test_rows_arrive_while_the_stores_are_read_with_a_count_of_the_files(
    qtbot, qtmodeltester, tmp_path: Path
) -> None:
    paths = _never_indexed(tmp_path)
    assert indexed_columns(LocalCatalog(paths).memory.stores.all()) is None
    root = build(paths, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(root.window)
    shown: list[tuple[int, bool]] = []
    texts: list[str] = []
    summaries: list[str] = []
    root.facts.snapshot_applied.connect(
        lambda snapshot: shown.append((len(snapshot.rows), snapshot.partial)))
    root.facts.snapshot_applied.connect(
        lambda snapshot: summaries.append(root.facts_tab.summary.text()))
    # Connected after the window's own slot: the label already says what it shows.
    root.tasks.progressed.connect(lambda _op: texts.append(root.window.progress_label.text()))
    try:
        root.window.show()
        root.start()
        model = root.facts_tab.model
        qtbot.waitUntil(lambda: bool(shown) and shown[-1] == (FACTS, False), timeout=60_000)
        qtbot.waitUntil(lambda: not root.window.progress_label.isVisible(), timeout=10_000)
        assert model.rowCount() == FACTS
        qtmodeltester.check(model)
        # Rows the index held part-way were on screen before the complete table.
        partial = [count for count, part in shown[:-1] if part]
        assert partial and min(partial) > 0 and max(partial) < FACTS
        assert partial == sorted(partial)
        assert (FACTS, False) not in shown[:-1]
        # The partial rows are said to be what has been read so far, not rows being checked.
        said = [text for text, (_, part) in zip(summaries, shown, strict=True) if part]
        assert said and all("Reading the rest of the stores" in text for text in said)
        assert "Reading the rest" not in summaries[-1] and "Checking" not in summaries[-1]
        # The count of files read, rising to all of them, then gone with the read.
        assert texts and all(t.startswith("Reading the stores: ") for t in texts)
        counts = [int(t.split(": ")[1].split(" of ")[0].replace(",", "")) for t in texts]
        assert counts == sorted(counts) and counts[-1] == FACTS
        assert all(t.endswith(f" of {FACTS:,} files…") for t in texts)
        assert root.window.progress_label.text() == ""
        # The window created the derived index as it read: the next one starts from it.
        assert len(indexed_columns(LocalCatalog(paths).memory.stores.all()).cols) == FACTS
    finally:
        root.shutdown()


@pytest.mark.usefixtures("small_batches")
def test_cancelling_the_first_read_stops_it_and_keeps_the_committed_rows(
    qtbot, tmp_path: Path
) -> None:
    paths, tab, tasks, presenter = _presenter_over_never_indexed(qtbot, tmp_path)
    reports: list[str] = []

    def cancel(op: Op) -> None:
        reports.append(op.detail)
        op.cancel()  # the Cancel button of the status bar

    tasks.progressed.connect(cancel)
    try:
        presenter.reload()
        qtbot.waitUntil(lambda: bool(reports), timeout=30_000)
        tasks.wait_idle(30)
        qtbot.waitUntil(lambda: presenter._loading is None, timeout=5_000)
        assert not presenter.snapshot.rows or presenter.snapshot.partial
        # The tab says the read stopped (not "checking them against the files…").
        assert "cancelled" in tab.summary.text().lower()
        # Stopped within a few batches of the cancel; every committed batch is kept.
        kept = indexed_columns(LocalCatalog(paths).memory.stores.all())
        assert kept is not None and BATCH <= len(kept.cols) <= 5 * BATCH
        # The next read parses only the rest and lists every fact.
        tasks.progressed.disconnect(cancel)
        presenter.reload()
        qtbot.waitUntil(lambda: not presenter.snapshot.partial
                        and len(presenter.snapshot.rows) == FACTS, timeout=60_000)
    finally:
        tasks.shutdown()


@pytest.mark.usefixtures("small_batches")
def test_a_first_read_cancelled_with_rows_shown_keeps_saying_so_when_filtered(
    qtbot, tmp_path: Path
) -> None:
    _, tab, tasks, presenter = _presenter_over_never_indexed(qtbot, tmp_path)

    def cancel(op: Op) -> None:
        if tab.model.rowCount() > 0:  # some rows read so far are on screen
            op.cancel()

    tasks.progressed.connect(cancel)
    try:
        presenter.reload()
        qtbot.waitUntil(lambda: presenter._loading is None, timeout=30_000)
        assert presenter.snapshot.partial and 0 < len(presenter.snapshot.rows) < FACTS
        assert "read so far are shown" in tab.summary.text()
        # Filtering the rows read so far: counts of what is shown, and still "cancelled".
        tab.search.setText("fact-0001")
        qtbot.waitUntil(lambda: " of " in tab.summary.text(), timeout=5_000)
        assert "read so far are shown" in tab.summary.text()
        assert "Reading the rest" not in tab.summary.text()
    finally:
        tasks.shutdown()
