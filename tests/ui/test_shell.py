"""The window shown before the engine loads: placeholder tabs, then the real ones in place."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
    assert out.strip() == str(["context_center.shell", "context_center.widgets",
                               "context_center.widgets.help_dialogs",
                               "context_center.widgets.main_window"])
