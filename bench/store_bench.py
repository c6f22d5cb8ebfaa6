"""Store benchmark (issue 2): open+list N facts vs the raw floor of reading the same bytes.

    .venv/bin/python bench/store_bench.py            # 10,000 facts
    .venv/bin/python bench/store_bench.py --n 100000 # the big store

Prints medians of several runs (warm page cache), the ratio to the raw floor, the cost of one
update and one create (lock, snapshot, fsyncs, MEMORY.md), and memory use. Never asserted.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))

from context_engine.facts.codec import new_id, render_fact
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from context_engine.paths import EnginePaths

TYPES = ("project", "reference", "user", "feedback")


def generate(store: Path, n: int) -> int:
    """Write ``n`` S3.1 facts directly (no store calls); returns total bytes."""
    store.mkdir(parents=True, exist_ok=True)
    when = datetime(2026, 7, 1, tzinfo=UTC)
    total = 0
    for i in range(n):
        fact = Fact(
            id=new_id(),
            revision=1 + i % 3,
            name=f"fact-{i:06d}",
            title=f"Fact number {i}",
            description=f"Generated fact {i} about component {i % 97}: release notes",
            type=TYPES[i % 4],  # type: ignore[arg-type]
            scope="project",
            body=("Line of body text with some words, paths/like/this.py and numbers 6928. " * 6),
            created_at=when,
            updated_at=when,
        )
        data = render_fact(fact)
        (store / f"{fact.name}.md").write_bytes(data)
        total += len(data)
    return total


def raw_floor(store: Path) -> int:
    """Read every fact file's bytes with the same syscalls the store uses (no parsing)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    total = 0
    for entry in os.scandir(store):
        if entry.name.endswith(".md") and entry.name != "MEMORY.md":
            entry.stat(follow_symlinks=False)
            fd = os.open(entry.path, flags)
            try:
                total += len(os.read(fd, 1 << 20))
            finally:
                os.close(fd)
    return total


def timed(func: object, runs: int) -> tuple[float, list[float]]:
    """Median wall time of ``runs`` calls."""
    samples = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        func()  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), samples


_CHILD = """
import sys, time
sys.path.insert(0, {app!r})
from pathlib import Path
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
paths = EnginePaths.resolve(home={home!r}, workspace={ws!r}, root={ws!r})
start = time.perf_counter()
Memory(paths).save(id={fact_id!r}, body={body!r})
print(time.perf_counter() - start)
"""


def _fresh_process_update(paths: EnginePaths, fact_id: str, i: int) -> float:
    """One update by id in a new process, like one CLI call (interpreter start-up excluded)."""
    code = _CHILD.format(
        app=str(Path(__file__).resolve().parents[1] / "app"),
        home=str(paths.home),
        ws=str(paths.root),
        fact_id=fact_id,
        body=f"fresh {i}",
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000, help="facts in the store")
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        paths = EnginePaths.resolve(home=Path(tmp) / "home", workspace=ws, root=ws)
        size = generate(paths.project_store, args.n)
        print(f"store: {args.n:,} facts, {size / 1e6:.1f} MB")
        raw_floor(paths.project_store)  # warm the page cache
        floor, _ = timed(lambda: raw_floor(paths.project_store), args.runs)
        cold, _ = timed(lambda: Memory(paths).list_all(), args.runs)
        cached = Memory(paths)
        cached.list_all()
        warm, _ = timed(cached.list_all, args.runs)
        print(f"raw read floor             {floor * 1e3:9.1f} ms")
        print(f"open + list (fresh Memory) {cold * 1e3:9.1f} ms   {cold / floor:5.2f}x floor")
        print(f"re-list (stamp cache)      {warm * 1e3:9.1f} ms   {warm / floor:5.2f}x floor")

        memory = Memory(paths)
        target = memory.resolve("fact-000000")
        memory.save(id=target.id, body="warm-up")  # first write: lock file, migration pass
        counter = iter(range(10**9))
        update, _ = timed(lambda: memory.save(id=target.id, body=f"v{next(counter)}"), args.runs)
        by_name, _ = timed(
            lambda: memory.save(name="fact-000001", body=f"n{next(counter)}"), args.runs
        )
        create, _ = timed(
            lambda: memory.save(name=f"new-{next(counter)}", description="d", body="b"), args.runs
        )
        fresh = statistics.median(
            _fresh_process_update(paths, target.id, i) for i in range(args.runs)
        )
        print(f"one update by id           {update * 1e3:9.1f} ms")
        print(
            f"  same, in a new process   {fresh * 1e3:9.1f} ms   (one CLI call, start-up excluded)"
        )
        print(f"one update by name         {by_name * 1e3:9.1f} ms")
        print(f"one create                 {create * 1e3:9.1f} ms")

        gc.collect()
        tracemalloc.start()
        facts = Memory(paths).list_all()
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"memory: snapshot of {len(facts):,} facts holds {current / 1e6:.1f} MB "
            f"(peak {peak / 1e6:.1f} MB while listing); process max RSS {rss:.0f} MB"
        )


if __name__ == "__main__":
    main()
