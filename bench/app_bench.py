"""Context Center benchmarks (offscreen): first paint, filter latency, file write → table.

    .venv/bin/python bench/app_bench.py [--facts 10000] [--rows 100000] [--runs 5]
    .venv/bin/python bench/app_bench.py --session 10000,100000 [--before /path/to/base/tree]

``--session`` runs the whole app over a generated store in a fresh process per size: first
paint, table complete, RSS after load and the peak after a scripted tour of every tab (with
one recall and F5), filter latency, and outside-write → table latency (median, worst).
``--before`` runs the same script against another checkout (e.g. the base commit) first.
First paint is the time from the script's start to the return of ``shell.first_frame`` (what
``main()`` runs before its first paint: the window is painted when it returns); both trees'
bytecode is compiled first, as an installed package has it.
Targets at 100,000 facts (issue 18): first paint ≤ 0.3 s, table complete ≤ 2 s,
RSS ≤ 400 MB, write → screen ≤ 1 s.

Prints medians, and the GUI event-loop latency during a burst of writes by another thread.
Targets (issue 7): first paint < 1.5 s at 10,000 facts; filter < 100 ms at
100,000 rows. Each first-paint run starts a fresh Python process, so imports are counted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "app"), str(ROOT / "ui")]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from context_engine.catalog.local import LocalCatalog  # noqa: E402
from context_engine.facts.codec import render_fact  # noqa: E402
from context_engine.facts.model import FACT_TYPES, Fact  # noqa: E402
from context_engine.paths import EnginePaths  # noqa: E402

WORDS = ("release", "branch", "deploy", "tests", "lint", "docs", "api", "ledger", "cents",
         "vpn", "staging", "tabs", "review", "schema", "cache", "queue", "retry", "budget")


def make_fact(i: int, scope: str = "project") -> Fact:
    """A synthetic fact with varied words, types and ages."""
    w = [WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7, 11)]
    stamp = datetime(2026, 11, 1, tzinfo=UTC) - timedelta(days=i % 500)
    return Fact(
        id=f"mem-{i:032x}", revision=1 + i % 3, name=f"fact-{i:06d}",
        title=f"{w[0].title()} {w[1]} note {i}", description=f"About {w[2]} and {w[3]}",
        type=FACT_TYPES[i % 4], scope=scope,  # type: ignore[arg-type]
        body=f"Remember: {' '.join(w)} number {i}. " * 3, created_at=stamp, updated_at=stamp,
    )


def write_store(home: Path, workspace: Path, count: int) -> EnginePaths:
    """``count`` canonical fact files (codec bytes) split over both stores."""
    (workspace / ".git").mkdir(parents=True, exist_ok=True)
    paths = EnginePaths.resolve(home=home, workspace=workspace)
    for store in (paths.project_store, paths.global_store):
        store.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        scope = "global" if i % 5 == 0 else "project"
        fact = make_fact(i, scope)
        (paths.store_dir(scope) / f"{fact.name}.md").write_bytes(render_fact(fact))
    return paths


FIRST_PAINT = r"""
import sys, time
t0 = time.perf_counter()
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from PySide6.QtCore import QSettings
from context_center import theme
app = theme.application([])  # as main() makes it: with the Fusion style
from context_center.shell import first_frame
settings = QSettings(sys.argv[5], QSettings.Format.IniFormat)
window = first_frame(app, settings)  # as main() does; returns once the window has painted
painted, painted_cpu = time.perf_counter() - t0, time.process_time()
from PySide6.QtCore import QTimer
from context_engine.paths import EnginePaths
from context_center import application
theme.finish(app)
root = application.build(EnginePaths.resolve(home=sys.argv[3], workspace=sys.argv[4]), settings,
                         window=window)
root.window.tabs.setCurrentWidget(root.facts_tab)
root.launch()  # as main() does: the background reads start after the tabs' first paint
rows = []
def check():
    if not rows and root.facts_tab.model.rowCount() > 0:
        rows.append(time.perf_counter() - t0)
        root.facts_tab.table.viewport().repaint()
        app.quit()
