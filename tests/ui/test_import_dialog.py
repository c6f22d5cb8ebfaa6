"""File ▸ Import… (S15.3): a checklist of another agent's memories, editable before writing."""

from __future__ import annotations

from pathlib import Path

import pytest
from context_center.application import Application, build
from context_center.models.import_candidates import (
    IMPORT,
    NAME,
    TYPE,
    WARNING,
    ImportCandidatesModel,
)
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.suggestions.roots import SourceRoots
from context_engine.transfer.plan import plan
from context_engine.transfer.sources import scan_agent
from PySide6.QtCore import QSettings, Qt
from support.imports import setup


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EnginePaths:
    """A workspace whose Claude Code memories are the fixture set."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    for key, value in setup("claude-code", tmp_path, ws).items():
        monkeypatch.setenv(key, value)
    return EnginePaths.resolve(home=tmp_path / "home", workspace=ws)


@pytest.fixture
def root(qtbot, workspace: EnginePaths, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The application over that workspace, started."""
    app: Application = build(workspace, QSettings(str(tmp_path / "s.ini"),
                                                  QSettings.Format.IniFormat))
    qtbot.addWidget(app.window)
    app.window.show()
    app.start()
    yield app
    app.shutdown()


def planned(paths: EnginePaths):  # type: ignore[no-untyped-def]
    found = scan_agent("claude-code", paths, SourceRoots.from_env())
    return plan(found.candidates, [])


def test_the_checklist_model_passes_the_model_tester(qtmodeltester, workspace) -> None:
    model = ImportCandidatesModel()
    model.set_planned(planned(workspace))
    qtmodeltester.check(model)
    assert model.rowCount() == 7


def test_defaults_edits_and_ticks(workspace) -> None:
    model = ImportCandidatesModel()
    model.set_planned(planned(workspace))
    rows = model.rows
    flagged = next(i for i, r in enumerate(rows) if r.planned.flagged)
    assert all(r.chosen for r in rows)
    assert model.data(model.index(flagged, WARNING), Qt.ItemDataRole.CheckStateRole) == (
        Qt.CheckState.Checked)
    assert model.flags(model.index(0, WARNING)) & Qt.ItemFlag.ItemIsUserCheckable == (
        Qt.ItemFlag.NoItemFlags)  # only flagged rows have a warning to untick
    assert model.setData(model.index(0, NAME), "renamed")
    assert not model.setData(model.index(0, TYPE), "not-a-type")
    other = next(i for i, r in enumerate(rows) if i and not r.planned.flagged)
    assert model.setData(model.index(other, IMPORT), Qt.CheckState.Unchecked,
                         Qt.ItemDataRole.CheckStateRole)
    candidates, allowed = model.to_write()
    assert candidates[0].name == "renamed" and len(candidates) == 6 and allowed == set()
    model.setData(model.index(flagged, WARNING), Qt.CheckState.Unchecked,
                  Qt.ItemDataRole.CheckStateRole)
    candidates, allowed = model.to_write()
    assert {candidates[i].name for i in allowed} == {"deploy-token"}


@pytest.mark.slow
def test_import_dialog_writes_the_ticked_and_edited_rows(qtbot, root, workspace, monkeypatch
                                                         ) -> None:
    from context_engine.catalog.local import LocalCatalog

    actors: list[object] = []
    real_apply = LocalCatalog.apply

    def spy(self, op, actor):  # type: ignore[no-untyped-def]
        actors.append(actor)
        return real_apply(self, op, actor)

    monkeypatch.setattr(LocalCatalog, "apply", spy)
    presenter = root.importing
    dialog = presenter.dialog
    assert root.window.import_action.isEnabled()
    root.window.import_action.trigger()
    assert dialog.isVisible()
    dialog.agent_box.setCurrentIndex(0)
    dialog.scan_button.click()
    qtbot.waitUntil(lambda: dialog.model.rowCount() == 7, timeout=10000)
    assert "flagged" in dialog.status.text() and "broken.md" in dialog.status.text()
    model = dialog.model
    names = [r.candidate.name for r in model.rows]
    debugging = names.index("debugging")
    model.setData(model.index(debugging, NAME), "debug-notes")
    dialog.table.selectRow(debugging)
    dialog.body_edit.setPlainText("Stop the local Postgres before `make test`.")
    skipped = names.index("user-role")
    model.setData(model.index(skipped, IMPORT), Qt.CheckState.Unchecked,
                  Qt.ItemDataRole.CheckStateRole)
    steps: list[tuple[int, int]] = []
    presenter.progressed.connect(lambda done, total: steps.append((done, total)))
    with qtbot.waitSignal(presenter.imported, timeout=10000) as blocker:
        dialog.import_button.click()
    report = blocker.args[0]
    assert steps and steps[-1] == (6, 6)  # the dialog's bar followed the writes
    assert {getattr(a, "surface", None) for a in actors} == {"app"}  # the person, in the app
    written = {f.name for f in report.written}
    assert written == {"debug-notes", "feedback-testing", "发布流程", "latency-dashboard",
                       "use-pnpm-never-npm-in-this-repository"}
    memory = Memory(workspace)
    assert memory.resolve("debug-notes").body == "Stop the local Postgres before `make test`."
    assert "deploy-token" not in {f.name for f in memory.list_all()}  # the warning stayed on
    # A second scan shows what is here; importing again writes nothing twice.
    dialog.scan_button.click()
    qtbot.waitUntil(lambda: not dialog.cancel_button.isEnabled(), timeout=10000)
    statuses = {r.candidate.name: r.planned.status for r in model.rows}
    assert statuses["feedback-testing"] == "exists" and statuses["user-role"] == "new"
    flagged = next(i for i, r in enumerate(model.rows) if r.planned.flagged)
    model.setData(model.index(flagged, WARNING), Qt.CheckState.Unchecked,
                  Qt.ItemDataRole.CheckStateRole)
    with qtbot.waitSignal(presenter.imported, timeout=10000) as blocker:
        dialog.import_button.click()
    # The original "debugging" now counts as a duplicate of "debug-notes" (same description).
    assert {f.name for f in blocker.args[0].written} == {"deploy-token", "user-role"}
    qtbot.waitUntil(lambda: any(r.fact.name == "deploy-token"
                                for r in root.facts_tab.model.rows), timeout=5000)


