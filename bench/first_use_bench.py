"""First use of a store with no derived state: the documented hook, killed as an agent kills it.

With no usable derived index or recall state (a fresh install, an upgrade that changed their
code tags, a deleted or damaged index), the first hooks of a large store have to build both.
The agents kill a hook after 30 s (Claude Code, Codex; Gemini's 30000 ms). This bench copies a
generated store (``scale_bench``'s cache; never modified), removes every derived file, then runs
``context-engine hook claude-code UserPromptSubmit`` ``--hooks`` times in a row, each killed at
``--timeout`` seconds (SIGTERM, as the agents do), and prints per hook its wall and CPU time
and what it answered: ``recall`` (a ``<memory-recall>`` block), ``preparing`` (the explicit
note that memory recall is being prepared), ``empty`` or ``killed``. With ``--wait`` it then
asks once every ``--every`` seconds until a hook answers with recall, and prints how long after
the first hook that was (what a person waits for memory on a store that large).

    .venv/bin/python bench/first_use_bench.py --size 100000 --hooks 3 --wait 900
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_bench import PROMPT, cached_store


class Hook:
    """One documented hook process, killed at ``timeout`` s: wall, CPU, what it answered."""

    def __init__(self, argv: list[str], payload: bytes, env: dict[str, str], timeout: float):
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        try:
            out, err = proc.communicate(payload, timeout=timeout)
            killed = False
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate()
            killed = True
        # The process is reaped by ``communicate``: its CPU comes from the children's usage.
        self.wall = time.perf_counter() - started
        self.stdout, self.stderr = out, err
        if killed:
            self.outcome = "killed"
        elif b"<memory-recall>" in out:
            self.outcome = "recall"
        elif b"being prepared" in out:
            self.outcome = "preparing"
        else:
            self.outcome = "empty"


def _children_cpu() -> float:
    """CPU seconds of every reaped child so far (a hook's is the difference around it)."""
    own = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime


def prepare(size: int, cache: Path, work: Path, store: Path | None) -> tuple[Path, Path]:
    """A copy of the cached store (or ``store``, a copy made earlier) with no derived file:
    (home, workspace)."""
    from context_engine.paths import EnginePaths

    if store is not None:
        base = store
    else:
        source = cached_store(cache, size)
        base = work / f"first-{size}"
        started = time.perf_counter()
        shutil.copytree(source, base, symlinks=True)
        print(f"  copied {size:,} facts in {time.perf_counter() - started:.1f} s", flush=True)
        generated = EnginePaths.resolve(home=source / "home", workspace=source / "ws")
        moved = EnginePaths.resolve(home=base / "home", workspace=base / "ws")
        (base / "home" / "projects" / generated.slug).rename(moved.project_dir)
    home, ws = base / "home", base / "ws"
    paths = EnginePaths.resolve(home=home, workspace=ws)
    for derived in (paths.workspace_data, paths.global_data):
        shutil.rmtree(derived, ignore_errors=True)
    return home, ws


def main() -> None:
    """Copy, run the killed hooks, wait for recall, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--hooks", type=int, default=3, help="hooks in a row, each killed")
    parser.add_argument("--timeout", type=float, default=30.0, help="the agents' hook timeout")
    parser.add_argument("--wait", type=float, default=0.0, help="then wait this long for recall")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between those hooks")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "ce-scale-bench"
    )
    parser.add_argument("--work", type=Path, default=None, help="where the copy goes")
    parser.add_argument(
        "--store", type=Path, default=None,
        help="a copy made earlier (its home/ and ws/; derived files are removed, facts kept)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ce-first-", dir=args.work))
    try:
        run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, work: Path) -> None:
    """The measurement on a copy under ``work``."""
    from context_engine.monitor import client as monitor_client

    print(f"{args.size:,} facts, no derived state:", flush=True)
    home, ws = prepare(args.size, args.cache, work, args.store)
    env = dict(os.environ, HOME=str(home.parent), CONTEXT_ENGINE_HOOK_RELAY="0", PYTHONHASHSEED="0")
    env.pop("REASONIX_HOME", None)
    env.pop("REASONIX_STATE_HOME", None)
    exe = str(Path(sys.executable).parent / "context-engine")
    argv = [exe, "--home", str(home), "hook", "claude-code", "UserPromptSubmit"]
    payload = json.dumps(
        {"session_id": "first-use", "transcript_path": str(work / "t.jsonl"), "cwd": str(ws),
         "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}
    ).encode()
    first = time.perf_counter()
    try:
        for n in range(1, args.hooks + 1):
            before = _children_cpu()
            hook = Hook(argv, payload, env, args.timeout)
            cpu = _children_cpu() - before
            print(f"  hook {n}: {hook.wall:6.1f} s wall {cpu:6.1f} s CPU  {hook.outcome}",
                  flush=True)
        if args.wait > 0:
            deadline = first + args.wait
            asked = args.hooks
            while time.perf_counter() < deadline:
                time.sleep(args.every)
                before = _children_cpu()
                hook = Hook(argv, payload, env, args.timeout)
                cpu = _children_cpu() - before
                asked += 1
                if hook.outcome == "recall":
                    since = time.perf_counter() - first
                    print(f"  recall available {since:.0f} s after the first hook (hook {asked}:"
                          f" {hook.wall:.2f} s wall, {cpu:.2f} s CPU)", flush=True)
                    break
            else:
                print(f"  no recall within {args.wait:.0f} s ({asked} hooks)", flush=True)
    finally:
        monitor_client.stop(str(home))
    print(f"  {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
