"""Benchmark: resolve instructions for a target six levels deep (S6, S14.2).

Default tree: 60 instruction files (42 on the root → target chain, 18 in side directories that
must not be read) and 200 import lines (nested up to three levels, with repeats that hit the
duplicate-import path). Prints the median time per resolution over several runs and the ratio
to a baseline that reads the same files with plain ``open()`` (no confinement, no expansion).

    .venv/bin/python bench/instructions_bench.py [--runs 30] [--imports 200] [--side 18]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))

from context_engine.instructions import render_provider_block, resolve_instructions
from context_engine.instructions.model import LOCAL_NAMES, NORMAL_NAMES
from context_engine.paths import EnginePaths

DEPTH = 6
NAMES = NORMAL_NAMES + LOCAL_NAMES


def build(base: Path, imports: int, side: int) -> tuple[EnginePaths, Path, list[Path]]:
    """Write the tree; return paths, the target and the chain's instruction files."""
    root = base / "ws"
    chain = [root]
    for level in range(1, DEPTH + 1):
        chain.append(chain[-1] / f"level{level}")
    docs: list[Path] = []
    for directory in chain:
        (directory / "docs").mkdir(parents=True, exist_ok=True)
        for name in NAMES:
            docs.append(directory / name)
    for index in range(side):
        side_dir = chain[index % len(chain)] / f"side{index}"
        side_dir.mkdir(parents=True, exist_ok=True)
        (side_dir / "AGENTS.md").write_text(f"side rule {index}\n")
    lines: dict[Path, list[str]] = {d: [f"Rule for {d.parent.name}/{d.name}."] for d in docs}
    for index in range(imports):
        doc = docs[index % len(docs)]
        docs_dir = doc.parent / "docs"
        if index % 5 == 4 and len(lines[doc]) > 1:  # a repeat: exercises the duplicate note
            lines[doc].append(lines[doc][-1])
            continue
        topic = docs_dir / f"topic{index}.md"
        nested = docs_dir / f"nested{index}.md"
        topic.write_text(f"Topic {index}: keep it tidy.\n@nested{index}.md\n")
        nested.write_text(f"Nested {index}: details.\n" * 3)
        lines[doc].append(f"@docs/topic{index}.md")
    for doc, body in lines.items():
        doc.write_text("\n".join(body) + "\n")
    home = base / "home"
    home.mkdir()
    for name in NORMAL_NAMES:
        (home / name).write_text(f"user {name}\n")
    paths = EnginePaths(home=home, state=home, workspace=chain[-1], root=root)
    return paths, chain[-1], docs


def timed(func: object, runs: int, clock: object = time.perf_counter) -> list[float]:
    """Seconds of ``runs`` calls by ``clock`` (wall clock by default)."""
    out = []
    for _ in range(runs):
        start = clock()  # type: ignore[operator]
        func()  # type: ignore[operator]
        out.append(clock() - start)  # type: ignore[operator]
    return out


def main() -> None:
    """Build the tree, time both readers, print figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--imports", type=int, default=200)
    parser.add_argument("--side", type=int, default=18)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths, target, docs = build(Path(tmp), args.imports, args.side)
        res = resolve_instructions(paths, target)
        block = render_provider_block(res)
        files = len(docs) + args.side
        imports_loaded = sum(len(doc.imports) for doc in res.documents)
        print(
            f"tree: {files} workspace instruction files ({len(docs)} on the chain, {args.side} "
            f"aside) + {len(NORMAL_NAMES)} user files, {args.imports} import lines, "
            f"target {DEPTH} levels deep"
        )
        print(
            f"resolution: {len(res.documents)} documents, {imports_loaded} imports expanded, "
            f"{len(res.diagnostics)} diagnostics, block {len(block)} chars"
        )

        read_set = [path for path, stamp in res.watched if stamp is not None]

        def baseline() -> None:
            for path in read_set:
                with open(path, encoding="utf-8") as handle:
                    handle.read()

        resolve_times = timed(lambda: resolve_instructions(paths, target), args.runs)
        cpu_times = timed(lambda: resolve_instructions(paths, target), args.runs, time.process_time)
        render_times = timed(lambda: render_provider_block(res), args.runs)
        base_times = timed(baseline, args.runs)
        med = statistics.median(resolve_times)
        base = statistics.median(base_times)
        print(f"resolve_instructions median: {med * 1000:.2f} ms wall ({args.runs} runs)")
        print(f"resolve_instructions median CPU: {statistics.median(cpu_times) * 1000:.2f} ms")
        print(f"render_provider_block median: {statistics.median(render_times) * 1000:.3f} ms")
        print(
            f"baseline (plain open+read of the same {len(read_set)} files) median: "
            f"{base * 1000:.2f} ms"
        )
        print(f"ratio resolve / baseline: {med / base:.1f}x")


if __name__ == "__main__":
    main()