timer = QTimer(); timer.timeout.connect(check); timer.start(5)
QTimer.singleShot(60000, app.quit)
app.exec()
root.shutdown()
print(painted, rows[0] if rows else -1, painted_cpu)
"""


def compile_tree(tree: Path) -> None:
    """Bytecode for ``tree``'s engine and app, as an installed package has it.

    The .venv sets PYTHONDONTWRITEBYTECODE, so without this every run compiles from source.
    """
    import compileall

    for part in ("app", "ui"):
        compileall.compile_dir(str(tree / part), quiet=1)


def bench_first_paint(count: int, runs: int) -> None:
    compile_tree(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        write_store(t / "home", t / "ws", count)
        windows, rows, cpus = [], [], []
        for _ in range(runs):
            out = subprocess.run(
                [sys.executable, "-c", FIRST_PAINT, str(ROOT / "app"), str(ROOT / "ui"),
                 str(t / "home"), str(t / "ws"), str(t / "settings.ini")],
                capture_output=True, text=True, timeout=120, check=True,
            ).stdout.split()
            windows.append(float(out[0]))
            rows.append(float(out[1]))
            cpus.append(float(out[2]))
        print(f"start → first painted window ({count:,} facts): "
              f"median {statistics.median(windows) * 1000:.0f} ms (process CPU by then "
              f"{statistics.median(cpus) * 1000:.0f} ms; load {os.getloadavg()[0]:.1f})")
        print(f"start → table filled with {count:,} facts: "
              f"median {statistics.median(rows) * 1000:.0f} ms")


def _pump_until(app, predicate, timeout: float = 30.0) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    while not predicate():
        app.processEvents()
        if time.perf_counter() - start > timeout:
            raise TimeoutError
        time.sleep(0.0005)
    return time.perf_counter() - start


def _pump_for(app, seconds: float) -> None:  # type: ignore[no-untyped-def]
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.005)


def bench_filter(count: int, runs: int) -> None:
    from context_center.models.table import sort_rows
    from context_center.presenters.facts import FactsPresenter
    from context_center.services.fact_rows import FactsSnapshot, build_rows
    from context_center.services.hub import Hub
    from context_center.services.tasks import TaskManager
    from context_center.widgets.facts_tab import FACT_COLUMNS, FactsTab
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    facts = [make_fact(i, "global" if i % 5 == 0 else "project") for i in range(count)]
    rows = build_rows(facts)
    tab = FactsTab()
    tab.resize(1200, 700)
    tab.show()
    tasks = TaskManager()
    presenter = FactsPresenter(tab, backend=None, tasks=tasks, hub=Hub())  # type: ignore[arg-type]
    presenter._on_snapshot(FactsSnapshot(rows, ()))
    _pump_until(app, lambda: tab.model.rowCount() == count)
    queries = ["release", "deploy tests", "note 4242", "zzz-nothing", "api", ""]
    times = []
    for _ in range(runs):
        for query in queries:
            expected = sum(1 for r in rows if all(w in r.haystack for w in query.lower().split()))
            start = time.perf_counter()
            tab.search.setText(query)
            _pump_until(app, lambda e=expected: tab.model.rowCount() == e)
            tab.table.viewport().repaint()
            times.append(time.perf_counter() - start)
    print(f"filter-text change → table shows result ({count:,} rows): "
          f"median {statistics.median(times) * 1000:.1f} ms, worst {max(times) * 1000:.1f} ms")
    typing = []
    for _ in range(runs):
        for word in ("release", "deploy tests"):
            tab.search.setText("")
            _pump_until(app, lambda: tab.model.rowCount() == count)
            for end in range(1, len(word) + 1):
                text = word[:end]
                expected = sum(1 for r in rows
                               if all(w in r.haystack for w in text.lower().split()))
                start = time.perf_counter()
                tab.search.setText(text)
                _pump_until(app, lambda e=expected: tab.model.rowCount() == e)
                tab.table.viewport().repaint()
                typing.append(time.perf_counter() - start)
    print(f"  typing one character at a time (narrows the last result): "
          f"median {statistics.median(typing) * 1000:.1f} ms")
    start = time.perf_counter()
    sort_rows(rows, FACT_COLUMNS[1], True)
    python_sort = time.perf_counter() - start
    print(f"  (baseline: sorting the same rows by title in Python: {python_sort * 1000:.0f} ms)")
    tasks.shutdown()
    tab.close()


def _started_demo(app: Any, tmp: Path) -> tuple[Any, Any]:
    """The demo workspace under ``tmp`` and its window, shown, started and showing facts."""
    from context_center import application
    from context_center.demo import build_demo
    from PySide6.QtCore import QSettings

    demo = build_demo(tmp / "demo")
    root = application.build(demo.paths, QSettings(str(tmp / "s.ini"), QSettings.Format.IniFormat))
    root.window.show()
    root.start()
    _pump_until(app, lambda: root.facts_tab.model.rowCount() > 0)
    return demo, root


def bench_write_to_table(runs: int) -> None:
    from context_engine.facts.memory import Memory
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        demo, root = _started_demo(app, Path(tmp))
        _pump_for(app, 0.5)  # let the start-up reads and the watcher settle
        memory = Memory(demo.paths)
        times = []
        for i in range(runs):
            name = f"bench-{i}"
            start = time.perf_counter()
            memory.save(name=f"project/{name}.md", title=name, description="bench",
                        body="x", type="project", scope="project")
            _pump_until(app, lambda n=name: any(r.fact.name == n
                                                 for r in root.facts_tab.model.rows))
            times.append(time.perf_counter() - start)
        root.shutdown()
        print(f"file write (another writer) → table shows it: median "
              f"{statistics.median(times) * 1000:.0f} ms (debounce {250} ms included)")


def bench_burst(writes: int) -> None:
    """Event-loop latency (10 ms timer) while another thread makes ``writes`` fact changes."""
    from PySide6.QtWidgets import QApplication

    sys.path.insert(0, str(ROOT / "tests"))
    from support.burst import LoopTicks, start_burst

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        demo, root = _started_demo(app, Path(tmp))
        ticks = LoopTicks()
        ticks.start()
        started = time.perf_counter()
        _, done = start_burst(demo.paths, writes)
        _pump_until(app, done.is_set, timeout=300)
        elapsed = time.perf_counter() - started
        _pump_for(app, 1.0)
        ticks.stop()
        root.shutdown()
        print(f"event-loop latency during {writes:,} writes ({elapsed:.1f} s): {ticks.summary()}")


SESSION = r"""
import json, os, resource, statistics, sys, time
t0 = time.perf_counter()
code, home, ws, settings = sys.argv[1:5]
writes = int(sys.argv[5])
count = int(sys.argv[6])
sys.path[:0] = [code + "/app", code + "/ui"]
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
try:
    from context_center.theme import application as make_app  # as main() makes it
