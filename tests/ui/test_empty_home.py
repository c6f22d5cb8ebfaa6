"""A fresh home with no stores yet: the app opens empty and notices the first fact (S13.3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from context_center.application import build
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths


# watchdog's recursive inotify watch may see a directory made by `mkdir -p` twice and warns
# that it re-adds the same callback; the events still arrive.
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")
def test_first_fact_in_a_fresh_home_appears(qtbot, tmp_path: Path, settings):
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    paths = EnginePaths.resolve(home=home, workspace=workspace)
    root = build(paths, settings)
    qtbot.addWidget(root.window)
    root.window.show()
    root.start()
    try:
        qtbot.waitUntil(lambda: "0 facts" in root.window.counts_label.text(), timeout=5000)
        assert not paths.project_store.exists()  # opening the app created nothing
        qtbot.wait(300)
        Memory(paths).save(name="first", title="First", description="the first fact",
                           body="Hello.", type="project", scope="project")
        qtbot.waitUntil(lambda: root.facts_tab.model.rowCount() == 1, timeout=3000)
    finally:
        root.shutdown()
