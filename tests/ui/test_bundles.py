"""File ▸ Export bundle… / Import bundle… (S15.3): the engine's export and restore, in the app."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from context_center.presenters.bundles import BundlePresenter, ask_choice
from context_center.services.backend import Backend
from context_center.services.tasks import TaskManager
from context_engine.catalog.local import LocalCatalog
from context_engine.facts.memory import Memory
from PySide6.QtWidgets import QMessageBox, QWidget
from support.bundles import paths_for, populate, store_files_of, workspace


@pytest.fixture
def parts(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    """(source paths, workspace, a parent widget, a task manager)."""
    ws = workspace(tmp_path)
    source = paths_for(tmp_path / "home", ws)
    populate(source)
    parent = QWidget()
    qtbot.addWidget(parent)
    tasks = TaskManager()
    yield source, ws, parent, tasks
    tasks.shutdown()


def presenter_for(paths, parent, tasks, bundle: Path, answers: list[str | None],
                  asked: list[tuple[str, bool]]) -> BundlePresenter:  # type: ignore[no-untyped-def]
    def choice(_parent: QWidget, text: str, conflicts: bool,
               answered: Callable[[str | None], None]) -> None:
        asked.append((text, conflicts))
        answered(answers.pop(0))

    return BundlePresenter(parent, Backend(LocalCatalog(paths)), tasks,
                           export_path=lambda _p: str(bundle),
                           bundle_path=lambda _p: str(bundle), choice=choice)


def test_export_then_import_into_an_empty_home(qtbot, parts, tmp_path) -> None:
    source, ws, parent, tasks = parts
    bundle = tmp_path / "b.tar.gz"
    asked: list[tuple[str, bool]] = []
    exporter = presenter_for(source, parent, tasks, bundle, [], asked)
    with qtbot.waitSignal(exporter.exported, timeout=10000) as done:
        exporter.export()
    assert done.args[0].files == 11 and bundle.exists()
    target = paths_for(tmp_path / "restored", ws)
    importer = presenter_for(target, parent, tasks, bundle, ["skip"], asked)
    with qtbot.waitSignal(importer.restored, timeout=10000):
        importer.restore()
    assert asked[0][1] is False and "restore" in asked[0][0]
    assert store_files_of(tmp_path / "restored") == store_files_of(tmp_path / "home")


def test_conflicts_are_asked_about_and_can_become_revisions(qtbot, parts, tmp_path) -> None:
    source, ws, parent, tasks = parts
    bundle = tmp_path / "b.tar.gz"
    asked: list[tuple[str, bool]] = []
    exporter = presenter_for(source, parent, tasks, bundle, [], asked)
    with qtbot.waitSignal(exporter.exported, timeout=10000):
        exporter.export()
    target = paths_for(tmp_path / "other", ws)
    Memory(target).save(name="release-target", description="mine", body="Mine.")
    backing_out = presenter_for(target, parent, tasks, bundle, [None], asked)
    before = store_files_of(tmp_path / "other")
    backing_out.restore()
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=10000)
    tasks.wait_idle()
    assert asked[0][1] is True and "conflict name release-target.md" in asked[0][0]
    assert store_files_of(tmp_path / "other") == before  # backed out: nothing written
    importer = presenter_for(target, parent, tasks, bundle, ["revision"], asked)
    with qtbot.waitSignal(importer.restored, timeout=10000) as done:
        importer.restore()
    assert [f.reference for f in done.args[0].revised] == ["project/release-target.md"]
    assert Memory(target).resolve("project/release-target.md").body == "Publish from main-v2."


def test_a_refused_bundle_is_reported(qtbot, parts, tmp_path) -> None:
    _source, ws, parent, tasks = parts
    bundle = tmp_path / "not-a-bundle.tar.gz"
    bundle.write_bytes(b"plain text")
    importer = presenter_for(paths_for(tmp_path / "x", ws), parent, tasks, bundle, [], [])
    with qtbot.waitSignal(importer.failed, timeout=10000) as failed:
        importer.restore()
    assert "not a bundle" in failed.args[0]
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_the_file_menu_offers_the_bundle_actions(app_root) -> None:
    window = app_root.window
    titles = [a.text() for a in window.menuBar().actions()[0].menu().actions()]
    assert {"&Import…", "&Export bundle…", "Import &bundle…"} <= set(titles)
    assert window.export_bundle_action.isEnabled()


def test_a_window_whose_catalog_is_not_local_offers_no_transfer(qtbot, parts, tmp_path) -> None:
    from context_center.application import Application
    from PySide6.QtCore import QSettings

    source, _ws, _parent, _tasks = parts
    backend = Backend(LocalCatalog(source), local=False)  # as a served workspace's window
    root = Application(source, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                       backend)
    qtbot.addWidget(root.window)
    window = root.window
    assert not window.import_action.isEnabled()
    assert not window.export_bundle_action.isEnabled()
    assert not window.import_bundle_action.isEnabled()
    root.shutdown()


@pytest.mark.parametrize(("button", "expected"), [
    ("Keep as new revisions", "revision"), ("Skip conflicts", "skip"), ("Cancel", None)])
def test_the_plan_box_opens_without_blocking_and_answers_by_callback(
    qtbot, button: str, expected: str | None
) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    answers: list[str | None] = []
    ask_choice(parent, "1 conflict", True, answers.append)  # returns at once: no nested loop
    [box] = parent.findChildren(QMessageBox)
    assert box.isModal() and answers == []
    [clicked] = [b for b in box.buttons() if b.text().replace("&", "") == button]
    clicked.click()
    qtbot.waitUntil(lambda: answers == [expected], timeout=5000)
