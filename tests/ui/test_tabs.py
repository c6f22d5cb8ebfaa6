"""Every tab populated from the demo; restore/recover (S4.6/S4.8); suggestions; recall parity."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from context_engine.facts.memory import Memory
from context_engine.recall import Recaller

ROOT = Path(__file__).resolve().parents[2]


def _tree_bytes(folder: Path) -> dict[str, str]:
    """Every file's digest, except lock files and the derived index (readers may refresh it)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".lock" and p.parent.parts[-2:] != ("context-center", "index")
    }


@pytest.mark.slow
def test_every_tab_is_populated(qtbot, app_root, qtmodeltester):
    root = app_root
    qtbot.waitUntil(lambda: root.instructions_tab.tree_model.rowCount() >= 3, timeout=5000)
    qtbot.waitUntil(lambda: root.archive_tab.archive_model.rowCount() == 2, timeout=5000)
    qtbot.waitUntil(lambda: root.recall_tab.traces_model.rowCount() >= 1, timeout=5000)
    assert root.instructions_tab.diagnostics_model.rowCount() >= 1
    assert "# Instructions" in root.instructions_tab.block.toPlainText()
    root.window.tabs.setCurrentWidget(root.suggestions_tab)
    qtbot.waitUntil(lambda: root.suggestions_tab.model.rowCount() > 0, timeout=10000)
    row = next(r for r in root.facts_tab.model.rows if r.fact.name == "release-target"
               and r.fact.scope == "project")
    root.facts_tab.select_key(row.key)
    qtbot.waitUntil(lambda: root.archive_tab.revisions_model.rowCount() == 3, timeout=5000)
    for model in (
        root.instructions_tab.tree_model, root.instructions_tab.diagnostics_model,
        root.facts_tab.model, root.archive_tab.revisions_model, root.archive_tab.archive_model,
        root.suggestions_tab.model, root.recall_tab.traces_model, root.recall_tab.hits_model,
        root.recall_tab.drops_model,
    ):
        qtmodeltester.check(model)


@pytest.mark.slow
def test_clicking_a_diagnostic_selects_its_source(qtbot, app_root):
    tab = app_root.instructions_tab
    qtbot.waitUntil(lambda: tab.diagnostics_model.rowCount() >= 1, timeout=5000)
    diagnostic = tab.diagnostics_model.row_at(0)
    tab.diagnostics.clicked.emit(tab.diagnostics_model.index(0, 0))
    doc = tab.tree_model.node(tab.tree.currentIndex()).payload
    assert doc.path == diagnostic.source


def _select_release_target(qtbot, root):
    row = next(r for r in root.facts_tab.model.rows if r.fact.name == "release-target"
               and r.fact.scope == "project")
    root.facts_tab.select_key(row.key)
    qtbot.waitUntil(lambda: root.archive_tab.revisions_model.rowCount() == 3, timeout=5000)
    return row


@pytest.mark.slow
def test_restore_makes_a_new_revision(qtbot, app_root, demo):
    _select_release_target(qtbot, app_root)
    tab = app_root.archive_tab
    first = tab.revisions_model.find(1)
    tab.revisions.selectRow(first)
    assert "revision 1" in tab.diff.toPlainText()
    tab.restore_button.click()
    memory = Memory(demo.paths)
    qtbot.waitUntil(lambda: memory.resolve("project/release-target.md").revision == 4,
                    timeout=3000)
    fact = memory.resolve("project/release-target.md")
    v1 = next(f for f in memory.revisions(fact.id) if f.revision == 1)
    assert fact.body == v1.body
    assert [f.revision for f in memory.revisions(fact.id)] == [3, 2, 1]


