"""Main window: shortcuts (S13.5), status bar, long work with Cancel, remembered state, overflow."""

from __future__ import annotations

import threading

import pytest
from context_center.application import build
from context_center.services.tasks import Op
from context_center.widgets.main_window import MainWindow
from context_engine.facts.memory import Memory
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QKeySequence


@pytest.mark.slow
def test_shortcuts_are_bound(app_root):
    w = app_root.window
    assert w.find_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Find)
    assert w.new_action.shortcut() == QKeySequence(QKeySequence.StandardKey.New)
    assert w.save_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Save)
    assert w.forget_action.shortcut() == QKeySequence(Qt.Key.Key_Delete)
    assert w.refresh_action.shortcut() == QKeySequence(Qt.Key.Key_F5)


@pytest.mark.slow
def test_find_switches_to_facts_and_focuses_search(qtbot, app_root):
    w = app_root.window
    w.tabs.setCurrentIndex(0)
    w.find_action.trigger()
    assert w.tabs.currentWidget() is app_root.facts_tab
    assert app_root.facts_tab.search.hasFocus() or app_root.facts_tab.search.selectedText() == ""


@pytest.mark.slow
def test_refresh_rereads_every_area(qtbot, app_root):
    with qtbot.waitSignal(app_root.hub.changes_applied, timeout=2000) as blocker:
        app_root.window.refresh_action.trigger()
    assert blocker.args[0].areas >= {"facts", "archive", "instructions", "sessions", "traces"}


@pytest.mark.slow
def test_delete_key_asks_before_forgetting(qtbot, app_root):
    w = app_root.window
    w.tabs.setCurrentWidget(app_root.facts_tab)
    row = next(r for r in app_root.facts_tab.model.rows if r.fact.name == "glossary")
    app_root.facts_tab.select_key(row.key)
    with qtbot.waitSignal(app_root.writes.confirmation.shown, timeout=3000):
        w.forget_action.trigger()
    with qtbot.waitSignal(app_root.writes.forgotten, timeout=3000):
        app_root.writes.confirm.cancel_button.click()
    assert row.fact.path is not None and row.fact.path.exists()


@pytest.mark.slow
def test_status_bar_shows_paths_and_counts(app_root, demo):
    w = app_root.window
    assert str(demo.paths.project_store) in w.paths_text()
    assert str(demo.paths.global_store) in w.paths_text()
    assert str(demo.paths.global_store) in w.paths_label.toolTip()
    assert "11 facts" in w.counts_label.text() and "2 archived" in w.counts_label.text()


@pytest.mark.slow
def test_long_work_shows_progress_and_cancels(qtbot, app_root):
    w = app_root.window
    release = threading.Event()
    calls: list[object] = []

    def slow(token):
        release.wait(5)
        token.check()
        return "late"

    app_root.tasks.read(Op("Scanning something big", slow, calls.append, long=True))
    assert not w.progress.isHidden()
    assert "Scanning something big" in w.progress_label.text()
    with qtbot.waitSignal(app_root.tasks.finished, timeout=3000):
        w.cancel_button.click()
        release.set()
    assert calls == []
    assert w.progress.isHidden()


@pytest.mark.slow
def test_window_state_is_remembered(qtbot, demo, settings):
    first = build(demo.paths, settings)
    qtbot.addWidget(first.window)
    first.window.resize(700, 500)
    first.window.tabs.setCurrentIndex(3)
    first.window.save_state()
    first.shutdown()
    second = build(demo.paths, QSettings(settings.fileName(), QSettings.Format.IniFormat))
    qtbot.addWidget(second.window)
    second.window.restore_state()
    assert second.window.tabs.currentIndex() == 3
    assert (second.window.width(), second.window.height()) == (700, 500)
    second.shutdown()


