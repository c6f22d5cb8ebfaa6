"""Secret rule table and write-policy throughput (S10.1, S10.2, RELIABILITY §3 D6).

Prints medians of several runs, in CPU milliseconds of the measuring process (wall time on a
shared machine is mostly other people's load), for this tree and (``--before REF``, default
the merge base with ``main``) for the engine as it was at REF, measured the same way in the same
run, with the ratio after/before:

* the rule table on fact-sized text and on 1 MB adversarial inputs (runs of every literal a
  rule anchors on, long lines of ``password …``, zero-width characters …);
* a scan of a 10,000-fact store (every name, title, description and body, as an audit would);
* ``evaluate_remember`` against 10,000 active facts (the duplicate check is linear in N);
* one literal ``re`` pass over 1 MB as the floor of any scan (``floor``).

    .venv/bin/python bench/policy_bench.py [--runs 5] [--rounds 3] [--mb 1] [--facts 10000]
        [--before REF | --no-before]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import Any

from _timing import median

ROOT = Path(__file__).resolve().parents[1]


def median_ms(func: Callable[[], object], runs: int) -> float:
    """Median CPU time of ``func`` in ms (CPU, not wall: the machine is shared)."""
    return median(func, runs, clock=time.process_time) * 1000


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
        "key-value",
        "SKU",
        "password reset flow",
        "machine learning",
        "a:b",
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
        "password *": "password " * (n // 9),
        "-----BEGIN*": "-----BEGIN" * (n // 10),
        "eyJ*": "eyJ" * (n // 3),
        "@labels*": ("@" + "a" * 62 + ".") * (n // 64),
        "zero-width": "\u200ba" * (n // 2),
        "k-*": "k-" * (n // 2),
        "N*n": "N" * n,
        "hex-*": "0123abcd-" * (n // 9),
        "dash*n": "-" * n,
        ":A*": ":A" * (n // 2),
        "digits": "1" * n,
        "SG.*": "SG." * (n // 3),
        "base64": "Ab1+" * (n // 4),
    }


def store_facts(count: int, rng: random.Random) -> list[dict[str, str]]:
    """Field maps of a store's facts: names, titles, descriptions, 300–1,500-character bodies."""
    return [
        {
            "name": f"fact-{i}",
            "title": f"Fact number {i}",
            "description": f"Description of fact {i}",
            "body": prose(rng.randrange(300, 1500), rng),
        }
        for i in range(count)
    ]


def measure(opts: argparse.Namespace) -> dict[str, float]:
    """Every figure of one engine tree (the one on ``sys.path``), in ms."""
    from context_engine.facts.model import Fact
    from context_engine.policy.sensitive import scan_fields, scan_text
    from context_engine.policy.write_policy import (
        Controller,
        evaluate_remember,
        parse_remember_args,
    )

    rng = random.Random(1)
    scan_text("warm-up é")  # builds the Cf table once (~70 ms), outside the figures
    out: dict[str, float] = {}
    floor_text = prose(10**6, rng)
    out["floor (1 re pass, 1 MB)"] = median_ms(
        lambda: list(re.finditer("@", floor_text)), opts.runs
    )
    for label, size in (("fact 2 KB", 2_000), ("fact 6 KB", 6_000), ("prose 1 MB", 10**6)):
        text = prose(size, rng)
        out[label] = median_ms(lambda t=text: scan_text(t), opts.runs)
    for label, text in adversarial(opts.mb).items():
        out[f"adv {label}"] = median_ms(lambda t=text: scan_text(t), opts.runs)
    facts = store_facts(opts.facts, rng)
    out[f"store scan {opts.facts} facts"] = median_ms(
        lambda: [scan_fields(fields) for fields in facts], max(1, opts.runs // 2)
    )
    active = [
        Fact(
            id=f"mem-{i:032x}",
            revision=1,
            name=f"fact-{i}",
            title=f"Fact number {i}",
            description=f"Description of fact {i}",
            type="project",
            scope="project",
            body="b",
        )
        for i in range(opts.facts)
    ]
    args = parse_remember_args(
        {
            "name": "release-target",
            "type": "project",
            "description": "Release target for this project",
            "body": "Release artifacts are published from main-v2.",
        }
    )
    who = Controller("headless")
    out[f"evaluate_remember {opts.facts} facts"] = median_ms(
        lambda: evaluate_remember(args, active, who), opts.runs
    )
    return out


def before_tree(ref: str, into: Path) -> Path:
    """``app/`` as it was at ``ref`` (git archive, no checkout)."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "app"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as archive:
        archive.extractall(into, filter="data")
    return into / "app"


def _median_of(figures: list[dict[str, float]]) -> dict[str, float]:
    """Per label, the median over rounds."""
    return {label: statistics.median(f[label] for f in figures) for label in figures[0]}


def measure_tree(app: Path, opts: argparse.Namespace) -> dict[str, float]:
    """``measure`` in a fresh interpreter with ``app`` on its path."""
    argv = [sys.executable, __file__, "--app", str(app), "--runs", str(opts.runs)]
    argv += ["--mb", str(opts.mb), "--facts", str(opts.facts)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mb", type=int, default=1, help="size of the adversarial inputs (MB)")
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3, help="alternating before/after rounds")
    parser.add_argument(
        "--before", default=None, help="git ref to compare with (default: merge base with main)"
    )
    parser.add_argument("--no-before", action="store_true", help="measure this tree only")
    parser.add_argument("--app", help=argparse.SUPPRESS)  # internal: measure this app/ tree
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.app:
        sys.path.insert(0, opts.app)
        print(json.dumps(measure(opts)))
        return
    before: dict[str, Any] = {}
    ref = ""
    if not opts.no_before:
        ref = (
            opts.before
            or subprocess.run(
                ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
    with tempfile.TemporaryDirectory() as tmp:
        trees = [ROOT / "app"] if opts.no_before else [before_tree(ref, Path(tmp)), ROOT / "app"]
        # Before and after alternate, ``--rounds`` times: a burst of load elsewhere then
        # lands on both sides instead of skewing one of them.
        rounds = [[measure_tree(app, opts) for app in trees] for _ in range(opts.rounds)]
    after = _median_of([r[-1] for r in rounds])
    if not opts.no_before:
        before = _median_of([r[0] for r in rounds])
    print(
        f"policy bench: median of {opts.runs} runs x {opts.rounds} alternating rounds, CPU ms; "
        f"before = {ref[:10] or '-'}"
    )
    print(f"{'':>34} {'before':>9} {'after':>9} {'ratio':>6}")
    for label, value in after.items():
        old = before.get(label)
        if old is None:
            print(f"{label:>34} {'-':>9} {value:9.2f}")
        else:
            print(f"{label:>34} {old:9.2f} {value:9.2f} {value / old:5.2f}x")


if __name__ == "__main__":
    main()
