"""Start-up cost of ``context-engine`` as a person meets it: whole processes, CPU and wall.

Each command runs ``--runs`` times as its own process (the console script the README installs,
else ``python -m context_engine``); the figures are medians of CPU time (user + system, from
``resource.getrusage(RUSAGE_CHILDREN)``) and of wall time, beside ``python -c pass`` and
``python -c "import click"`` measured in the same run, with the ratio of each to the first.

    .venv/bin/python bench/startup_bench.py             # 10 runs each
    .venv/bin/python bench/startup_bench.py --runs 20
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "app"), str(ROOT / "bench")]

from _facts import make_workspace  # noqa: E402


def entry() -> list[str]:
    """The documented command: the installed console script beside this interpreter."""
    script = Path(sys.executable).parent / "context-engine"
    if script.exists():
        return [str(script)]
    found = shutil.which("context-engine")
    return [found] if found else [sys.executable, "-m", "context_engine"]


def measure(argv: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    """Median CPU and wall seconds of ``argv`` as a whole process."""
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    """Print one row per command."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "app"), quiet=1)  # an installed package has its bytecode
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_workspace(Path(tmp), 100)
        where = ["--home", str(paths.home), "--workspace", str(paths.workspace)]
        env = {**os.environ, "PYTHONPATH": str(ROOT / "app")}
        ce = entry()
        completion = {**env, "_CONTEXT_ENGINE_COMPLETE": "bash_complete",
                      "COMP_WORDS": "context-engine li", "COMP_CWORD": "1"}
        rows: list[tuple[str, list[str], dict[str, str]]] = [
            ("python -c pass", [sys.executable, "-c", "pass"], env),
            ('python -c "import click"', [sys.executable, "-c", "import click"], env),
            ("context-engine --help", [*ce, "--help"], env),
            ("context-engine --version", [*ce, "--version"], env),
            ("context-engine list --json (100 facts)", [*ce, *where, "list", "--json"], env),
            ("TAB completion of 'li'", ce, completion),
            ("context-engine read <name> (100 facts)",
             [*ce, *where, "read", "release-build-0"], env),
        ]
        print(f"{args.runs} runs each; medians; entry: {' '.join(ce)}")
        print(f"{'command':42} {'CPU ms':>8} {'wall ms':>8} {'CPU / pass':>11}")
        anchor: float | None = None
        for label, argv, run_env in rows:
            cpu, wall = measure(argv, run_env, args.runs)
            anchor = anchor or cpu
            print(f"{label:42} {cpu * 1000:8.1f} {wall * 1000:8.1f} {cpu / anchor:10.1f}x")
        print(f"load average: {os.getloadavg()[0]:.1f} (figures on a busy machine run high)")


if __name__ == "__main__":
    main()
