"""Everyday conveniences: edit keys, tab keys, Help, accessible names, Ctrl+Q, Open workspace,
open/reveal, search highlighting, multi-select forget and export, revisions of every field."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from context_center.widgets.main_window import quit_app
from context_engine.facts.memory import Memory
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QLineEdit,
    QTextEdit,
)

ROOT = Path(__file__).resolve().parents[2]


def _row(root, name: str, scope: str = "project"):
    return next(r for r in root.facts_tab.model.rows
                if r.fact.name == name and r.fact.scope == scope)


def _focus_table(qtbot, root, name: str):
    tab = root.facts_tab
    root.window.tabs.setCurrentWidget(tab)
    root.window.activateWindow()
    qtbot.waitUntil(root.window.isActiveWindow, timeout=2000)
    tab.select_key(_row(root, name).key)
    tab.table.setFocus()
    qtbot.waitUntil(tab.table.hasFocus, timeout=2000)


@pytest.mark.slow
def test_return_and_f2_open_the_editor(qtbot, app_root):
    editor = app_root.writes.editor
    for key in (Qt.Key.Key_Return, Qt.Key.Key_F2):
        _focus_table(qtbot, app_root, "ledger-format")
        qtbot.keyClick(app_root.facts_tab.table, key)
        qtbot.waitUntil(editor.isVisible, timeout=3000)
        assert editor.draft.name == "ledger-format"
        editor.reject()
        qtbot.waitUntil(lambda: not editor.isVisible(), timeout=2000)


@pytest.mark.slow
def test_ctrl_tab_and_ctrl_number_switch_tabs(qtbot, app_root):
    w = app_root.window
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=2000)
    w.tabs.setCurrentIndex(0)
    qtbot.keyClick(w, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert w.tabs.currentIndex() == 1
    qtbot.keyClick(w, Qt.Key.Key_Backtab,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert w.tabs.currentIndex() == 0
    for number in range(1, 6):
        qtbot.keyClick(w, getattr(Qt.Key, f"Key_{number}"), Qt.KeyboardModifier.ControlModifier)
        assert w.tabs.currentIndex() == number - 1


@pytest.mark.slow
def test_help_menu_lists_shortcuts_and_about(qtbot, app_root):
    w = app_root.window
    menus = [a.text() for a in w.menuBar().actions()]
    assert "&Help" in menus
    w.shortcuts_action.trigger()
    text = w.help_box.text()
    for key in ("Ctrl+F", "Ctrl+N", "Ctrl+S", "Ctrl+Z", "Ctrl+Q", "F5", "F2", "Del", "Ctrl+Tab"):
        assert key in text, key
    w.help_box.close()
    w.about_action.trigger()
    assert "Context Center" in w.help_box.text()
    w.help_box.close()


@pytest.mark.slow
def test_every_control_has_an_accessible_name(qtbot, app_root):
    kinds = (QAbstractButton, QLineEdit, QComboBox, QAbstractItemView, QTextEdit)
    missing = []
    for widget in (app_root.window, app_root.writes.editor, app_root.writes.conflict):
        children = [c for kind in kinds for c in widget.findChildren(kind)]
        for child in children:
            if isinstance(child, QAbstractButton) and child.text():
                continue  # a button's text is its accessible name
            parent = type(child.parent()).__name__
            if parent in ("QFrame", "QTableView", "QTreeView", "QLineEdit", "QMenuBar",
                          "QSpinBox", "QComboBoxPrivateContainer") or \
                    child.objectName().startswith("qt_"):
                continue  # Qt's own parts: headers, combo popups, clear buttons
            if not child.accessibleName():
                missing.append(f"{type(child).__name__} in {type(widget).__name__}")
    assert missing == []


@pytest.mark.slow
def test_ctrl_q_closes_every_window(qtbot, app_root, demo):
    other = app_root.daily_use.open_workspace(demo.workspace)
    assert other is not None
    qtbot.addWidget(other.window)
    qtbot.waitUntil(lambda: other.facts_tab.model.rowCount() == 11, timeout=5000)
    assert app_root.window.quit_action.shortcut().toString() == "Ctrl+Q"
    assert app_root.window.quit_action.shortcutContext() == \
        Qt.ShortcutContext.ApplicationShortcut
    quit_app()
    qtbot.waitUntil(lambda: not app_root.window.isVisible() and not other.window.isVisible(),
                    timeout=3000)
    other.shutdown()


@pytest.mark.slow
def test_open_workspace_refuses_a_missing_folder(qtbot, app_root, tmp_path):
    assert app_root.daily_use.open_workspace(tmp_path / "nope") is None
    assert app_root.window.open_workspace_action.text() == "&Open workspace…"


@pytest.mark.slow
def test_open_in_editor_and_reveal_use_the_fact_file(qtbot, app_root):
    opened: list[tuple[str, Path]] = []

    class FakeDesktop:
        def open_file(self, path: Path) -> bool:
            opened.append(("open", path))
            return True

        def reveal(self, path: Path) -> bool:
            opened.append(("reveal", path))
            return True

    app_root.daily_use.desktop = FakeDesktop()
    tab = app_root.facts_tab
    row = _row(app_root, "ledger-format")
    tab.select_key(row.key)
    tab.open_button.click()
    tab.reveal_button.click()
    assert opened == [("open", row.fact.path), ("reveal", row.fact.path)]


@pytest.mark.slow
def test_search_words_are_highlighted_in_the_detail(qtbot, app_root):
    tab = app_root.facts_tab
    qtbot.keyClicks(tab.search, "cents")
    qtbot.waitUntil(lambda: 1 <= tab.model.rowCount() < 11, timeout=3000)
    tab.table.selectRow(0)
    qtbot.waitUntil(lambda: len(tab.detail.extraSelections()) >= 1, timeout=3000)
    marks = tab.detail.extraSelections()
    assert all(m.cursor.selectedText().lower() == "cents" for m in marks)


@pytest.mark.slow
def test_multi_select_forget_asks_for_each_and_export_copies(qtbot, app_root, demo, tmp_path):
    tab = app_root.facts_tab
    rows = [_row(app_root, "ledger-format"), _row(app_root, "csv-exports")]
    tab.table.clearSelection()
    for row in rows:
        tab.table.selectionModel().select(
            tab.model.index(tab.model.find(row.key), 0),
            tab.table.selectionModel().SelectionFlag.Select
            | tab.table.selectionModel().SelectionFlag.Rows)
    assert len(tab.selected_rows()) == 2
    assert tab.forget_button.text() == "Forget selected…" and not tab.edit_button.isEnabled()
    written: list[list[Path]] = []
    app_root.daily_use.export(tab.selected_rows(), tmp_path / "out", written.append)
    qtbot.waitUntil(lambda: written != [], timeout=3000)
    for row in rows:
        assert (tmp_path / "out" / row.fact.path.name).read_bytes() == row.fact.path.read_bytes()
    seen: list[object] = []
    app_root.writes.confirmation.shown.connect(seen.append)
    with qtbot.waitSignal(app_root.writes.confirmation.shown, timeout=3000):
        tab.forget_button.click()
    app_root.writes.confirm.cancel_button.click()
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=3000)
    app_root.writes.confirm.cancel_button.click()
    assert all(row.fact.path.exists() for row in rows)


@pytest.mark.slow
def test_revision_diff_shows_frontmatter_and_summaries(qtbot, app_root, demo):
    memory = Memory(demo.paths)
    memory.save(name="project/ledger-format.md", description="Ledger amounts in integer cents")
    tab = app_root.archive_tab
    row = _row(app_root, "ledger-format")
    app_root.facts_tab.select_key(row.key)
    qtbot.waitUntil(lambda: tab.revisions_model.rowCount() == 2, timeout=5000)
    rows = tab.revisions_model.rows
    assert rows[0][2] == "description changed" and rows[1][2] == "created"
    tab.revisions.selectRow(1)
    text = tab.diff.toPlainText()
    assert "+description: Ledger amounts in integer cents" in text
    assert "-description:" in text


@pytest.mark.slow
def test_window_fits_a_screen_at_200_percent(tmp_path):
    code = (
        "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from PySide6.QtCore import QSettings\n"
        "app = QApplication([])\n"
        "from context_center.widgets.main_window import MainWindow\n"
        "w = MainWindow(QSettings(sys.argv[3], QSettings.Format.IniFormat))\n"
        "room = app.primaryScreen().availableGeometry()\n"
        "print(w.width() <= room.width(), w.height() <= room.height())\n"
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_SCALE_FACTOR="2")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "app"), str(ROOT / "ui"),
                          str(tmp_path / "s.ini")], env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    assert out == ["True", "True"]


def _select_workspace_agents(qtbot, root, demo):
    tab = root.instructions_tab
    path = demo.workspace / "AGENTS.md"
    qtbot.waitUntil(lambda: tab.tree_model.rowCount() >= 3, timeout=5000)
    assert tab.select_node(lambda payload: getattr(payload, "path", None) == path)
    qtbot.waitUntil(tab.edit_button.isEnabled, timeout=2000)
    return path


@pytest.mark.slow
def test_instruction_files_are_edited_atomically_and_the_tree_follows(qtbot, app_root, demo):
    root = app_root
    edits = root.daily_use.instruction_edits
    path = _select_workspace_agents(qtbot, root, demo)
    (demo.workspace / "extra.md").write_text("Extra rules.\n", "utf-8")
    inode = path.stat().st_ino
    mode = path.stat().st_mode
    root.instructions_tab.edit_button.click()
    qtbot.waitUntil(edits.editor.isVisible, timeout=3000)
    edits.editor.text_edit.appendPlainText("@extra.md")
    with qtbot.waitSignal(edits.saved, timeout=3000):
        edits.editor.buttons.accepted.emit()
    assert path.read_text("utf-8").rstrip().endswith("@extra.md")
    assert path.stat().st_ino != inode and path.stat().st_mode == mode  # replaced, same mode

    def import_shown() -> bool:
        tab = root.instructions_tab
        return tab.select_node(lambda p: getattr(p, "path", None) == demo.workspace / "extra.md")

    qtbot.waitUntil(import_shown, timeout=5000)  # the import tree refreshed at once


@pytest.mark.slow
def test_an_instruction_file_changed_on_disk_is_never_overwritten(qtbot, app_root, demo):
    edits = app_root.daily_use.instruction_edits
    path = _select_workspace_agents(qtbot, app_root, demo)
    app_root.instructions_tab.edit_button.click()
    qtbot.waitUntil(edits.editor.isVisible, timeout=3000)
    edits.editor.text_edit.setPlainText("My version.\n")
    path.write_text("Someone else's version.\n", "utf-8")
    with qtbot.waitSignal(edits.conflict_shown, timeout=3000):
        edits.editor.buttons.accepted.emit()
    qtbot.keyClick(edits.conflict.focusWidget() or edits.conflict, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not edits.conflict.isVisible(), timeout=2000)
    assert path.read_text("utf-8") == "Someone else's version.\n"
    assert edits.editor.isVisible() and edits.editor.text_edit.toPlainText() == "My version.\n"
    with qtbot.waitSignal(edits.conflict_shown, timeout=3000):
        edits.editor.buttons.accepted.emit()
    with qtbot.waitSignal(edits.saved, timeout=3000):
        edits.conflict.save_button.click()
    assert path.read_text("utf-8") == "My version.\n"
