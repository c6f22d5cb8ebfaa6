"""Capture every tab of the demo, light and dark, at 100 % and 200 % (offscreen).

    .venv/bin/python docs/screenshots/capture.py

Writes docs/screenshots/<tab>-<light|dark>-<100|200>.png. Each size runs in its own process
(QT_SCALE_FACTOR is read once at start-up).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TABS = ("instructions", "facts", "archive", "suggestions", "recall")

CAPTURE = r"""
import sys, time
from pathlib import Path
sys.path[:0] = [sys.argv[1] + "/app", sys.argv[1] + "/ui"]
out, scheme, scale, tmp = Path(sys.argv[2]), sys.argv[3], sys.argv[4], Path(sys.argv[5])
from PySide6.QtCore import QSettings
from context_center import application, theme
app = theme.application([])  # the Fusion style, as the app has it
from context_center.demo import build_demo
from context_center.render import markdown
import os
theme.install(app)
if scheme == "dark":
    app.setPalette(theme.dark_palette())
    markdown.set_dark(True)
demo = build_demo(tmp / "demo")
os.environ.update(demo.environment)
root = application.build(demo.paths, QSettings(str(tmp / "s.ini"), QSettings.Format.IniFormat))
root.window.resize(1100, 700)
root.window.show()
root.start()

def pump(pred, timeout=15):
    end = time.time() + timeout
    while not pred() and time.time() < end:
        app.processEvents()
        time.sleep(0.01)

def settle(seconds=0.6):
    end = time.time() + seconds
    while time.time() < end:
        app.processEvents()
        time.sleep(0.01)

pump(lambda: root.facts_tab.model.rowCount() > 0)
row = next(r for r in root.facts_tab.model.rows
           if r.fact.name == "release-target" and r.fact.scope == "project")
root.facts_tab.select_key(row.key)
pump(lambda: root.archive_tab.revisions_model.rowCount() > 1)
root.archive_tab.revisions.selectRow(1)
root.recall_tab.message.setText("which release branch do we publish from?")
root.recall_tab.run_button.click()
tabs = root.window.tabs
for index, name in enumerate(sys.argv[6].split(",")):
    tabs.setCurrentIndex(index)
    if name == "suggestions":
        pump(lambda: root.suggestions_tab.model.rowCount() > 0)
        root.suggestions_tab.table.selectRow(0)
    if name == "instructions":
        pump(lambda: root.instructions_tab.tree_model.rowCount() > 0)
    settle()
    root.window.grab().save(str(out / f"{name}-{scheme}-{scale}.png"))
root.shutdown()
"""


def main() -> None:
    """One process per (scheme, scale)."""
    for scheme in ("light", "dark"):
        for scale in ("100", "200"):
            with tempfile.TemporaryDirectory() as tmp:
                env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
                           QT_SCALE_FACTOR=str(int(scale) / 100))
                subprocess.run([sys.executable, "-c", CAPTURE, str(ROOT), str(HERE), scheme,
                                scale, tmp, ",".join(TABS)], env=env, check=True, timeout=300)
                print(f"captured {scheme} {scale} %")


if __name__ == "__main__":
    main()
