"""The Facts table's row count over time as the app opens a home (what a person sees first).

Opens the window on ``HOME`` and ``WORKSPACE`` (offscreen is fine), shows the Facts tab and
prints, each time the table's row count changes, the seconds since start, the count and the
status bar's progress text; it quits at ``--facts`` rows or after ``--limit`` seconds. For a
never-indexed home of 100,000 facts, copy the generated store first (the cache is never
written; use a fresh copy for each run, as the first one builds the derived index)::

    rm -rf /tmp/fill100k && PYTHONPATH=app:ui:bench .venv/bin/python -c "from pathlib import \\
        Path; import app_bench as a; a._copied_workspace(Path('/tmp/ce-scale-bench'), 100000, \\
        Path('/tmp/fill100k'))"
    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/first_read_probe.py \\
        /tmp/fill100k/home /tmp/fill100k/ws
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

_START = time.perf_counter()
_HERE = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_HERE / "app"), str(_HERE / "ui")]


def main(argv: list[str] | None = None) -> None:
    """Open the window and print the row count each time it changes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home")
    parser.add_argument("workspace")
    parser.add_argument("--facts", type=int, default=100_000, help="quit at this many rows")
    parser.add_argument("--limit", type=float, default=240.0, help="quit after these seconds")
    parser.add_argument("--settings", default="/tmp/first-read-probe.ini")
    args = parser.parse_args(argv)

    from context_center import application, theme
    from context_center.shell import first_frame
    from context_engine.paths import EnginePaths
    from PySide6.QtCore import QSettings, QTimer

    app = theme.application([])
    settings = QSettings(args.settings, QSettings.Format.IniFormat)
    window = first_frame(app, settings)
    print(f"paint {time.perf_counter() - _START:.2f}", flush=True)
    theme.finish(app)
    paths = EnginePaths.resolve(home=args.home, workspace=args.workspace)
    root = application.build(paths, settings, window=window)
    root.window.tabs.setCurrentWidget(root.facts_tab)
    root.launch()
    last = [-1]

    def check() -> None:
        rows = root.facts_tab.model.rowCount()
        now = time.perf_counter() - _START
        if rows != last[0]:
            last[0] = rows
            print(f"{now:6.2f} rows {rows} progress={root.window.progress_label.text()!r}",
                  flush=True)
        if rows >= args.facts or now > args.limit:
            app.quit()

    timer = QTimer()
    timer.timeout.connect(check)
    timer.start(50)
    app.exec()
    root.shutdown()


if __name__ == "__main__":
    main()
