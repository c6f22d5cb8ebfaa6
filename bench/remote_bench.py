"""Round-trip latency of the remote catalog vs the in-process catalog (issue 8).

Builds a home with N facts (default 10,000), then times list / read / recall through
``LocalCatalog`` (in process) and through ``RemoteCatalog`` talking JSON-RPC to a local
``context-engine serve --stdio`` subprocess (the ssh case minus the network). Prints medians
and the remote/local ratio; the difference is the protocol's cost (encode, pipe, decode).

    .venv/bin/python bench/remote_bench.py [--facts 10000] [--runs 7]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from _timing import median
from context_engine.catalog.base import Catalog
from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.remote import RemoteCatalog
from context_engine.facts.codec import new_id, render_fact
from context_engine.facts.model import Fact
from context_engine.paths import EnginePaths

TYPES = ("project", "reference", "user", "feedback")
QUERIES = ("how is the release build configured", "component 42 notes", "paths like this")


def generate(store: Path, n: int) -> str:
    """Write ``n`` facts directly (no store calls); returns the name of one of them."""
    store.mkdir(parents=True, exist_ok=True)
    when = datetime(2026, 7, 1, tzinfo=UTC)
    for i in range(n):
        fact = Fact(
            id=new_id(),
            revision=1,
            name=f"fact-{i:06d}",
            title=f"Fact number {i}",
            description=f"Generated fact {i} about component {i % 97}: release notes",
            type=TYPES[i % 4],  # type: ignore[arg-type]
            scope="project",
            body=f"Body of fact {i}: the release build of component {i % 97} uses flag {i % 13}.",
            created_at=when,
            updated_at=when,
        )
        (store / f"{fact.name}.md").write_bytes(render_fact(fact))
    return f"fact-{n // 2:06d}"


def median_ms(func: Callable[[], object], runs: int) -> float:
    """Median wall time of ``runs`` calls after one warm-up, in milliseconds."""
    return median(func, runs, warm_up=True) * 1000


def measure(catalog: Catalog, name: str, runs: int) -> dict[str, float]:
    """Median ms of list / read / recall on one catalog."""
    queries = iter(QUERIES * (runs + 2))
    return {
        "list": median_ms(catalog.list_facts, runs),
        "read": median_ms(lambda: catalog.read(name), runs),
        "recall": median_ms(lambda: catalog.recall(next(queries)), runs),
    }


def main() -> None:
    """Build the home, measure both catalogs, print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = base / "proj"
        (root / ".git").mkdir(parents=True)
        home = base / "home"
        paths = EnginePaths(home=home, state=home, workspace=root, root=root)
        name = generate(paths.project_store, args.facts)
        command = [
            sys.executable, "-m", "context_engine", "serve", "--stdio", "--no-watch",
            "--home", str(home), "--workspace", str(root),
        ]  # fmt: skip
        started = time.perf_counter()
        remote = RemoteCatalog(command)
        connect_ms = (time.perf_counter() - started) * 1000
        try:
            local = measure(LocalCatalog(paths), name, args.runs)
            far = measure(remote, name, args.runs)
        finally:
            remote.close()
    print(f"remote catalog bench: {args.facts} facts, median of {args.runs} runs (ms)")
    print(f"connect (spawn + initialize): {connect_ms:.1f}")
    print(f"{'op':<8}{'in-process':>12}{'remote':>12}{'ratio':>8}{'overhead':>11}")
    for op in ("list", "read", "recall"):
        ratio = far[op] / local[op] if local[op] else float("inf")
        print(f"{op:<8}{local[op]:>12.2f}{far[op]:>12.2f}{ratio:>8.2f}{far[op] - local[op]:>11.2f}")


if __name__ == "__main__":
    main()