@pytest.mark.slow
def test_recover_brings_the_fact_back_above_its_history(qtbot, app_root, demo):
    tab = app_root.archive_tab
    qtbot.waitUntil(lambda: tab.archive_model.rowCount() == 2, timeout=5000)
    row = next(i for i, e in enumerate(tab.archive_model.rows) if e.fact.name == "old-ci")
    tab.archive.selectRow(row)
    tab.recover_button.click()
    path = demo.paths.project_store / "old-ci.md"
    qtbot.waitUntil(path.exists, timeout=3000)
    fact = Memory(demo.paths).resolve("project/old-ci.md")
    assert fact.revision == 2  # one above the highest revision seen (S4.8)
    qtbot.waitUntil(lambda: tab.archive_model.rowCount() == 1, timeout=3000)


@pytest.mark.slow
def test_scan_never_writes_and_accept_writes_the_fact(qtbot, app_root, demo):
    before = _tree_bytes(demo.home)
    root = app_root
    root.window.tabs.setCurrentWidget(root.suggestions_tab)
    qtbot.waitUntil(lambda: root.suggestions_tab.model.rowCount() > 0, timeout=10000)
    assert _tree_bytes(demo.home) == before  # the scan wrote nothing
    candidate = next(c for c in root.suggestions_tab.model.rows if "lint" in c.body)
    root.suggestions_tab.table.selectRow(root.suggestions_tab.model.find(candidate.id))
    with qtbot.waitSignal(root.suggestions.accepted, timeout=5000) as blocker:
        root.suggestions_tab.accept_button.click()
    fact = blocker.args[0]
    assert Memory(demo.paths).resolve(fact.id).body.strip() == candidate.body.strip()
    assert root.suggestions_tab.model.find(candidate.id) == -1


@pytest.mark.slow
def test_recall_tab_matches_the_engine_and_cli(qtbot, app_root, demo):
    message = "which release branch do we publish from?"
    tab = app_root.recall_tab
    tab.message.setText(message)
    with qtbot.waitSignal(app_root.recall.ran, timeout=5000) as blocker:
        tab.run_button.click()
    run = blocker.args[0]
    assert "<memory-recall>" in run.block
    assert tab.block.toPlainText() == run.block
    # Ran in a child process: the app holds no live recall index (bounded memory at 100k).
    service = app_root.backend.catalog._shared.service
    assert service is None or service._recaller is None
    assert tab.hits_model.rowCount() == len(run.trace.hits) >= 1
    assert tab.budget_bar.value() == run.trace.used_chars
    snap = Memory(demo.paths).snapshot()
    expected = Recaller(snap.facts, diagnostics=snap.diagnostics).recall(message)
    assert run.block == expected.block
    assert [h.id for h in run.trace.hits] == [h.id for h in expected.trace.hits]
    cli = subprocess.run(
        [sys.executable, "-m", "context_engine", "--home", str(demo.home), "--workspace",
         str(demo.workspace), "--json", "recall", message],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        # The suite's monitor setting passed on: a minimal environment would start one.
        env={"PYTHONPATH": str(ROOT / "app"), "PATH": "/usr/bin:/bin",
             "CONTEXT_ENGINE_MONITOR": os.environ.get("CONTEXT_ENGINE_MONITOR", "0")},
    )
    assert cli.returncode == 0, cli.stderr
    import json

    data = json.loads(cli.stdout)
    assert data["block"] == run.block == tab.block.toPlainText()
    ours = run.trace.to_dict()
    for trace in (data["trace"], ours):
        trace.pop("at", None)
    assert data["trace"] == ours


@pytest.mark.slow
def test_imported_instruction_file_change_is_live(qtbot, app_root, demo):
    tab = app_root.instructions_tab
    qtbot.waitUntil(lambda: "# Instructions" in tab.block.toPlainText(), timeout=5000)
    qtbot.wait(300)  # the watcher picks up the imported files' folders
    conventions = demo.workspace / "docs" / "conventions.md"
    conventions.write_text(conventions.read_text() + "\n- Prefer table-driven tests.\n")
    qtbot.waitUntil(lambda: "table-driven" in tab.block.toPlainText(), timeout=3000)


