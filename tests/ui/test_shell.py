"""The window shown before the engine loads: placeholder tabs, then the real ones in place."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from context_center.application import build
from context_center.shell import FACT_HEADERS, TAB_TITLES, open_shell, paint_now
from context_center.widgets.facts_tab import FACT_COLUMNS
from PySide6.QtWidgets import QTableWidget

ROOT = Path(__file__).resolve().parents[2]


def test_the_shell_is_replaced_by_the_real_tabs_in_place(qtbot, demo, settings):
    settings.setValue("window/tab", 3)  # the person last looked at Suggestions
    window = open_shell(settings)
    qtbot.addWidget(window)
    paint_now(window)
    assert window.isVisible()
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == list(TAB_TITLES)
    assert window.tabs.currentIndex() == 3
    assert window.progress.isVisible()  # busy until the real work is under way
    facts = window.tabs.widget(1)
    table = facts.findChild(QTableWidget)
    assert table is not None and table.columnCount() == len(FACT_HEADERS)
    root = build(demo.paths, settings, window=window)
    try:
        assert root.window is window
        assert window.tabs.count() == len(TAB_TITLES)
        assert window.tabs.widget(1) is root.facts_tab
        assert window.tabs.widget(4) is root.recall_tab
        assert window.tabs.currentIndex() == 3
        assert not any(window.tabs.widget(i).property("placeholder")
                       for i in range(window.tabs.count()))
        root.launch()
        qtbot.waitUntil(lambda: root.facts_tab.model.rowCount() > 0, timeout=10000)
        qtbot.waitUntil(lambda: not window.progress.isVisible(), timeout=10000)
    finally:
        root.shutdown()


def test_the_placeholder_table_has_the_facts_columns():
    assert tuple(c.header for c in FACT_COLUMNS) == FACT_HEADERS


def test_the_shell_imports_only_qt():
    code = ("import sys; import context_center.shell; "
            "print(sorted(m for m in sys.modules if m.startswith('context_engine') "
            "or m.startswith('context_center.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True, cwd=ROOT).stdout
    assert out.strip() == str(["context_center.shell", "context_center.theme",
                               "context_center.widgets", "context_center.widgets.main_window"])


# ``context-center`` run in a fresh process and stopped right after its first paint: what is
# on screen, and what had to be loaded for it.
FIRST_FRAME = r"""
import json, sys
import PySide6.QtCore
lazy = "Qt" not in vars(PySide6.QtCore)  # PySide builds the Qt namespace on first use
import context_center.__main__ as entry
import context_center.shell as shell
painted = shell.paint_now
def stop(window, timeout_ms=1000):
    painted(window, timeout_ms)
    print(json.dumps({
        "visible": window.isVisible(),
        "tabs": [window.tabs.tabText(i) for i in range(window.tabs.count())],
        "status": window.progress_label.text(),
        "ours": sorted(m for m in sys.modules if m.startswith(("context_engine", "context_c"))),
        "qt": sorted(m for m in sys.modules if m.startswith("PySide6.Qt")),
        "namespace_built": "Qt" in vars(PySide6.QtCore) if lazy else None,
    }))
    raise SystemExit(0)
shell.paint_now = stop
entry.main(sys.argv[1:])
"""


@pytest.mark.slow
def test_the_first_frame_needs_only_the_shell_and_three_qt_modules(tmp_path):
    (tmp_path / "ws").mkdir()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / "config"),
               PYTHONPATH=os.pathsep.join([str(ROOT / "app"), str(ROOT / "ui")]))
    out = subprocess.run(
        [sys.executable, "-c", FIRST_FRAME, "--workspace", str(tmp_path / "ws"),
         "--home", str(tmp_path / "home")],
        capture_output=True, text=True, timeout=120, check=True, env=env, cwd=tmp_path,
    ).stdout
    frame = json.loads(out.strip().splitlines()[-1])
    # An honest frame: the real window, its tabs, and a status line saying it is starting.
    assert frame["visible"] and frame["tabs"] == list(TAB_TITLES)
    assert frame["status"] == "Starting…"
    # Neither the engine nor the tabs, icons, Markdown or signal handling before the paint;
    # no Qt module beyond the three the frame draws with; no Qt enum namespace (~40 ms).
    assert frame["ours"] == ["context_center", "context_center.__main__",
                             "context_center.shell", "context_center.theme",
                             "context_center.widgets", "context_center.widgets.main_window"]
    assert frame["qt"] == ["PySide6.QtCore", "PySide6.QtGui", "PySide6.QtWidgets"]
    assert frame["namespace_built"] in (False, None)
