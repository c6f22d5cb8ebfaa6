"""A remote workspace's window (S13.6, S11.6): remote data only, unavailable, disconnected.

The server is a ``context-engine serve --stdio`` subprocess over its own home; this process's
home is a different one that must never be opened.
"""

from __future__ import annotations

import os
import shlex
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from context_center.remote_workspace import RemoteWorkspace, install
from PySide6.QtCore import QSettings
from support.fixtures import client_home_fixture, served_fixture  # noqa: F401 - pytest fixtures
from support.remote import Served, audit_opens, touched_under

pytestmark = pytest.mark.timeout(60)


def _row(qtbot, root, reference: str):
    """The Facts-tab row of ``reference`` once the first snapshot has arrived."""
    model = root.facts_tab.model
    qtbot.waitUntil(lambda: model.rowCount() > 0, timeout=10000)
    rows = (model.row_at(i) for i in range(model.rowCount()))
    return next(r for r in rows if r.fact.reference == reference)


@contextmanager
def _open(qtbot, served: Served, settings: QSettings, *extra: str) -> Iterator[RemoteWorkspace]:
    command = " ".join(shlex.quote(a) for a in served.command(*extra))
    remote = RemoteWorkspace(command, settings)
    qtbot.addWidget(remote.root.window)
    remote.start()
    yield remote
    remote.shutdown()


@contextmanager
def _writes_on(qtbot, served: Served, settings: QSettings, reference: str) -> Iterator[tuple]:
    """The write flows of a remote window (no watcher) and the Facts-tab row of ``reference``."""
    with _open(qtbot, served, settings, "--no-watch") as remote:
        yield remote.root.writes, _row(qtbot, remote.root, reference)


def _loaded(qtbot, root) -> int:
    """How many rows the Facts tab shows once the first snapshot has arrived."""
    qtbot.waitUntil(lambda: root.facts_tab.model.rowCount() > 0, timeout=10000)
    return root.facts_tab.model.rowCount()


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.mark.slow
def test_remote_window_shows_only_the_server_catalog_and_suggestions_unavailable(
    qtbot, qtmodeltester, served: Served, client_home: Path, settings: QSettings
) -> None:
    expected = {f.reference for f in served.local().list_facts().facts}
    flags = ("--no-watch", "--without", "suggestions")
    with audit_opens() as seen, _open(qtbot, served, settings, *flags) as remote:
        root = remote.root
        qtbot.waitUntil(lambda: root.facts_tab.model.rowCount() == len(expected), timeout=10000)
        shown = {
            root.facts_tab.model.row_at(i).fact.reference
            for i in range(root.facts_tab.model.rowCount())
        }
        assert shown == expected and "project/local-secret.md" not in shown
        assert remote.catalog.name in root.window.windowTitle()
        assert remote.catalog.name in remote.state_label.text()
        assert "connected" in remote.state_label.text()
        root.window.tabs.setCurrentWidget(root.suggestions_tab)
        qtbot.waitUntil(
            lambda: "unavailable" in root.suggestions_tab.status.text().lower(), timeout=10000
        )
        assert root.suggestions_tab.model.rowCount() == 0
        qtbot.waitUntil(lambda: remote.completer.model.rowCount() > 0, timeout=10000)
        items = remote.completer.model.stringList()
        assert items == list(remote.catalog.complete("refs"))
        assert "local-secret" not in items
        qtmodeltester.check(remote.completer.model)
    assert touched_under(seen, client_home) == []