@pytest.mark.slow
def test_overflow_rescans_to_the_disk_state(qtbot, app_root, demo):
    app_root.watcher.stop()  # events are lost from here on, as after a queue overflow
    Memory(demo.paths).save(name="project/missed.md", title="Missed", description="missed",
                            body="x", type="project", scope="project")
    qtbot.wait(400)
    assert not any(r.fact.name == "missed" for r in app_root.facts_tab.model.rows)
    app_root.watcher.overflow()
    qtbot.waitUntil(lambda: any(r.fact.name == "missed" for r in app_root.facts_tab.model.rows),
                    timeout=3000)
    on_disk = {(f.scope, f.id, f.revision) for f in Memory(demo.paths).snapshot().facts}
    shown = {(r.fact.scope, r.fact.id, r.fact.revision) for r in app_root.facts.snapshot.rows}
    assert shown == on_disk


@pytest.mark.slow
def test_launch_loads_after_the_first_paint(qtbot, demo, settings):
    root = build(demo.paths, settings)
    qtbot.addWidget(root.window)
    root.launch()
    assert root.facts_tab.model.rowCount() == 0  # nothing read before the window painted
    qtbot.waitUntil(lambda: root.facts_tab.model.rowCount() == 11, timeout=5000)
    assert root.watcher.running
    root.shutdown()


@pytest.mark.slow
def test_transient_messages_keep_the_status_widgets(qtbot, app_root):
    w = app_root.window
    w.tabs.setCurrentWidget(app_root.facts_tab)
    w.show_message("Saved.", 200)
    assert w.message_label.text() == "Saved."
    assert w.paths_label.isVisible() and w.counts_label.isVisible()
    qtbot.waitUntil(lambda: w.message_label.text() == "", timeout=2000)


@pytest.mark.slow
def test_fact_context_menu_offers_edit_history_forget(qtbot, app_root):
    tab = app_root.facts_tab
    row = next(r for r in tab.model.rows if r.fact.name == "glossary")
    tab.select_key(row.key)
    menu = tab.context_menu()
    labels = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert labels == ["Edit…", "History", "Open in editor", "Show in folder",
                      "Export selected…", "Forget…"]
    with qtbot.waitSignal(tab.history_requested, timeout=1000) as blocker:
        menu.actions()[1].trigger()
    assert blocker.args[0].key == row.key


@pytest.mark.slow
def test_cancelling_the_first_read_says_so_and_f5_reads_again(qtbot, demo, settings):
    root = build(demo.paths, settings)
    qtbot.addWidget(root.window)
    root.window.show()
    release = threading.Event()
    original = root.backend.facts

    def slow_facts(token=None):
        release.wait(5)
        return original(token)

    root.backend.facts = slow_facts  # type: ignore[method-assign]
    root.start()
    try:
        assert not root.window.progress.isHidden()
        with qtbot.waitSignal(root.tasks.finished, timeout=5000,
                              check_params_cb=lambda op: op.label == "Reading the stores"):
            root.window.cancel_button.click()
            release.set()
        assert "cancelled" in root.facts_tab.summary.text().lower()
        assert root.facts_tab.model.rowCount() == 0
        root.window.refresh_action.trigger()
        qtbot.waitUntil(lambda: root.facts_tab.model.rowCount() == 11, timeout=5000)
    finally:
        root.shutdown()


def test_store_paths_are_elided_again_when_the_window_is_resized(qtbot, settings):
    window = MainWindow(settings)
    qtbot.addWidget(window)
    window.resize(1100, 600)
    window.show()
    qtbot.waitExposed(window)
    project, global_ = "/home/someone/" + "p" * 120 + "/facts", "/home/someone/" + "g" * 120
    window.show_paths(project, global_)
    wide = window.paths_label.text()
    window.resize(500, 600)
    qtbot.waitUntil(lambda: window.paths_label.text() != wide, timeout=3000)
    assert len(window.paths_label.text()) < len(wide)
    assert "…" in window.paths_label.text()
    assert window.paths_text() == f"project: {project}   global: {global_}"  # kept whole