@pytest.mark.slow
def test_new_claude_transcript_triggers_a_rescan(qtbot, app_root, demo):
    import json
    import os

    root = app_root
    root.window.tabs.setCurrentWidget(root.suggestions_tab)
    qtbot.waitUntil(lambda: root.suggestions_tab.model.rowCount() > 0, timeout=10000)
    folder = next((Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects").iterdir())
    line = {"type": "user", "cwd": str(demo.paths.root), "sessionId": "s2", "uuid": "x",
            "timestamp": "2026-08-09T10:00:00.000Z", "isSidechain": False,
            "message": {"role": "user", "content": "Always squash commits before merging."}}
    (folder / "4f2a9c1e-0000-4000-8000-000000000002.jsonl").write_text(json.dumps(line) + "\n")
    qtbot.waitUntil(lambda: any("squash" in c.body for c in root.suggestions_tab.model.rows),
                    timeout=5000)


@pytest.mark.slow
def test_instructions_for_a_sub_directory_target(qtbot, app_root, demo):
    tab = app_root.instructions_tab
    qtbot.waitUntil(lambda: tab.tree_model.rowCount() == 3, timeout=5000)
    tab.target.setText("admin")
    tab.target.returnPressed.emit()
    qtbot.waitUntil(lambda: tab.tree_model.rowCount() == 4, timeout=5000)
    labels = [tab.tree_model.node(tab.tree_model.index(r, 0)).values[0]
              for r in range(tab.tree_model.rowCount())]
    assert labels[-1].endswith("workspace/admin/CLAUDE.md")
    assert "workspace/admin/CLAUDE.md" in tab.block.toPlainText()


@pytest.mark.slow
def test_recover_refused_when_the_name_is_active(qtbot, app_root, demo):
    tab = app_root.archive_tab
    qtbot.waitUntil(lambda: tab.archive_model.rowCount() == 2, timeout=5000)
    Memory(demo.paths).save(name="project/old-ci.md", title="New CI", description="new",
                            body="Actions now.", type="reference", scope="project")
    before = (demo.paths.project_store / "old-ci.md").read_bytes()
    row = next(i for i, e in enumerate(tab.archive_model.rows) if e.fact.name == "old-ci")
    tab.archive.selectRow(row)
    with qtbot.waitSignal(app_root.writes.failed, timeout=3000) as blocker:
        tab.recover_button.click()
    assert "already active" in blocker.args[0]
    assert (demo.paths.project_store / "old-ci.md").read_bytes() == before
    assert "Nothing changed" in app_root.window.message_label.text()


@pytest.mark.slow
def test_instruction_reload_keeps_the_selected_document(qtbot, app_root, demo):
    tab = app_root.instructions_tab
    qtbot.waitUntil(lambda: tab.tree_model.rowCount() == 3, timeout=5000)
    assert tab.select_node(lambda p: getattr(p, "label", None) == "user/AGENTS.md")
    qtbot.waitUntil(lambda: "Personal preferences" in tab.source.toPlainText(), timeout=3000)
    qtbot.wait(300)
    agents = demo.workspace / "AGENTS.md"
    agents.write_text(agents.read_text() + "\n- Run `make lint` too.\n")
    qtbot.waitUntil(lambda: "make lint" in tab.block.toPlainText(), timeout=3000)
    assert "Personal preferences" in tab.source.toPlainText()


@pytest.mark.slow
def test_double_clicking_a_recall_hit_opens_the_fact(qtbot, app_root):
    tab = app_root.recall_tab
    tab.message.setText("which release branch do we publish from?")
    with qtbot.waitSignal(app_root.recall.ran, timeout=5000):
        tab.run_button.click()
    app_root.facts_tab.search.setText("glossary")  # the fact is filtered out right now
    hit = tab.hits_model.row_at(0)
    tab.hits.doubleClicked.emit(tab.hits_model.index(0, 0))
    assert app_root.window.tabs.currentWidget() is app_root.facts_tab
    qtbot.waitUntil(lambda: (row := app_root.facts_tab.selected_row()) is not None
                    and row.fact.id == hit.id, timeout=3000)
    assert app_root.facts_tab.search.text() == ""