except ImportError:  # an older checkout (--before)
    make_app = QApplication
app = make_app([])
marks = {}
qsettings = QSettings(settings, QSettings.Format.IniFormat)
window = spy = None
# First paint: as main() does, the window (Qt only) first, the engine and the tabs after it.
# Timed to the return of the call that painted it (no app-wide Python event filter: one
# costs ~70 ms of CPU while the window is built).
try:
    from context_center.shell import first_frame
except ImportError:  # an older checkout (--before)
    first_frame = None
if first_frame is not None:
    window = first_frame(app, qsettings)
    marks["paint"], marks["paint_cpu"] = time.perf_counter() - t0, time.process_time()
    from context_center import theme
    theme.finish(app)
else:
    from context_center import theme
    theme.install(app)
    try:
        from context_center.shell import open_shell, paint_now
    except ImportError:  # older still: everything is built, then shown
        open_shell = None
    if open_shell is not None:
        window = open_shell(qsettings)
        paint_now(window)
        marks["paint"], marks["paint_cpu"] = time.perf_counter() - t0, time.process_time()
    else:
        from PySide6.QtCore import QEvent, QObject
        from PySide6.QtWidgets import QMainWindow
        class Painted(QObject):
            def eventFilter(self, obj, event):
                if event.type() == QEvent.Type.Paint and "paint" not in marks \
                        and isinstance(obj, QMainWindow):
                    marks["paint"] = time.perf_counter() - t0
                    marks["paint_cpu"] = time.process_time()
                return False
        spy = Painted()
        app.installEventFilter(spy)