def test_cancel_stops_a_running_import_before_its_next_fact(qtbot, root, workspace,
                                                           monkeypatch) -> None:
    import threading

    from context_center.presenters import importing

    started, release = threading.Event(), threading.Event()
    real = importing.import_candidates

    def slow(catalog, candidates, **kwargs):  # type: ignore[no-untyped-def]
        check = kwargs["check"]

        def gated() -> None:
            started.set()
            release.wait(5)
            check()

        return real(catalog, candidates, **{**kwargs, "check": gated})

    monkeypatch.setattr(importing, "import_candidates", slow)
    presenter = root.importing
    presenter.open()
    presenter.dialog.scan_button.click()
    qtbot.waitUntil(lambda: presenter.dialog.model.rowCount() == 7, timeout=10000)
    reports: list[object] = []
    presenter.imported.connect(reports.append)
    presenter.dialog.import_button.click()
    assert started.wait(5) and presenter.dialog.cancel_button.isEnabled()
    presenter.dialog.cancel_button.click()
    release.set()
    root.tasks.wait_idle()
    assert not presenter.dialog.cancel_button.isEnabled()
    assert "Cancelled" in presenter.dialog.status.text()
    assert Memory(workspace).list_all() == () and reports == []


def _scanned_and_edited(qtbot, root):  # type: ignore[no-untyped-def]
    """The Import dialog after a scan, with one body edited."""
    dialog = root.importing.dialog
    root.window.import_action.trigger()
    if not dialog.model.rowCount():
        dialog.scan_button.click()
        qtbot.waitUntil(lambda: dialog.model.rowCount() == 7, timeout=10000)
    dialog.table.selectRow(0)
    dialog.body_edit.setPlainText("An edit the person typed.")
    return dialog


@pytest.mark.slow
def test_return_from_every_focus_position_never_imports(qtbot, root, workspace) -> None:
    from support.keys import every_position

    before = {f.name for f in Memory(workspace).list_all()}

    def check(widget) -> None:  # type: ignore[no-untyped-def]
        assert {f.name for f in Memory(workspace).list_all()} == before, widget
        dialog = root.importing.dialog
        if dialog.discard.isVisible():
            dialog.discard.keep_button.click()

    count = every_position(qtbot, lambda: _scanned_and_edited(qtbot, root), Qt.Key.Key_Return,
                           check)
    assert count >= 5
    qtbot.wait(300)  # a write would run on the writer thread: give it time to show
    assert {f.name for f in Memory(workspace).list_all()} == before


@pytest.mark.slow
def test_esc_and_close_ask_before_dropping_edits(qtbot, root) -> None:
    from support.keys import every_position

    def check(widget) -> None:  # type: ignore[no-untyped-def]
        dialog = root.importing.dialog
        assert dialog.isVisible(), widget
        assert dialog.model.rows[0].candidate.body == "An edit the person typed.", widget
        if dialog.discard.isVisible():
            dialog.discard.keep_button.click()

    every_position(qtbot, lambda: _scanned_and_edited(qtbot, root), Qt.Key.Key_Escape, check)
    dialog = _scanned_and_edited(qtbot, root)
    dialog.close_button.click()
    assert dialog.discard.isVisible() and dialog.isVisible()
    dialog.discard.discard_button.click()
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=2000)
