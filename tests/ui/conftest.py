"""Fixtures for the app tests: a fresh demo workspace and a started application per test."""

from __future__ import annotations

from pathlib import Path

import pytest
from context_center.application import Application, build
from context_center.demo import Demo, build_demo
from PySide6.QtCore import QSettings


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Demo:
    """The --demo sample workspace and home, generated into this test's temp dir."""
    made = build_demo(tmp_path / "demo")
    for key, value in made.environment.items():
        monkeypatch.setenv(key, value)
    return made


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    """Window settings isolated in a temp ini file (never the user's real settings)."""
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def app_root(qtbot, demo: Demo, settings: QSettings):
    """The application over the demo, started, with facts loaded."""
    root: Application = build(demo.paths, settings)
    qtbot.addWidget(root.window)
    root.window.show()
    root.start()
    # Rows show before the first read ends (partial pages); tests start once it has ended.
    qtbot.waitUntil(lambda: root.facts_tab.model.rowCount() > 0
                    and not any(op.long for op in root.tasks.pending), timeout=5000)
    yield root
    root.shutdown()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The offscreen platform warns that it cannot propagate size hints; that is not ours."""
    for item in items:
        if "tests/ui" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.qt_log_ignore(r".*propagateSizeHints.*"))
