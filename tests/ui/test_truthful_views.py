"""Truthful views: panes follow what exists; copies are conflicts with both paths; a missing
--workspace is an error; dismissed suggestions survive a restart (state root, 0600)."""

from __future__ import annotations

import shutil
import stat

import pytest
from context_center.__main__ import main
from context_center.application import build
from context_engine.facts.memory import Memory
from PySide6.QtCore import QSettings


def _row(root, name: str, scope: str = "project"):
    return next((r for r in root.facts_tab.model.rows
                 if r.fact.name == name and r.fact.scope == scope), None)


def _pane_is_empty(tab) -> bool:
    names = ("edit_button", "forget_button", "history_button", "open_button", "reveal_button")
    buttons = [getattr(tab, n) for n in names if hasattr(tab, n)]
    return "Select a fact" in tab.detail.toPlainText() and not any(
        b.isEnabled() for b in buttons)


def _select(qtbot, root, name: str, scope: str = "project"):
    row = _row(root, name, scope)
    root.facts_tab.select_key(row.key)
    qtbot.waitUntil(lambda: row.fact.display_title in root.facts_tab.detail.toPlainText(),
                    timeout=3000)
    assert root.facts_tab.edit_button.isEnabled()
    return row


@pytest.mark.slow
def test_forget_empties_the_detail_pane(qtbot, app_root):
    tab = app_root.facts_tab
    row = _select(qtbot, app_root, "owner-contact")
    with qtbot.waitSignal(app_root.writes.confirmation.shown, timeout=3000):
        app_root.writes.forget(row)
    app_root.writes.confirm.ok_button.click()
    qtbot.waitUntil(lambda: _row(app_root, "owner-contact") is None, timeout=5000)
    qtbot.waitUntil(lambda: _pane_is_empty(tab), timeout=3000)
    assert tab.selected_row() is None


@pytest.mark.slow
def test_a_filter_hiding_the_selected_row_empties_the_pane(qtbot, app_root):
    tab = app_root.facts_tab
    _select(qtbot, app_root, "owner-contact")
    qtbot.keyClicks(tab.search, "ledger")
    qtbot.waitUntil(lambda: 0 < tab.model.rowCount() < 11, timeout=3000)
    qtbot.waitUntil(lambda: _pane_is_empty(tab), timeout=3000)
    shown = tab.model.rowCount()
    assert _row(app_root, "owner-contact") is None
    assert f"{shown}</b> of 11 facts" in tab.summary.text()  # filtered counts: "3 of 11"
    total = sum(n for _, counts in tab.chart.rows for _, n in counts) // 3
    assert total == shown  # the chart describes the shown rows too


@pytest.mark.slow
def test_recover_empties_the_archive_pane(qtbot, app_root):
    tab = app_root.archive_tab
    qtbot.waitUntil(lambda: tab.archive_model.rowCount() == 2, timeout=5000)
    row = next(i for i, e in enumerate(tab.archive_model.rows) if e.fact.name == "old-ci")
    tab.archive.selectRow(row)
    qtbot.waitUntil(lambda: "Old CI" in tab.archive_detail.toPlainText(), timeout=3000)
    tab.recover_button.click()
    qtbot.waitUntil(lambda: tab.archive_model.rowCount() == 1, timeout=5000)
    assert tab.selected_entry() is None
    assert not tab.recover_button.isEnabled()
    assert tab.archive_detail.toPlainText() == ""


@pytest.mark.slow
def test_accept_empties_the_suggestion_pane(qtbot, app_root):
    root = app_root
    tab = root.suggestions_tab
    root.window.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.model.rowCount() > 0, timeout=10000)
    candidate = next(c for c in tab.model.rows if hasattr(c, "type"))
    tab.table.selectRow(tab.model.find(candidate.id))
    qtbot.waitUntil(lambda: tab.detail.toPlainText() != "", timeout=3000)
    with qtbot.waitSignal(root.suggestions.accepted, timeout=5000):
        tab.accept_button.click()
    assert tab.selected() is None
    assert not any(b.isEnabled() for b in (tab.accept_button, tab.edit_button,
                                           tab.dismiss_button))
    qtbot.waitUntil(lambda: tab.detail.toPlainText() == "", timeout=3000)


@pytest.mark.slow
def test_a_copied_fact_file_is_a_conflict_naming_both_paths(qtbot, app_root, demo):
    store = demo.paths.project_store
    shutil.copy2(store / "ledger-format.md", store / "ledger-format-copy.md")
    tab = app_root.facts_tab
    qtbot.waitUntil(lambda: sum(r.fact.name == "ledger-format" for r in tab.model.rows) == 2,
                    timeout=5000)
    rows = [r for r in tab.model.rows if r.fact.name == "ledger-format"]
    for row in rows:
        assert row.conflict
        assert str(store / "ledger-format.md") in row.note
        assert str(store / "ledger-format-copy.md") in row.note
    column = 3  # Scope: says "conflict" in the table itself
    index = tab.model.index(tab.model.rows.index(rows[0]), column)
    assert "conflict" in tab.model.data(index)


def test_a_missing_workspace_is_an_error(tmp_path, capsys):
    assert main(["--workspace", str(tmp_path / "no-such-dir")]) == 2
    assert "no such directory" in capsys.readouterr().err


@pytest.mark.slow
def test_dismissed_suggestions_stay_dismissed_after_a_restart(qtbot, demo, tmp_path):
    def started():
        root = build(demo.paths, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
        qtbot.addWidget(root.window)
        root.window.show()
        root.start()
        root.window.tabs.setCurrentWidget(root.suggestions_tab)
        qtbot.waitUntil(lambda: root.suggestions.result is not None, timeout=10000)
        return root

    first = started()
    tab = first.suggestions_tab
    candidate = tab.model.row_at(0)
    count = tab.model.rowCount()
    tab.table.selectRow(0)
    with qtbot.waitSignal(first.suggestions.dismissed_saved, timeout=5000):
        tab.dismiss_button.click()
    first.shutdown()
    path = first.suggestions.store.path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert str(demo.paths.state) in str(path)
    second = started()
    assert second.suggestions_tab.model.rowCount() == count - 1
    assert second.suggestions_tab.model.find(candidate.id) == -1
    second.shutdown()


@pytest.mark.slow
def test_an_outside_write_patches_one_row_without_rereading_the_stores(qtbot, app_root, demo):
    calls: list[int] = []
    original = app_root.backend.facts
    app_root.backend.facts = lambda token=None: calls.append(1) or original(token)
    Memory(demo.paths).save(name="project/ledger-format.md", body="Amounts in cents, always.")
    qtbot.waitUntil(lambda: (r := _row(app_root, "ledger-format")) is not None
                    and r.fact.revision == 2, timeout=5000)
    assert calls == []  # the watcher named the file: only it was read
    on_disk = {(f.scope, f.id, f.revision) for f in Memory(demo.paths).snapshot().facts}
    assert {(r.fact.scope, r.fact.id, r.fact.revision) for r in app_root.facts.snapshot.rows} \
        == on_disk