from dataclasses import replace
from pathlib import Path
from context_engine.facts.codec import render_fact
from context_engine.paths import EnginePaths
from context_center import application
paths = EnginePaths.resolve(home=home, workspace=ws)
root = (application.build(paths, qsettings, window=window) if window is not None
        else application.build(paths, qsettings))
root.window.tabs.setCurrentWidget(root.facts_tab)
root.launch()
marks["built"] = time.perf_counter() - t0

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

def peak_mb():
    # VmHWM: this process's own high-water mark. ru_maxrss survives exec on Linux, so a child
    # of a large bench process (one that just rebuilt an index) starts with its parent's peak.
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def pump(pred, timeout):
    end = time.perf_counter() + timeout
    while not pred():
        app.processEvents()
        if time.perf_counter() > end:
            return False
        time.sleep(0.002)
    return True

def settle(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.01)

model = root.facts_tab.model
pump(lambda: model.rowCount() > 0, 600)
marks["rows"] = time.perf_counter() - t0
if spy is not None:
    app.removeEventFilter(spy)  # painted by now (the old checkout paints in launch())
pump(lambda: model.rowCount() >= count, 600)  # every fact listed
marks["table"] = time.perf_counter() - t0
# The full snapshot (bodies for full-text search) replaced the indexed rows, if any.
pump(lambda: not getattr(root.facts.snapshot, "partial", False), 600)
marks["bodies"] = time.perf_counter() - t0
settle(1.0)
marks["rss_load"] = rss_mb()
# Tour: every tab, one recall, F5.
steps = marks["tour"] = []  # (step, RSS MB after it)
for index in range(root.window.tabs.count()):
    root.window.tabs.setCurrentIndex(index)
    settle(1.5)
    steps.append((root.window.tabs.tabText(index), round(rss_mb())))
root.recall_tab.message.setText("which release branch do we deploy from")
root.recall_tab.run_button.click()
settle(3.0)
steps.append(("recall", round(rss_mb())))
root.window.refresh_action.trigger()
settle(3.0)
steps.append(("F5", round(rss_mb())))
root.window.tabs.setCurrentWidget(root.facts_tab)
pump(lambda: model.rowCount() > 0, 600)
settle(1.0)
marks["rss_peak"] = peak_mb()
# Filter latency: type a query, wait for the filtered result.
filters = []
field_filters = []
every = root.facts.snapshot.rows
from context_center.services.fact_rows import FactFilter, filter_rows
shows = []
show_rows = root.facts_tab.show_rows
def recording(rows, counts=None):
    shows.append(time.perf_counter())
    show_rows(rows, counts)
root.facts_tab.show_rows = recording
for text in ("release", "deploy cache", "ticket42", ""):
    # The count as the checkout's own filter finds it (in memory, or in the derived index).
    expected = len(filter_rows(every, FactFilter(text=text)))
    shows.clear()
    start = time.perf_counter()
    root.facts_tab.search.setText(text)
    # "fields": the first rows shown for this text (a checkout of one phase: its only ones).
    pump(lambda: bool(shows), 60)
    field_filters.append(shows[0] - start)
    # "bodies complete": every match shown and no body search left running.
    pump(lambda: model.rowCount() == expected
         and getattr(root.facts, "_body_search", None) is None, 60)
    filters.append(time.perf_counter() - start)
