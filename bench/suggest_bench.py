"""Suggestions benchmark: scan time over long sessions and over a home with many sessions (S11).

Case A: 12 sessions of 2,000 turns each (3 per format: Reasonix, Claude Code, Codex, Gemini),
turns drawn from everyday requests, marker statements (EN/ZH), repeated workflows, pasted code
and host-injected wrappers. Baseline: reading the same files and ``json.loads`` of every line.
Case B: a home with 5,000 session files (all four formats); only the 12 newest are parsed.
Baseline: the same scan over a home holding only those 12 files. Case C: as B, but every Codex
rollout belongs to another workspace and is newer than ours: each has its header line probed
(a rollout names its workspace only inside the file).

    .venv/bin/python bench/suggest_bench.py [--turns 2000] [--files 5000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _timing import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "app"))
sys.path.insert(0, str(ROOT / "tests"))

from context_engine.suggestions.readers import _io  # noqa: E402
from context_engine.suggestions.scanner import scan  # noqa: E402
from support.suggest import FORMATS, Home, make_home, write_session  # noqa: E402

REQUESTS = [
    "Fix the failing test in parser_test.go.",
    "Explain what the scheduler does when a job times out.",
    "Refactor the config loader so it reads env vars first.",
    "Update the pull request after review.",
    "Run `make lint` and fix what it reports.",
    "Add a flag for the output directory.",
    "帮我看一下这个函数为什么这么慢。",
    "把这个模块拆成两个文件。",
    "Why does the cache miss on the second call?",
    "Rename `fetchAll` to `fetch_all` everywhere.",
]
MARKERS = [
    "Always run the linters before you commit.",
    "Never push directly to main.",
    "以后请始终用中文回复，除非我明确要求英文。",
    "I prefer small focused commits.",
    "By default the API listens on 8080.",
    "不要修改生成的文件。",
    "Remember that the staging DB is read-only.",
]
CODE = (
    "Here is the trace:\n```\nTraceback (most recent call last):\n"
    '  File "x.py", line 3\n```\nalways?'
)
WRAPPED = "<response-language>\nuse English\n</response-language>\n"


def turn_text(rng: random.Random, fmt: str) -> str:
    """One user turn: mostly requests, some rules, some pasted code."""
    pick = rng.random()
    if pick < 0.06:
        text = rng.choice(MARKERS)
    elif pick < 0.12:
        text = CODE
    else:
        text = rng.choice(REQUESTS) + f" (item {rng.randrange(10_000)})"
    return WRAPPED + text if fmt == "reasonix" and rng.random() < 0.3 else text


def median_time(func: Callable[[], object], runs: int) -> float:
    """Median wall time of ``runs`` calls, in seconds."""
    return median(func, runs)


def parse_only(files: list[Path]) -> None:
    """Baseline: read every file and decode each JSON line (or the whole document)."""
    for path in files:
        data = path.read_bytes()
        if path.suffix == ".json":
            json.loads(data)
            continue
        for line in data.splitlines():
            if line.strip():
                json.loads(line)


def scan_of(home: Home) -> Callable[[], object]:
    return lambda: scan(home.paths, home.roots, facts=[], instruction_bodies=[])


def case_long_sessions(base: Path, turns: int, runs: int) -> None:
    rng = random.Random(7)
    home = make_home(base / "a")
    files = []
    for i in range(12):
        fmt = FORMATS[i % 4]
        texts = [turn_text(rng, fmt) for _ in range(turns)]
        files.append(write_session(home, fmt, f"long{i:02d}", texts, mtime=1_000 + i))
    size = sum(p.stat().st_size for p in files)
    result = scan(home.paths, home.roots, facts=[], instruction_bodies=[])
    t_scan = median_time(scan_of(home), runs)
    t_parse = median_time(lambda: parse_only(files), runs)
    print(f"A. 12 sessions x {turns} turns ({12 * turns} user turns, {size / 1e6:.1f} MB)")
    print(f"   scan            {t_scan * 1000:8.1f} ms  (median of {runs})")
    print(f"   baseline parse  {t_parse * 1000:8.1f} ms  read + json.loads of every line")
    print(f"   ratio scan/parse {t_scan / t_parse:6.2f}x")
    print(
        f"   found {len(result.memories)} memory and {len(result.skills)} skill candidates "
        f"from {len(result.sessions)} sessions"
    )


def _count_reads(home: Home) -> tuple[int, int]:
    whole: list[Path] = []
    header: list[Path] = []
    real_whole, real_header = _io.read_bytes, _io.read_first_line
    _io.read_bytes = lambda p: whole.append(p) or real_whole(p)  # type: ignore[assignment]
    _io.read_first_line = lambda p, limit=_io.HEADER_LIMIT: (  # type: ignore[assignment]
        header.append(p) or real_header(p, limit)
    )
    try:
        scan(home.paths, home.roots, facts=[], instruction_bodies=[])
    finally:
        _io.read_bytes, _io.read_first_line = real_whole, real_header
    sessions = [p for p in whole if p.name != "projects.json"]
    return len(sessions), len(header)


def _many(base: Path, files: int, foreign_codex: bool) -> tuple[Home, Home]:
    rng = random.Random(11)
    home = make_home(base / ("c" if foreign_codex else "b"))
    small = make_home(base / ("c12" if foreign_codex else "b12"))
    other = base / "elsewhere"
    for i in range(files):
        fmt = FORMATS[i % 4]
        texts = [turn_text(rng, fmt) for _ in range(20)]
        foreign = foreign_codex and fmt == "codex"
        # Case C's foreign rollouts are the newest files: every one is probed before ours.
        mtime = 10_000 + i + (files if foreign else 0)
        write_session(home, fmt, f"s{i:05d}", texts, root=other if foreign else None, mtime=mtime)
        newest = i >= files - 12 if not foreign_codex else False
        if newest:
            write_session(small, fmt, f"s{i:05d}", texts, mtime=10_000 + i)
    return home, small


def case_many_files(base: Path, files: int, runs: int) -> None:
    home, small = _many(base, files, foreign_codex=False)
    parsed, probed = _count_reads(home)
    t_many = median_time(scan_of(home), runs)
    t_small = median_time(scan_of(small), runs)
    print(f"B. home with {files} session files (4 formats), 20 turns each")
    print(f"   scan            {t_many * 1000:8.1f} ms  parsed {parsed} files, {probed} headers")
    print(f"   baseline 12     {t_small * 1000:8.1f} ms  same 12 newest files alone")
    print(f"   ratio           {t_many / t_small:6.2f}x  (listing + stat of {files} files)")
    c_home, _ = _many(base, files, foreign_codex=True)
    parsed, probed = _count_reads(c_home)
    t_foreign = median_time(scan_of(c_home), runs)
    print(f"C. as B, the {files // 4} newest files are Codex rollouts of another workspace")
    print(f"   scan            {t_foreign * 1000:8.1f} ms  parsed {parsed} files, {probed} headers")
    print(f"   ratio vs B      {t_foreign / t_many:6.2f}x")


def main() -> None:
    """Run both cases and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        case_long_sessions(Path(tmp), args.turns, args.runs)
        case_many_files(Path(tmp), args.files, args.runs)


if __name__ == "__main__":
    main()
