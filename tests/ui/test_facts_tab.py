"""Facts tab acceptance (S13.2-S13.5): live, echo-free, diagnostics, conflicts, forget."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from context_center.dialogs.conflict_dialog import RELOAD
from context_engine.facts.memory import Memory

ROOT = Path(__file__).resolve().parents[2]


def _row(root, name: str, scope: str = "project"):
    model = root.facts_tab.model
    for row in model.rows:
        if row.fact.name == name and row.fact.scope == scope:
            return row
    return None


def _external_save(demo, **fields) -> None:
    """Another process writes through the engine (as the CLI or an agent would)."""
    code = (
        "import sys, json; sys.path[:0] = [sys.argv[1]]\n"
        "from context_engine.paths import EnginePaths\n"
        "from context_engine.facts.memory import Memory\n"
        "paths = EnginePaths.resolve(home=sys.argv[2], workspace=sys.argv[3])\n"
        "Memory(paths).save(**json.loads(sys.argv[4]))\n"
    )
    import json

    subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "app"), str(demo.home), str(demo.workspace),
         json.dumps(fields)],
        check=True,
        timeout=30,
    )


def _editing_meanwhile(qtbot, app_root, demo, name: str, theirs: str):
    """The write flows with the editor open on project ``name``, which another process then
    saves with the body ``theirs``."""
    flows = app_root.writes
    flows.edit(_row(app_root, name))
    qtbot.waitUntil(flows.editor.isVisible, timeout=3000)
    _external_save(demo, name=f"project/{name}.md", body=theirs)
    return flows


@pytest.mark.slow
def test_demo_populates_the_facts_table(app_root, qtmodeltester):
    model = app_root.facts_tab.model
    names = {(r.fact.name, r.fact.scope) for r in model.rows}
    assert ("release-target", "project") in names
    assert ("release-target", "global") in names
    assert _row(app_root, "release-target", "global").overridden
    assert "Possible duplicate" in _row(app_root, "csv-exports").note
    assert {r.freshness for r in model.rows} >= {"fresh", "stale"}
    qtmodeltester.check(model)
    qtmodeltester.check(app_root.facts_tab.diagnostics_model)


@pytest.mark.slow
def test_filters_run_off_thread_and_narrow_the_table(qtbot, app_root):
    tab = app_root.facts_tab
    tab.scope_box.setCurrentIndex(tab.scope_box.findData("global"))
    qtbot.waitUntil(lambda: all(r.fact.scope == "global" for r in tab.model.rows), timeout=3000)
    tab.search.setText("glossary wiki")
    qtbot.waitUntil(lambda: [r.fact.name for r in tab.model.rows] == ["glossary"], timeout=3000)


@pytest.mark.slow
def test_external_change_appears_within_a_second(qtbot, app_root, demo):
    _external_save(demo, name="project/deploy-window.md", title="Deploy window",
                   description="When deploys are allowed", body="Tuesdays and Thursdays only.",
                   type="project", scope="project")
    qtbot.waitUntil(lambda: _row(app_root, "deploy-window") is not None, timeout=1000)


@pytest.mark.slow
def test_malformed_file_becomes_a_diagnostic(qtbot, app_root, demo):
    bad = demo.paths.project_store / "broken.md"
    bad.write_bytes(b"---\nname: [unclosed\nmetadata: {\n---\n\nbody\n")
    qtbot.waitUntil(lambda: app_root.facts_tab.diagnostics_model.rowCount() > 0, timeout=3000)
    assert bad.read_bytes().startswith(b"---\nname: [unclosed")  # never rewritten
    assert not app_root.facts_tab.diagnostics.isHidden()


@pytest.mark.slow
def test_own_save_echo_causes_no_reload_or_conflict(qtbot, app_root):
    flows = app_root.writes
    row = _row(app_root, "api-docs")
    flows.edit(row)
    qtbot.waitUntil(flows.editor.isVisible, timeout=3000)
    flows.editor.body_edit.setPlainText("The OpenAPI spec moved to `api/v2/openapi.yaml`.")
    with qtbot.waitSignal(app_root.facts.snapshot_applied, timeout=3000):
        flows.editor.buttons.accepted.emit()
    qtbot.waitUntil(lambda: _row(app_root, "api-docs").fact.revision == 2, timeout=3000)
    applied: list[object] = []
    conflicts: list[object] = []
    app_root.facts.snapshot_applied.connect(applied.append)
    flows.conflict_shown.connect(lambda: conflicts.append(1))
    qtbot.wait(900)  # the watcher's echo of our own write arrives and is recognised
    assert applied == []
    assert conflicts == []
    assert not flows.conflict.isVisible()


@pytest.mark.slow
def test_edit_conflict_shows_dialog_and_leaves_the_file(qtbot, app_root, demo):
    flows = _editing_meanwhile(qtbot, app_root, demo, "release-target",
                               "Changed by another process.")
    qtbot.waitUntil(lambda: "now revision 4" in flows.editor.status.text(), timeout=3000)
    path = demo.paths.project_store / "release-target.md"
    on_disk = path.read_bytes()
    flows.editor.body_edit.setPlainText("My edit.")
    with qtbot.waitSignal(flows.conflict_shown, timeout=3000):
        flows.editor.buttons.accepted.emit()
    assert flows.conflict.isVisible()
    qtbot.wait(300)
    assert path.read_bytes() == on_disk  # nothing written until the person chooses
    diff = flows.conflict._diff.toPlainText()  # shown at once: on disk against my edit
    assert "-Changed by another process." in diff and "+My edit." in diff
    assert flows.conflict.isVisible() and path.read_bytes() == on_disk
    flows.conflict.reload_button.click()
    assert flows.editor.body_edit.toPlainText().strip() == "Changed by another process."
    assert Memory(demo.paths).resolve("project/release-target.md").revision == 4
    assert RELOAD == "reload"


@pytest.mark.slow
def test_conflict_save_as_new_revision(qtbot, app_root, demo):
    flows = _editing_meanwhile(qtbot, app_root, demo, "test-command", "Changed elsewhere.")
    flows.editor.body_edit.setPlainText("Mine wins, knowingly.")
    with qtbot.waitSignal(flows.conflict_shown, timeout=3000):
        flows.editor.buttons.accepted.emit()
    with qtbot.waitSignal(flows.saved, timeout=3000):
        flows.conflict.save_button.click()
    fact = Memory(demo.paths).resolve("project/test-command.md")
    assert fact.revision == 3 and fact.body.strip() == "Mine wins, knowingly."


@pytest.mark.slow
def test_forget_cancel_keeps_and_ok_archives(qtbot, app_root, demo):
    flows = app_root.writes
    path = demo.paths.project_store / "owner-contact.md"
    with qtbot.waitSignal(flows.confirmation.shown, timeout=3000) as shown:
        flows.forget(_row(app_root, "owner-contact"))
    request = shown.args[0]
    assert request.tool == "forget" and request.reference == "project/owner-contact.md"
    assert flows.confirm.isVisible()
    assert flows.confirm.cancel_button.isDefault()
    assert "revision 1, kept in the archive" in flows.confirm._facts.text()
    with qtbot.waitSignal(flows.forgotten, timeout=3000) as outcome:
        flows.confirm.cancel_button.click()
    assert not outcome.args[0].written
    assert path.exists()
    with qtbot.waitSignal(flows.confirmation.shown, timeout=3000):
        flows.forget(_row(app_root, "owner-contact"))
    with qtbot.waitSignal(flows.forgotten, timeout=3000) as outcome:
        flows.confirm.ok_button.click()
    assert outcome.args[0].written
    assert not path.exists()
    archived = list((demo.paths.project_store / ".archive").glob("*-owner-contact.md"))
    assert len(archived) == 1
    qtbot.waitUntil(lambda: _row(app_root, "owner-contact") is None, timeout=3000)


@pytest.mark.slow
def test_confirmation_refuses_on_the_gui_thread_and_at_exit(qtbot, app_root):
    from context_engine.policy.confirmation import ConfirmationRequest

    request = ConfirmationRequest("forget", "why", (), "project/x.md", "project", "project",
                                  "body", "", 1, None, "d")
    service = app_root.writes.confirmation
    assert service.confirm(request) is False  # GUI thread: fail closed, never block
    import threading

    answers: list[bool] = []
    worker = threading.Thread(target=lambda: answers.append(service.confirm(request)))
    with qtbot.waitSignal(service.shown, timeout=3000):
        worker.start()
    service.close()  # application exit: the waiting writer is told "no"
    worker.join(5)
    assert answers == [False]


@pytest.mark.slow
def test_create_from_the_editor(qtbot, app_root, demo):
    flows = app_root.writes
    app_root.window.new_fact_requested.emit()
    assert flows.editor.isVisible()
    flows.editor.title_edit.setText("Deploy freeze")
    flows.editor.description_edit.setText("No deploys on Fridays")
    flows.editor.body_edit.setPlainText("Deploys are frozen from Friday noon.")
    with qtbot.waitSignal(flows.saved, timeout=3000):
        app_root.window.save_requested.emit()
    assert (demo.paths.project_store / "deploy-freeze.md").exists()
    qtbot.waitUntil(lambda: _row(app_root, "deploy-freeze") is not None, timeout=3000)