root.facts_tab.show_rows = show_rows
settle(1.0)
# Outside writes, one at a time: file replaced atomically → row shows the new revision.
rows = list(root.facts.snapshot.rows[:writes])
latencies = []
for row in rows:
    fact = row.fact
    if row.lazy:  # a listed row carries no body: the file's fact, body included
        fact = root.backend.catalog.read(fact.reference).fact
    newer = replace(fact, revision=fact.revision + 1)
    tmp = fact.path.with_name(".tmp-" + fact.path.name)
    tmp.write_bytes(render_fact(newer))
    start = time.perf_counter()
    os.replace(tmp, fact.path)
    key = (fact.scope, fact.id)
    ok = pump(lambda: (r := model.row_at(model.find(key))) is not None
              and r.fact.revision == newer.revision, 60)
    latencies.append(time.perf_counter() - start if ok else float("inf"))
    settle(0.3)
root.shutdown()
marks["filter_median"] = statistics.median(filters[:3])
marks["filter_fields"] = statistics.median(field_filters[:3])
marks["write_median"] = statistics.median(latencies)
marks["write_worst"] = max(latencies)
marks["writes"] = [round(x, 2) for x in latencies]
marks["cpu"] = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
marks["child_peak"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps(marks))
"""


def _kept_workspace(base: Path, count: int, index: bool) -> EnginePaths:
    """The store of ``count`` facts under ``base``, generated on first use and kept."""
    from _facts import make_workspace

    done = base / "generated"
    if not done.exists():
        base.mkdir(parents=True, exist_ok=True)
        print(f"(generating {count:,} facts under {base}, once)", flush=True)
        paths = make_workspace(base, count)
        time.sleep(2.1)
        LocalCatalog(paths).rebuild_indexes()
        done.write_text("ok\n")
    paths = EnginePaths.resolve(home=base / "home", workspace=base / "ws")
    if index:  # files the last run rewrote: the index vouches for them again
        time.sleep(0.1)
        LocalCatalog(paths).list_facts()
    return paths


def _copied_workspace(cache: Path, count: int, base: Path) -> EnginePaths:
    """A fresh copy under ``base`` of the store ``scale_bench`` generated and cached.

    The cache is never written: each run's outside writes go to the copy.
    """
    import shutil

    source = cache / f"v1-{count}"
    if not (source / "done").exists():
        raise SystemExit(f"no generated store at {source} (run bench/scale_bench.py once)")
    print(f"(copying {count:,} facts from {source})", flush=True)
    shutil.copytree(source, base, symlinks=True)
    paths = EnginePaths.resolve(home=base / "home", workspace=base / "ws")
    # The project store's folder is named after the workspace path: follow the copy.
    generated = EnginePaths.resolve(home=source / "home", workspace=source / "ws")
    (base / "home" / "projects" / generated.slug).rename(paths.project_dir)
    return paths


def _children_cpu() -> float:
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def bench_session(
    sizes: list[int], before: Path | None, writes: int, index: bool, keep: Path | None = None,
    cache: Path | None = None, verbose: bool = False,
) -> None:
    """The whole app over generated stores, for the base checkout (``before``) and this one."""
    anchor_start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    anchor = time.perf_counter() - anchor_start
    qt_start, used = time.perf_counter(), _children_cpu()  # the floor of any first paint
    subprocess.run([sys.executable, "-c", "import PySide6.QtWidgets"], check=True)
    qt, qt_cpu = time.perf_counter() - qt_start, _children_cpu() - used
    print(f"(anchors: python -c pass = {anchor * 1000:.0f} ms, import PySide6.QtWidgets = "
          f"{qt * 1000:.0f} ms, CPU {qt_cpu * 1000:.0f} ms; load {os.getloadavg()[0]:.1f}; "
          f"machine shared, figures loaded)")
    sys.path.insert(0, str(ROOT / "bench"))
    from _facts import make_workspace

    for tree in ([before] if before is not None else []) + [ROOT]:
        compile_tree(tree)

    for count in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            if keep is not None:  # generated once, reused (its outside writes stay in it)
                paths = _kept_workspace(keep / str(count), count, index)
            else:
                if cache is not None:
                    paths = _copied_workspace(cache, count, t / "store")
                else:
                    paths = make_workspace(t, count)
                if index:  # as any write or hook of a home in daily use leaves it
                    time.sleep(2.1)  # past the racy window: the index vouches for every file
                    LocalCatalog(paths).rebuild_indexes()
            trees = ([("before", before)] if before is not None else []) + [("after", ROOT)]
            for label, tree in trees:
                out = subprocess.run(
                    [sys.executable, "-c", SESSION, str(tree), str(paths.home),
                     str(paths.workspace), str(t / f"{label}.ini"), str(writes), str(count)],
                    capture_output=True, text=True, timeout=3600,
                    env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
                )
                if out.returncode != 0:
                    print(f"{label} {count:,}: failed: {out.stderr[-400:]}")
                    continue
                m = __import__("json").loads(out.stdout.strip().splitlines()[-1])
                print(f"{label:6} {count:>7,} facts: first paint {m['paint']:.2f} s (process CPU "
                      f"{m.get('paint_cpu', -1):.2f} s) · first rows "
                      f"{m['rows']:.2f} s · table complete {m['table']:.1f} s · bodies loaded "
                      f"{m['bodies']:.1f} s · RSS after load {m['rss_load']:.0f} MB · "
                      f"peak after tour {m['rss_peak']:.0f} MB · filter (fields) "
                      f"{m.get('filter_fields', m['filter_median']) * 1000:.0f} ms · "
                      f"filter (bodies complete) "
                      f"{m['filter_median'] * 1000:.0f} ms · write→screen median "
                      f"{m['write_median']:.2f} s, worst {m['write_worst']:.2f} s · "
                      f"CPU {m['cpu']:.0f} s · built {m.get('built', 0):.2f} s · "
                      f"largest child process {m.get('child_peak', 0):.0f} MB")
                if verbose:
                    print(f"        tour RSS: {m.get('tour')} · writes: {m.get('writes')}")


def main() -> None:
    """Run the three benchmarks and print medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--session", help="comma-separated store sizes for the whole-app run")
    parser.add_argument("--before", type=Path, help="another checkout to run --session on first")
    parser.add_argument("--writes", type=int, default=10, help="outside writes per session")
    parser.add_argument("--store", type=Path,
                        help="keep the generated stores under this folder and reuse them")
    parser.add_argument("--cache", type=Path,
                        help="copy the stores scale_bench generated (e.g. /tmp/ce-scale-bench)")
    parser.add_argument("--verbose", action="store_true",
                        help="also print RSS after each tour step and every write's latency")
    parser.add_argument("--no-index", action="store_true",
                        help="no derived index on the generated home (a fresh, never-written one)")
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--burst", type=int, default=1000, help="writes in the latency burst")
    parser.add_argument("--only", choices=("first-paint", "filter", "write", "burst"),
                        help="run one of the four benchmarks (without --session)")
    args = parser.parse_args()
    if args.session:
        bench_session([int(n) for n in args.session.split(",")], args.before, args.writes,
                      not args.no_index, args.store, args.cache, args.verbose)
        return
    if args.only in (None, "first-paint"):
        bench_first_paint(args.facts, args.runs)
    if args.only in (None, "filter"):
        bench_filter(args.rows, max(1, args.runs // 2))
    if args.only in (None, "write"):
        bench_write_to_table(args.runs)
    if args.only in (None, "burst"):
        bench_burst(args.burst)


if __name__ == "__main__":
    main()
