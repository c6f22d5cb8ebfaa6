"""Proposals in the Suggestions tab (S15.2): who asked, why, what; accept writes, dismiss drops."""

from __future__ import annotations

import pytest
from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory
from context_engine.proposals.review import store_for
from context_engine.tools.mcp_server import EngineToolHost

USER_FACT = {
    "name": "prefers-small-diffs",
    "description": "Review preference",
    "type": "feedback",
    "body": "Keep pull requests under 300 lines.",
}


def _keep(paths, args):
    host = EngineToolHost(ContextEngine(paths))
    reply = host.call("remember", args, False)
    assert reply.needs_person is not None
    return host.keep("remember", args, reply, "gemini-cli-mcp-client")


def _open(qtbot, root, count):
    root.window.tabs.setCurrentWidget(root.suggestions_tab)
    panel = root.suggestions_tab.proposals
    qtbot.waitUntil(lambda: panel.model.rowCount() == count, timeout=10000)
    return panel


@pytest.mark.slow
def test_proposals_show_who_why_and_what_and_accept_writes(qtbot, qtmodeltester, app_root, demo):
    text = _keep(demo.paths, USER_FACT)
    assert "Kept for review" in text
    panel = _open(qtbot, app_root, 1)
    qtmodeltester.check(panel.model)
    assert len(panel.model.rows) == 1
    row = [panel.model.index(0, c).data() for c in range(panel.model.columnCount())]
    assert row[0] == "gemini-cli-mcp-client" and row[1].startswith("mcp-")
    assert row[3] == "remember project/prefers-small-diffs.md"
    assert "only explicitly classified" in row[4]
    panel.table.selectRow(0)
    qtbot.waitUntil(lambda: "Keep pull requests" in panel.detail.toPlainText(), timeout=3000)
    with qtbot.waitSignal(app_root.proposals.accepted, timeout=10000):
        panel.accept_button.click()
    fact = Memory(demo.paths).resolve("project/prefers-small-diffs.md")
    assert fact.body.strip() == "Keep pull requests under 300 lines." and fact.type == "feedback"
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0, timeout=5000)
    assert store_for(demo.paths).entries() == []


@pytest.mark.slow
def test_dismiss_drops_the_proposal_without_writing(qtbot, app_root, demo):
    _keep(demo.paths, USER_FACT)
    before = {f.id for f in Memory(demo.paths).snapshot().facts}
    panel = _open(qtbot, app_root, 1)
    panel.table.selectRow(0)
    panel.dismiss_button.click()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0, timeout=5000)
    assert store_for(demo.paths).entries() == []
    assert {f.id for f in Memory(demo.paths).snapshot().facts} == before


@pytest.mark.slow
def test_accepting_a_changed_fact_is_a_conflict_shown_to_the_person(qtbot, app_root, demo):
    _keep(demo.paths, USER_FACT)
    panel = _open(qtbot, app_root, 1)
    Memory(demo.paths).save(
        name="prefers-small-diffs", description="d", body="Other.", type="feedback"
    )
    panel.table.selectRow(0)
    panel.accept_button.click()
    qtbot.waitUntil(lambda: "changed since proposal" in panel.status.text(), timeout=10000)
    assert Memory(demo.paths).resolve("project/prefers-small-diffs.md").body.strip() == "Other."
    assert panel.model.rowCount() == 1
