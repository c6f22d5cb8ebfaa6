"""Editing every field (S13.2): a scope change moves the fact and the selection follows it."""

from __future__ import annotations

import pytest
from context_engine.facts.memory import Memory


@pytest.mark.slow
def test_edit_type_and_scope_moves_the_fact(qtbot, app_root, demo):
    flows = app_root.writes
    row = next(r for r in app_root.facts_tab.model.rows if r.fact.name == "api-docs")
    app_root.facts_tab.select_key(row.key)
    flows.edit(row)
    qtbot.waitUntil(flows.editor.isVisible, timeout=3000)
    assert flows.editor.name_edit.isReadOnly()
    flows.editor.scope_box.setCurrentText("global")
    flows.editor.type_box.setCurrentText("reference")
    flows.editor.title_edit.setText("API reference (all projects)")
    with qtbot.waitSignal(flows.saved, timeout=3000):
        flows.editor.buttons.accepted.emit()
    fact = Memory(demo.paths).resolve("global/api-docs.md")
    assert (fact.scope, fact.revision, fact.title) == ("global", 2, "API reference (all projects)")
    assert not (demo.paths.project_store / "api-docs.md").exists()
    qtbot.waitUntil(lambda: (sel := app_root.facts_tab.selected_row()) is not None
                    and sel.fact.scope == "global" and sel.fact.name == "api-docs", timeout=3000)


@pytest.mark.slow
def test_new_fact_needs_description_and_body(qtbot, app_root):
    flows = app_root.writes
    flows.new_fact()
    flows.editor.title_edit.setText("Only a title")
    flows.editor.buttons.accepted.emit()
    assert "required" in flows.editor.status.text()
    assert flows.editor.isVisible()
    flows.editor.reject()


def _create_refused(qtbot, flows, name: str, description: str, body: str,  # type: ignore[no-untyped-def]
                    scope: str = "", type: str = "") -> str:
    """Fill the New fact editor, submit it and return the failure it reports."""
    flows.new_fact()
    flows.editor.name_edit.setText(name)
    if scope:
        flows.editor.scope_box.setCurrentText(scope)
    if type:
        flows.editor.type_box.setCurrentText(type)
    flows.editor.description_edit.setText(description)
    flows.editor.body_edit.setPlainText(body)
    with qtbot.waitSignal(flows.failed, timeout=3000) as blocker:
        flows.editor.buttons.accepted.emit()
    return str(blocker.args[0])


@pytest.mark.slow
def test_create_duplicate_name_is_refused_and_nothing_written(qtbot, app_root, demo):
    flows = app_root.writes
    before = (demo.paths.project_store / "glossary.md").exists()
    assert "already exists" in _create_refused(qtbot, flows, "release-target", "dup", "dup body")
    assert flows.editor.isVisible()
    assert Memory(demo.paths).resolve("project/release-target.md").revision == 3
    assert before is False


@pytest.mark.slow
def test_create_never_touches_a_same_named_fact_in_the_other_scope(qtbot, app_root, demo):
    message = _create_refused(qtbot, app_root.writes, "Test Command", "Global default for tests",
                              "Run the tests before every commit.", scope="global",
                              type="feedback")
    assert "already exists" in message
    refs = {f.reference for f in Memory(demo.paths).snapshot().facts if f.name == "test-command"}
    assert refs == {"project/test-command.md"}  # not archived, not overwritten (S4.2, S4.11)
    assert not list((demo.paths.project_store / ".archive").glob("*test-command*"))
