"""Sensitive-content scan and write-policy throughput (S10.1, S10.2, RELIABILITY §3 D6).

Prints medians of several runs:
* scan time of realistic fact text and of 1 MB adversarial inputs, with the ratio to a
  baseline in the same run (one literal ``re`` pass over the same text: the floor of any scan);
* ``evaluate_remember`` time against N active facts (the duplicate check is linear in N).

    .venv/bin/python bench/policy_bench.py [--runs 5] [--mb 1] [--facts 10000]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))

from context_engine.facts.model import Fact
from context_engine.policy.sensitive import scan_text
from context_engine.policy.write_policy import (
    Controller,
    evaluate_remember,
    parse_remember_args,
)

BASELINE = re.compile(r"@")


def median_seconds(func: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        func()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def prose(size: int, rng: random.Random) -> str:
    """Fact-like text: words, paths, digests, code fragments; no secrets."""
    words = [
        "release",
        "build",
        "deploy",
        "main-v2",
        "config.toml",
        "pytest",
        "make",
        "the",
        "uses",
        "branch",
        "/srv/app",
        "sha256:" + "ab12" * 16,
        "port 8443",
        "--json",
    ]
    parts: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(words)
        parts.append(word)
        length += len(word) + 1
    return " ".join(parts)[:size]


def adversarial(mb: int) -> dict[str, str]:
    n = mb * 10**6
    return {
        "a*n": "a" * n,
        "password=*": "password=" * (n // 9),
        "-----BEGIN*": "-----BEGIN" * (n // 10),
        "eyJ*": "eyJ" * (n // 3),
        "@labels*": ("@" + "a" * 62 + ".") * (n // 64),
        "zero-width": "\u200ba" * (n // 2),
        "k-*": "k-" * (n // 2),
    }


def facts(count: int) -> list[Fact]:
    return [
        Fact(
            id=f"mem-{i:032x}",
            revision=1,
            name=f"fact-{i}",
            title=f"Fact number {i}",
            description=f"Description of fact {i}",
            type="project",
            scope="project",
            body="body",
        )
        for i in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mb", type=int, default=1, help="size of the adversarial inputs (MB)")
    parser.add_argument("--facts", type=int, default=10_000)
    opts = parser.parse_args()
    rng = random.Random(1)
    scan_text("warm-up é")  # builds the Cf table once (~70 ms), outside the figures

    print(f"scan: median of {opts.runs} runs; ratio = scan / one literal re pass")
    for label, size in (("fact 2 KB", 2_000), ("fact 6 KB", 6_000), ("prose 1 MB", 10**6)):
        text = prose(size, rng)
        scan = median_seconds(lambda t=text: scan_text(t), opts.runs)
        base = median_seconds(lambda t=text: list(BASELINE.finditer(t)), opts.runs)
        rate = size / scan / 1e6
        print(f"  {label:>14}: {scan * 1000:8.2f} ms  {rate:6.1f} MB/s  ratio {scan / base:6.1f}x")
    for label, text in adversarial(opts.mb).items():
        scan = median_seconds(lambda t=text: scan_text(t), opts.runs)
        base = median_seconds(lambda t=text: list(BASELINE.finditer(t)), opts.runs)
        print(
            f"  {label:>14}: {scan * 1000:8.2f} ms  ({len(text) / 1e6:.1f} M chars)"
            f"  ratio {scan / base:6.1f}x"
        )

    active = facts(opts.facts)
    args = parse_remember_args(
        {
            "name": "release-target",
            "description": "Release target for this project",
            "type": "project",
            "body": "Release artifacts are published from main-v2.",
        }
    )
    who = Controller("headless")
    decide = median_seconds(lambda: evaluate_remember(args, active, who), opts.runs)
    empty = median_seconds(lambda: evaluate_remember(args, [], who), opts.runs)
    print(
        f"evaluate_remember at {opts.facts} facts: {decide * 1000:.2f} ms "
        f"(empty store {empty * 1000:.3f} ms; ratio {decide / empty:.0f}x)"
    )


if __name__ == "__main__":
    main()
