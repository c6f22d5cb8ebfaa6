"""Suggestions (S11.5): edit before accepting; a skill is written once and never overwritten."""

from __future__ import annotations

import pytest
from context_engine.facts.memory import Memory
from context_engine.suggestions import SkillCandidate


def _open_tab(qtbot, root):
    root.window.tabs.setCurrentWidget(root.suggestions_tab)
    qtbot.waitUntil(lambda: root.suggestions_tab.model.rowCount() > 0, timeout=10000)


@pytest.mark.slow
def test_edit_before_accept_writes_the_edited_fact(qtbot, app_root, demo):
    _open_tab(qtbot, app_root)
    tab = app_root.suggestions_tab
    candidate = next(c for c in tab.model.rows if "pnpm" in c.body)
    tab.table.selectRow(tab.model.find(candidate.id))
    qtbot.waitUntil(lambda: "Evidence" in tab.detail.toPlainText(), timeout=3000)
    tab.edit_button.click()
    editor = app_root.suggestions.editor
    assert editor.isVisible() and editor.body_edit.toPlainText() == candidate.body
    editor.name_edit.setText("use-pnpm")
    editor.title_edit.setText("Use pnpm in the admin UI")
    editor.scope_box.setCurrentText("project")
    with qtbot.waitSignal(app_root.suggestions.accepted, timeout=5000):
        editor.buttons.accepted.emit()
    fact = Memory(demo.paths).resolve("project/use-pnpm.md")
    assert fact.title == "Use pnpm in the admin UI"
    assert not editor.isVisible()
    qtbot.waitUntil(lambda: any(r.fact.name == "use-pnpm" for r in app_root.facts_tab.model.rows),
                    timeout=3000)


@pytest.mark.slow
def test_dismiss_hides_without_writing(qtbot, app_root, demo):
    _open_tab(qtbot, app_root)
    tab = app_root.suggestions_tab
    count = tab.model.rowCount()
    before = {f.id for f in Memory(demo.paths).snapshot().facts}
    tab.table.selectRow(0)
    tab.dismiss_button.click()
    assert tab.model.rowCount() == count - 1
    assert {f.id for f in Memory(demo.paths).snapshot().facts} == before


@pytest.mark.slow
def test_skill_is_written_once(qtbot, app_root, demo):
    skill = SkillCandidate("skill-1", "release-checklist", "Cut a release",
                           ("s1: tag", "s2: tag"), "1. Tag\n2. Push\n")
    presenter = app_root.suggestions
    with qtbot.waitSignal(presenter.accepted, timeout=5000) as blocker:
        presenter._accept_skill(skill)
    path = blocker.args[0]
    assert path.name == "SKILL.md" and "release-checklist" in str(path)
    original = path.read_bytes()
    presenter._accept_skill(skill)
    qtbot.waitUntil(lambda: "already exists" in app_root.suggestions_tab.status.text(),
                    timeout=5000)
    assert path.read_bytes() == original


@pytest.mark.slow
def test_a_cancelled_scan_can_be_started_again(qtbot, app_root):
    presenter = app_root.suggestions
    presenter.scan()
    assert presenter._scanning is not None
    scanning = presenter._scanning
    with qtbot.waitSignal(app_root.tasks.finished, timeout=10000,
                          check_params_cb=lambda op: op is scanning):
        app_root.window.cancel_button.click()
    assert app_root.window.progress.isHidden()
    with qtbot.waitSignal(presenter.scanned, timeout=10000):
        presenter.scan()
    assert app_root.suggestions_tab.model.rowCount() > 0
