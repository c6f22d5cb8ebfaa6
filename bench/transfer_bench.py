"""Export and restore of a 10,000-fact store with revisions, beside ``tar`` of the same folders.

Every figure is a whole process (``context-engine export`` / ``import bundle --yes`` into an
empty home; ``tar -czf`` / ``tar -xzf`` of the two store folders), timed by wall clock with its
CPU time and peak RSS from ``os.wait4``; medians of ``--runs`` runs, in the same run as a
``python -c pass`` anchor. Run: ``.venv/bin/python bench/transfer_bench.py [--facts N]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _facts import make_workspace
from context_engine.facts.codec import parse_fact, render_fact
from context_engine.paths import EnginePaths


def add_history(paths: EnginePaths, every: int = 3, archived: int = 200) -> tuple[int, int]:
    """Give every ``every``-th fact two earlier revisions; archive ``archived`` more facts."""
    revisions = moved = 0
    for store in (paths.project_store, paths.global_store):
        for number, path in enumerate(sorted(store.glob("*.md"))):
            if path.name == "MEMORY.md" or number % every:
                continue
            fact = parse_fact(path.read_bytes(), path=path, store_scope="project",
                              mtime=datetime.now(UTC)).fact
            folder = store / ".revisions" / fact.id
            folder.mkdir(parents=True, exist_ok=True)
            for rev in (1, 2):
                old = replace(fact, revision=rev, body=f"{fact.body} (revision {rev})")
                (folder / f"{rev:09d}.md").write_bytes(render_fact(old))
                revisions += 1
            path.write_bytes(render_fact(replace(fact, revision=3)))
        archive = store / ".archive"
        archive.mkdir(exist_ok=True)
        for path in sorted(store.glob("*.md"))[: archived // 2]:
            if path.name != "MEMORY.md":
                path.rename(archive / f"20260101-000000.000-{path.name}")
                moved += 1
    return revisions, moved


def run(argv: list[str], cwd: Path | None = None) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"failed: {' '.join(argv)}: {err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def measure(label: str, runs: int, make: object, base: float) -> str:
    """Median figures of ``runs`` calls of ``make()`` (which returns the argv and cwd)."""
    results = [run(*make()) for _ in range(runs)]  # type: ignore[operator]
    wall = statistics.median(r[0] for r in results)
    cpu = statistics.median(r[1] for r in results)
    rss = max(r[2] for r in results)
    return (f"{label:34} {wall:8.3f} s  cpu {cpu:7.3f} s  rss {rss:7.1f} MiB"
            f"  ({wall / base:6.1f}× anchor)")


def main() -> None:
    """Build the store, then print export / restore / tar figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "context_engine"]
    with tempfile.TemporaryDirectory(prefix="transfer-bench-") as tmp:
        base = Path(tmp)
        paths = make_workspace(base / "src", args.facts)
        revisions, archived = add_history(paths)
        home, ws = paths.home, paths.workspace
        bundle = base / "bundle.tar.gz"
        tarball = base / "stores.tgz"
        counter = iter(range(10_000))
        anchor = statistics.median(run([sys.executable, "-c", "pass"])[0] for _ in range(5))
        print(f"store: {args.facts} facts, {revisions} revision snapshots, {archived} archived "
              f"(machine shared with other jobs: figures are indicative)")
        print(f"anchor `python -c pass`: {anchor * 1000:.1f} ms")
        rel = [str(p.relative_to(home)) for p in (paths.project_store, paths.global_store)]

        def export_argv() -> tuple[list[str], None]:
            return [*cli, "--home", str(home), "--workspace", str(ws), "export", "--out",
                    str(bundle)], None

        def restore_argv() -> tuple[list[str], None]:
            target = base / f"restored-{next(counter)}"
            return [*cli, "--home", str(target), "--workspace", str(ws), "import", "bundle",
                    str(bundle), "--yes"], None

        def tar_c() -> tuple[list[str], Path]:
            return ["tar", "-czf", str(tarball), *rel], home

        def tar_x() -> tuple[list[str], Path]:
            target = base / f"untarred-{next(counter)}"
            target.mkdir()
            return ["tar", "-xzf", str(tarball)], target

        # ru_maxrss of a child counts what it shares with this forked parent until exec, so
        # small processes (tar) show the parent's size as a floor.
        print(measure("context-engine export", args.runs, export_argv, anchor))
        print(measure("tar -czf (same folders)", args.runs, tar_c, anchor))
        print(measure("context-engine import bundle --yes", args.runs, restore_argv, anchor))
        print(measure("tar -xzf (same folders)", args.runs, tar_x, anchor))
        print(f"bundle {bundle.stat().st_size / 1024:.0f} KiB, tar.gz "
              f"{tarball.stat().st_size / 1024:.0f} KiB")
        for leftover in base.glob("restored-*"):
            shutil.rmtree(leftover, ignore_errors=True)


if __name__ == "__main__":
    main()