@pytest.mark.slow
def test_killing_the_server_shows_disconnected_and_reconnect_restores(
    qtbot, served: Served, client_home: Path, settings: QSettings
) -> None:
    with _open(qtbot, served, settings, "--no-watch") as remote:
        root = remote.root
        rows = _loaded(qtbot, root)
        assert not remote.reconnect_button.isVisible()
        with audit_opens() as seen:
            os.kill(remote.catalog.client.pid or 0, signal.SIGKILL)
            qtbot.waitUntil(lambda: "disconnected" in remote.state_label.text(), timeout=10000)
            qtbot.waitUntil(lambda: remote.reconnect_button.isVisible(), timeout=5000)
            qtbot.waitUntil(
                lambda: "disconnected" in root.facts_tab.detail.toPlainText(), timeout=10000
            )
        assert touched_under(seen, client_home) == []
        remote.reconnect_button.click()
        qtbot.waitUntil(
            lambda: (
                remote.state_label.text().endswith("connected")
                and "dis" not in remote.state_label.text()
            ),
            timeout=15000,
        )
        assert not remote.reconnect_button.isVisible()
        qtbot.waitUntil(lambda: root.facts_tab.model.rowCount() == rows, timeout=10000)


@pytest.mark.slow
def test_server_changes_reach_the_window(
    qtbot, served: Served, client_home: Path, settings: QSettings
) -> None:
    from context_engine.facts.memory import Memory

    with _open(qtbot, served, settings) as remote:
        root = remote.root
        rows = _loaded(qtbot, root)
        Memory(served.paths).save(name="pushed", description="pushed", body="b", type="project")
        qtbot.waitUntil(lambda: root.facts_tab.model.rowCount() == rows + 1, timeout=15000)


@pytest.mark.slow
def test_the_file_menu_offers_open_remote_workspace(app_root) -> None:
    action = install(app_root)
    menu = app_root.window.menuBar().actions()[0].menu()
    assert action in menu.actions() and "remote" in action.text().lower()


@pytest.mark.slow
def test_a_remote_forget_asks_in_this_window_and_writes_on_the_server(
    qtbot, served: Served, client_home: Path, settings: QSettings
) -> None:
    with _writes_on(qtbot, served, settings, "global/editor.md") as (flows, row):
        with qtbot.waitSignal(flows.confirmation.shown, timeout=10000) as shown:
            flows.forget(row)
        assert shown.args[0].tool == "forget" and shown.args[0].reference == "global/editor.md"
        with qtbot.waitSignal(flows.forgotten, timeout=10000) as outcome:
            flows.confirm.cancel_button.click()
        assert not outcome.args[0].written
        assert "global/editor.md" in {f.reference for f in served.local().list_facts().facts}
        with qtbot.waitSignal(flows.confirmation.shown, timeout=10000):
            flows.forget(row)
        with qtbot.waitSignal(flows.forgotten, timeout=10000) as outcome:
            flows.confirm.ok_button.click()
        assert outcome.args[0].written
        assert "global/editor.md" not in {f.reference for f in served.local().list_facts().facts}
        assert list(client_home.rglob("*editor.md")) == []


def test_a_command_that_is_no_server_leaves_a_disconnected_window(
    qtbot, client_home: Path, settings: QSettings
) -> None:
    remote = RemoteWorkspace("false", settings)
    qtbot.addWidget(remote.root.window)
    with audit_opens() as seen:
        remote.start()
        qtbot.waitUntil(lambda: "disconnected" in remote.state_label.text(), timeout=10000)
    try:
        assert remote.reconnect_button.isVisible()
        assert remote.root.facts_tab.model.rowCount() == 0
        assert touched_under(seen, client_home) == []
    finally:
        remote.shutdown()


@pytest.mark.slow
def test_a_stale_remote_edit_opens_the_conflict_dialog_and_writes_nothing(
    qtbot, served: Served, client_home: Path, settings: QSettings
) -> None:
    from context_engine.facts.memory import Memory

    with _writes_on(qtbot, served, settings, "project/release-target.md") as (flows, row):
        flows.edit(row)
        qtbot.waitUntil(flows.editor.isVisible, timeout=10000)
        Memory(served.paths).save(name="project/release-target", body="Changed on the server.")
        flows.editor.body_edit.setPlainText("My stale edit.")
        with qtbot.waitSignal(flows.conflict_shown, timeout=10000):
            flows.editor.buttons.accepted.emit()
        fact = served.local().read("project/release-target.md").fact
        assert fact.body.strip() == "Changed on the server." and fact.revision == 3
