"""Edits are never lost: Return and Esc in every write-path dialog, from every focus position,
never discard or overwrite; the conflict dialog is safe when reused; undo of the last write."""

from __future__ import annotations

import pytest
from context_center.dialogs.conflict_dialog import KEEP_EDITING, ConflictDialog
from context_engine.facts.memory import Memory
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from support.keys import every_position, focus_positions, press_from

KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape)


def _row(root, name: str, scope: str = "project"):
    return next(r for r in root.facts_tab.model.rows
                if r.fact.name == name and r.fact.scope == scope)


def _outside_write(demo, name: str, body: str) -> None:
    Memory(demo.paths).save(name=name, body=body)


@pytest.mark.slow
def test_conflict_dialog_keys_never_choose_reload_or_save(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    dialog = ConflictDialog(parent)
    answers: list[str] = []

    def open_dialog():
        dialog.ask("release-target", 3, 4, "title: a\n\nold", "title: b\n\nmine", answers.append)
        qtbot.waitUntil(dialog.isVisible, timeout=2000)
        return dialog

    for key in KEYS:
        answers.clear()
        positions = every_position(qtbot, open_dialog, key, lambda w: None)
        assert positions >= 4  # reload, save, keep editing, the diff
        assert answers == [KEEP_EDITING] * positions, key
    # The reuse case: after a click on "Save as new revision", Return must not save again.
    open_dialog()
    dialog.save_button.click()
    assert answers[-1] == "save_as_new"
    open_dialog()
    assert dialog.cancel_button.hasFocus() or dialog.focusWidget() is dialog.cancel_button
    press_from(qtbot, dialog, dialog.focusWidget(), Qt.Key.Key_Return)
    assert answers[-1] == KEEP_EDITING


@pytest.mark.slow
def test_conflict_dialog_driven_twice_in_a_row_never_overwrites(qtbot, app_root, demo):
    flows = app_root.writes
    memory = Memory(demo.paths)
    flows.edit(_row(app_root, "release-target"))
    qtbot.waitUntil(flows.editor.isVisible, timeout=3000)
    flows.editor.body_edit.setPlainText("My edit.")
    _outside_write(demo, "project/release-target.md", "CLI wrote revision 4.")
    with qtbot.waitSignal(flows.conflict_shown, timeout=3000):
        flows.editor.buttons.accepted.emit()
    # First use: Return from the focus the dialog opens with keeps editing.
    press_from(qtbot, flows.conflict, flows.conflict.focusWidget(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not flows.conflict.isVisible(), timeout=2000)
    assert memory.resolve("project/release-target.md").revision == 4
    assert flows.editor.isVisible() and flows.editor.body_edit.toPlainText() == "My edit."
    # Second time: save on top, explicitly, by a click.
    with qtbot.waitSignal(flows.conflict_shown, timeout=3000):
        flows.editor.buttons.accepted.emit()
    with qtbot.waitSignal(flows.saved, timeout=3000):
        flows.conflict.save_button.click()
    assert memory.resolve("project/release-target.md").revision == 5
    # Third: another outside write while editing again; Return must not save r7 on r6.
    flows.edit(_row(app_root, "release-target"))
    qtbot.waitUntil(lambda: flows.editor.isVisible() and
                    flows.editor.draft.base_revision == 5, timeout=3000)
    flows.editor.body_edit.setPlainText("Second edit.")
    _outside_write(demo, "project/release-target.md", "CLI wrote revision 6.")
    with qtbot.waitSignal(flows.conflict_shown, timeout=3000):
        flows.editor.buttons.accepted.emit()
    for key in (Qt.Key.Key_Return, Qt.Key.Key_Escape):
        press_from(qtbot, flows.conflict, flows.conflict.focusWidget(), key)
        qtbot.waitUntil(lambda: not flows.conflict.isVisible(), timeout=2000)
        qtbot.wait(200)
        fact = memory.resolve("project/release-target.md")
        assert (fact.revision, fact.body.strip()) == (6, "CLI wrote revision 6.")
        if key == Qt.Key.Key_Return:
            with qtbot.waitSignal(flows.conflict_shown, timeout=3000):
                flows.editor.buttons.accepted.emit()
    assert flows.editor.body_edit.toPlainText() == "Second edit."


@pytest.mark.slow
def test_esc_and_cancel_in_the_editor_ask_before_dropping_typed_text(qtbot, app_root):
    flows = app_root.writes
    editor = flows.editor
    flows.edit(_row(app_root, "ledger-format"))
    qtbot.waitUntil(editor.isVisible, timeout=3000)
    # Nothing typed: Esc simply closes.
    press_from(qtbot, editor, editor.title_edit, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not editor.isVisible(), timeout=2000)
    flows.edit(_row(app_root, "ledger-format"))
    qtbot.waitUntil(editor.isVisible, timeout=3000)
    editor.body_edit.setPlainText("Typed and not saved.")
    for position in focus_positions(editor):
        if position is editor.buttons.button(editor.buttons.StandardButton.Save):
            continue  # Return there saves (a checked write, never an overwrite)
        press_from(qtbot, editor, position, Qt.Key.Key_Escape)
        qtbot.waitUntil(editor.discard.isVisible, timeout=2000)
        assert editor.isVisible()
        for key in KEYS:  # every key in the question keeps editing
            for spot in focus_positions(editor.discard):
                if not editor.discard.isVisible():
                    editor.reject()
                    qtbot.waitUntil(editor.discard.isVisible, timeout=2000)
                press_from(qtbot, editor.discard, spot, key)
                qtbot.waitUntil(lambda: not editor.discard.isVisible(), timeout=2000)
                assert editor.isVisible()
                assert editor.body_edit.toPlainText() == "Typed and not saved."
    editor.buttons.button(editor.buttons.StandardButton.Cancel).click()
    qtbot.waitUntil(editor.discard.isVisible, timeout=2000)
    editor.discard.discard_button.click()
    qtbot.waitUntil(lambda: not editor.isVisible(), timeout=2000)


@pytest.mark.slow
def test_closing_the_window_with_an_unsaved_edit_asks(qtbot, app_root):
    flows = app_root.writes
    flows.new_fact()
    qtbot.waitUntil(flows.editor.isVisible, timeout=3000)
    flows.editor.title_edit.setText("Half typed")
    assert app_root.window.close() is False
    qtbot.waitUntil(flows.editor.discard.isVisible, timeout=2000)
    assert app_root.window.isVisible() and flows.editor.isVisible()
    flows.editor.discard.keep_button.click()
    assert flows.editor.title_edit.text() == "Half typed"


@pytest.mark.slow
def test_forget_confirmation_keys_never_archive(qtbot, app_root, demo):
    flows = app_root.writes
    path = demo.paths.project_store / "owner-contact.md"
    outcomes: list[object] = []
    flows.forgotten.connect(outcomes.append)
    dialog = flows.confirm

    def open_dialog():
        if not dialog.isVisible():
            with qtbot.waitSignal(flows.confirmation.shown, timeout=3000):
                flows.forget(_row(app_root, "owner-contact"))
        return dialog

    for key in KEYS:
        every_position(qtbot, open_dialog, key, lambda w: None)
        qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=3000)
        assert path.exists()
    qtbot.waitUntil(lambda: len(outcomes) >= 6, timeout=5000)
    assert not any(getattr(o, "written", False) for o in outcomes)
    assert "Forget project/owner-contact.md?" in dialog._summary.text()
    assert "Tool:" not in dialog._facts.text()


@pytest.mark.slow
def test_undo_restores_the_replaced_revision_and_is_itself_undoable(qtbot, app_root, demo):
    flows, window = app_root.writes, app_root.window
    memory = Memory(demo.paths)
    before = memory.resolve("project/ledger-format.md")
    flows.edit(_row(app_root, "ledger-format"))
    qtbot.waitUntil(flows.editor.isVisible, timeout=3000)
    flows.editor.body_edit.setPlainText("Rewritten ledger format.")
    with qtbot.waitSignal(flows.undo_changed, timeout=3000):
        flows.editor.buttons.accepted.emit()
    saved = before.revision + 1
    assert window.message_label.text().startswith(f"Saved revision {saved}")
    assert window.message_label.text().endswith("—")
    assert window.undo_button.isVisible() and window.undo_action.isEnabled()
    with qtbot.waitSignal(flows.undo_changed, timeout=3000,
                          check_params_cb=lambda step: step is not None):
        window.undo_button.click()
    undone = memory.resolve("project/ledger-format.md")
    assert (undone.revision, undone.body) == (saved + 1, before.body)
    assert window.undo_button.isVisible()
    with qtbot.waitSignal(flows.undo_changed, timeout=3000,
                          check_params_cb=lambda step: step is not None):
        window.undo_action.trigger()  # Ctrl+Z: the undo is undone, again as a new revision
    redone = memory.resolve("project/ledger-format.md")
    assert (redone.revision, redone.body.strip()) == (saved + 2, "Rewritten ledger format.")
