"""Fact codec benchmark: parse+render N generated facts vs generic YAML frontmatter vs raw read.

Usage: python bench/codec_bench.py [--facts 10000] [--runs 5]

Writes N facts (rendered by our codec) into a temp store, then times, with a warm page cache:
  raw        scandir + open + read every file (the floor)
  ours       raw + parse_fact (fast reader for canonical files)
  strict     raw + parse_fact_strict (our strict YAML loader only)
  fm-c       raw + split + yaml.load(CSafeLoader) (python-frontmatter's default with libyaml)
  fm-py      raw + split + yaml.safe_load (pure-Python SafeLoader)
  parse      parse_fact alone over bytes already in memory (no I/O)
  render     render_fact for every parsed fact (no I/O)
Prints the median of --runs rounds (cases interleaved) and the ratio to the raw floor.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))

import yaml
from context_engine.facts.codec import (
    new_id,
    parse_fact,
    parse_fact_strict,
    render_fact,
)
from context_engine.facts.model import Fact

WORDS = [
    "release",
    "build",
    "cache",
    "deploy",
    "branch",
    "main",
    "test",
    "lint",
    "schema",
    "store",
    "recall",
    "memory",
    "user",
    "prefers",
    "tabs",
    "spaces",
    "python",
    "rust",
    "go",
    "docker",
    "ci",
    "pipeline",
    "token",
    "review",
    "记忆",
    "召回",
    "项目",
]
TITLES = ("Note: {w}", "#{w} tag", '"{w}" quoted', "- {w}", "type: reference", "{w} {w}")
_FENCE = re.compile(r"^---\s*$", re.MULTILINE)


def _fact(rng: random.Random, index: int) -> Fact:
    words = [rng.choice(WORDS) for _ in range(rng.randint(2, 8))]
    title = " ".join(words).capitalize()
    if index % 7 == 0:
        title = rng.choice(TITLES).format(w=words[0])
    fact_type = rng.choice(("user", "feedback", "project", "reference"))
    created = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 10**7))
    body = "\n".join(
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 15)))
        for _ in range(rng.randint(1, 12))
    )
    return Fact(
        id=new_id(),
        revision=rng.randint(1, 9),
        name=f"fact-{index}-{words[0]}",
        title=title,
        description=" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))),
        type=fact_type,
        scope="project",
        body=body,
        created_at=created,
        updated_at=created + timedelta(milliseconds=rng.randint(0, 10**6)),
    )


def _write_store(root: Path, count: int) -> None:
    rng = random.Random(20261130)
    for index in range(count):
        fact = _fact(rng, index)
        (root / f"{fact.name}.md").write_bytes(render_fact(fact))


def _read_all(root: Path) -> list[tuple[Path, bytes]]:
    out = []
    for entry in os.scandir(root):
        if entry.name.endswith(".md"):
            with open(entry.path, "rb") as handle:
                out.append((Path(entry.path), handle.read()))
    return out


def _frontmatter_generic(data: bytes, loader: type) -> object:
    text = data.decode("utf-8")
    parts = _FENCE.split(text, 2)
    return yaml.load(parts[1], Loader=loader), parts[2].strip()


def main() -> None:
    """Run the benchmark and print medians and ratios to the raw-read floor."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--slow-sample",
        type=int,
        default=500,
        help="files the pure-Python loaders (strict, fm-py) parse per round; 0 skips them",
    )
    args = parser.parse_args()
    mtime = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write_store(root, args.facts)
        _read_all(root)  # warm the page cache

        def ours() -> None:
            for path, data in _read_all(root):
                parse_fact(data, path=path, store_scope="project", mtime=mtime)

        sample = sorted(os.listdir(root))[: args.slow_sample]

        def _read_sample() -> list[tuple[Path, bytes]]:
            return [((root / name), (root / name).read_bytes()) for name in sample]

        def strict() -> None:
            for path, data in _read_sample():
                parse_fact_strict(data, path=path, store_scope="project", mtime=mtime)

        def fm_c() -> None:
            for _, data in _read_all(root):
                _frontmatter_generic(data, yaml.CSafeLoader)

        def fm_py() -> None:
            for _, data in _read_sample():
                _frontmatter_generic(data, yaml.SafeLoader)

        facts = [
            parse_fact(d, path=p, store_scope="project", mtime=mtime).fact
            for p, d in _read_all(root)
        ]
        assert all(render_fact(f) == d for f, (_, d) in zip(facts, _read_all(root), strict=True))

        blobs = _read_all(root)

        def parse_only() -> None:
            for path, data in blobs:
                parse_fact(data, path=path, store_scope="project", mtime=mtime)

        def render() -> None:
            for fact in facts:
                render_fact(fact)

        cases: list[tuple[str, Callable[[], object], int]] = [
            ("raw", lambda: _read_all(root), args.runs),
            ("ours", ours, args.runs),
            ("fm-c", fm_c, args.runs),
            ("parse", parse_only, args.runs),
            ("render", render, args.runs),
        ]
        if sample:
            cases += [
                ("raw-smp", _read_sample, args.runs),
                ("strict", strict, args.runs),
                ("fm-py", fm_py, args.runs),
            ]
        samples = _round_robin(cases)
    print(f"facts={args.facts} runs={args.runs} python={sys.version.split()[0]}")
    print("cases run round-robin; 'x floor' = median of per-round ratios to the raw read of")
    print(f"the same files (strict and fm-py parse a {len(sample)}-file sample: raw-smp floor)")
    print(f"{'case':8} {'median s':>10} {'us/fact':>9} {'x floor':>8}")
    for name, values in samples.items():
        small = name in ("strict", "fm-py", "raw-smp")
        floor = samples["raw-smp" if small else "raw"]
        count = len(sample) if small else args.facts
        ratios = [v / r for v, r in zip(values, floor, strict=False)]
        median = statistics.median(values)
        per = median / count * 1e6
        print(f"{name:8} {median:10.4f} {per:9.1f} {statistics.median(ratios):8.2f}")


def _round_robin(cases: list[tuple[str, Callable[[], object], int]]) -> dict[str, list[float]]:
    """Time every case once per round, so machine load drifts hit all cases alike."""
    samples: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    for round_index in range(max(runs for _, _, runs in cases)):
        for name, fn, runs in cases:
            if round_index < runs:
                start = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - start)
    return samples


if __name__ == "__main__":
    main()
