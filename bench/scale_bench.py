"""Whole-process cost of the documented commands at 1k / 10k / 100k facts and its growth (#14).

For each size a store is generated once (EN, ZH and mixed facts, bodies 50–1,500 characters,
written by the project's codec so the files are what the writer produces) and cached under
``--cache`` (default ``$TMPDIR/ce-scale-bench``); each run works on a fresh copy. Then, as whole
processes (CPU = user + system from ``os.wait4``, medians of ``--repeats``):

* ``context-engine hook claude-code UserPromptSubmit`` with a realistic payload (quiet), and the
  first hook after one fact changed on disk, and the first once that change has settled
  (past the 2 s racy window: the bench waits, as a person's next prompt would; only a settled
  state lets a quiet hook read nothing but the listing);
* the same quiet hook with ``CONTEXT_ENGINE_MONITOR=0``: the warm-up hooks start the store
  monitor (``context_engine/monitor``, as in use), so "hook quiet" is answered with its word
  and this row walks the stores with one ``lstat`` per file (the table's footer says whether
  a monitor was up; each size stops its monitor when done);
* ``remember`` (a new fact, an update by id, a new fact right after our own write; the first
  write, which builds the writer state, is warmed and printed apart), ``recall "<msg>"``,
  ``list --json``, ``read``
  (by reference and by id), bare ``memory``;
* ``python -c pass`` (the floor) and an SQLite FTS5 anchor process answering the same payload
  from an on-disk index (the physical reference);

and, in one long-lived process: a quiet turn of a host (``ContextEngine`` + ``run_turn``), one
change → the next turn, one change → the index current again (no recall, notes or trace),
recall p50/p95 in process, and the RSS the recall index adds (built over fact objects made
before, so the index alone); in another, one ``remember`` through the write door (CPU, its
imports done) beside its floor, the same MEMORY.md written once more atomically beside the
store (what any writer of this format pays, S4.4/S4.9); and in a third, a watched host's whole
RSS (after its imports, quiet turns, and one change; the CPU of the turn after that first
change).
Every figure is printed with its ratio to ``python -c pass`` and its growth between sizes.

    .venv/bin/python bench/scale_bench.py                          # 1k, 10k; 3 repeats
    .venv/bin/python bench/scale_bench.py --sizes 1000,10000,100000 --repeats 5
"""

from __future__ import annotations

import argparse
import compileall
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from residency import resident_share

if TYPE_CHECKING:
    from context_engine.paths import EnginePaths

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "app")]

GENERATOR_VERSION = 1
PROMPT = "why does the docker release build time out after the cache migration?"
PROMPT_ZH = "发布构建为什么在缓存迁移之后超时"
EN = [
    "release",
    "build",
    "deploy",
    "cache",
    "token",
    "parser",
    "index",
    "budget",
    "branch",
    "docker",
    "kernel",
    "socket",
    "schema",
    "migration",
    "lint",
    "format",
    "type",
    "check",
    "test",
    "fixture",
    "queue",
    "worker",
    "retry",
    "timeout",
    "config",
    "secret",
    "vault",
    "proxy",
    "gateway",
    "router",
    "handler",
    "logger",
    "metric",
    "trace",
    "span",
    "alert",
    "frontend",
    "backend",
    "database",
    "replica",
    "shard",
    "backup",
    "restore",
    "archive",
    "upload",
    "download",
    "compiler",
    "linker",
    "runtime",
    "thread",
    "mutex",
    "channel",
    "stream",
    "buffer",
    "packet",
    "latency",
    "throughput",
    "quota",
    "tenant",
    "region",
    "cluster",
]
ZH = [
    "发布",
    "构建",
    "部署",
    "缓存",
    "令牌",
    "解析",
    "索引",
    "预算",
    "分支",
    "内核",
    "套接字",
    "模式",
    "迁移",
    "格式",
    "类型",
    "检查",
    "测试",
    "队列",
    "重试",
    "超时",
    "配置",
    "密钥",
    "代理",
    "网关",
    "路由",
    "日志",
    "指标",
    "追踪",
    "告警",
    "前端",
    "后端",
    "数据库",
    "副本",
    "分片",
    "备份",
    "恢复",
    "归档",
    "上传",
    "下载",
    "编译",
    "链接",
    "运行时",
    "线程",
    "通道",
    "缓冲",
    "延迟",
    "吞吐",
    "配额",
    "租户",
    "区域",
    "集群",
]


def _text(rng: random.Random, lang: str, size: int) -> str:
    """About ``size`` characters of EN, ZH or mixed text."""
    out: list[str] = []
    length = 0
    while length < size:
        pick = lang if lang != "mixed" else rng.choice(("en", "zh"))
        word = rng.choice(EN if pick == "en" else ZH)
        sep = " " if pick == "en" or rng.random() < 0.3 else ""
        out.append(word + sep)
        length += len(word) + len(sep)
        if rng.random() < 0.06:
            out.append("。\n" if pick == "zh" else ".\n")
    return "".join(out)[:size].strip() or "empty"


def generate(store_dir: Path, count: int, seed: int = 14) -> None:
    """Write ``count`` facts (90 % project, 10 % global) in S3.1 format via the codec."""
    from context_engine.facts.codec import render_fact
    from context_engine.facts.model import Fact
    from context_engine.paths import EnginePaths

    workspace = store_dir / "ws"
    (workspace / ".git").mkdir(parents=True, exist_ok=True)
    (workspace / "AGENTS.md").write_text("Run the tests before committing.\n", "utf-8")
    paths = EnginePaths.resolve(home=store_dir / "home", workspace=workspace)
    for store in (paths.project_store, paths.global_store):
        store.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(count):
        lang = ("en", "zh", "mixed")[i % 3]
        scope = "global" if i % 10 == 0 else "project"
        kinds = ("user", "feedback") if scope == "global" else ("project", "reference")
        head = _text(rng, lang, 12).replace("\n", " ")
        name_words = head.split()[:3] or ["fact"]
        fact = Fact(
            id=f"mem-{rng.getrandbits(128):032x}",
            revision=rng.randint(1, 4),
            name="-".join(name_words).lower().strip("-.。") + f"-{i}",
            title=_text(rng, lang, 30).replace("\n", " ") if i % 4 else "",
            description=_text(rng, lang, 60).replace("\n", " "),
            type=rng.choice(kinds),
            scope=scope,
            body=_text(rng, lang, rng.randint(50, 1500)) + f" ticket{i}",
            created_at=start + timedelta(hours=i),
            updated_at=start + timedelta(hours=i, minutes=rng.randint(0, 5000)),
        )
        store = paths.global_store if scope == "global" else paths.project_store
        from context_engine.facts.store import fact_slug

        (store / f"{fact_slug(fact.name)}.md").write_bytes(render_fact(fact))


def cached_store(cache: Path, count: int) -> Path:
    """The generated store for ``count`` facts, made once and kept under ``cache``."""
    target = cache / f"v{GENERATOR_VERSION}-{count}"
    if (target / "done").exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    started = time.perf_counter()
    generate(target, count)
    (target / "done").write_text("ok")
    print(f"  generated {count:,} facts in {time.perf_counter() - started:.1f} s", flush=True)
    return target


class Child:
    """One whole process: CPU seconds (user+system), wall seconds, peak RSS (MB), stdout."""

    def __init__(self, argv: list[str], stdin: bytes = b"", env: dict[str, str] | None = None):
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
        self.stdout = proc.stdout.read()
        self.stderr = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        self.wall = time.perf_counter() - started
        self.cpu = usage.ru_utime + usage.ru_stime
        self.rss_mb = usage.ru_maxrss / 1024
        self.code = proc.returncode
        if self.code != 0:
            raise SystemExit(f"{argv[:4]} failed ({self.code}): {self.stderr.decode()[-800:]}")


FTS_BUILD = r"""
import sqlite3, sys, os
from pathlib import Path
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE VIRTUAL TABLE f USING fts5(ref, body, tokenize='trigram')")
rows = []
for store in sys.argv[2:]:
    for p in Path(store).glob("*.md"):
        if p.name != "MEMORY.md":
            rows.append((p.name, p.read_text("utf-8")))
db.executemany("INSERT INTO f VALUES (?, ?)", rows)
db.commit()
"""

FTS_QUERY = r"""
import json, re, sqlite3, sys
payload = json.loads(sys.stdin.read())
terms = [t for t in re.findall(r"\w+", payload["prompt"].lower()) if len(t) >= 3][:12]
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
q = " OR ".join('"' + t.replace('"', '') + '"' for t in terms)
rows = db.execute(
    "SELECT ref, snippet(f, 1, '', '', '…', 40) FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT 4",
    (q,),
).fetchall()
print(json.dumps({"hookSpecificOutput": {"additionalContext": "\n".join(r[1] for r in rows)}}))
"""

HOST = r"""
import json, os, resource, statistics, sys, time
from pathlib import Path
# A host scores with NumPy after its first few turns, and a large build packs its postings
# with it: loaded before the index's RSS is measured, so the row is the index alone.
import numpy  # noqa: F401
from context_engine.engine import ContextEngine
from context_engine.paths import EnginePaths
from context_engine.recall import Recaller
from context_engine.session.core import run_turn
from context_engine.facts.codec import parse_fact, render_fact
import dataclasses
from datetime import UTC, datetime  # noqa: F811

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

home, ws, prompt, prompt_zh = sys.argv[1:5]
repeats = int(sys.argv[5])
paths = EnginePaths.resolve(home=home, workspace=ws)
# As ``context-engine mcp`` and ``ContextEngine.open`` open it: store changes come from the
# kernel (recall/live.py); ``watch`` is ignored where it cannot be used.
try:
    engine = ContextEngine(paths, watch=True)
except TypeError:  # code from before watched hosts: the same bench runs on it
    engine = ContextEngine(paths)
# Every fact object made first: the row is the index alone (a saved state's lazy facts
# would otherwise be materialised inside the measurement).
facts = list(engine.active_facts())
before = rss()
recaller = Recaller(facts)
index_rss = rss() - before
queries = [prompt, prompt_zh, "kernel socket 超时 handler", "ticket42", "why is the gateway slow"]
times = []
cpus = []
for _ in range(max(20, repeats * 10)):
    for q in queries:
        c = time.process_time(); t = time.perf_counter(); recaller.recall(q, limit=4, budget=2400)
        times.append(time.perf_counter() - t); cpus.append(time.process_time() - c)
times.sort(); cpus.sort()
p50 = times[len(times) // 2]; p95 = times[int(len(times) * 0.95)]
cpu50 = cpus[len(cpus) // 2]; cpu95 = cpus[int(len(cpus) * 0.95)]
del recaller
_, base = run_turn(engine, None, prompt)
quiet = []
for _ in range(max(5, repeats * 2)):
    t = time.process_time()
    _, base = run_turn(engine, base, prompt)
    quiet.append(time.process_time() - t)
change = []
victim = sorted(Path(paths.project_store).glob("*.md"))[3]
for i in range(max(3, repeats)):
    data = victim.read_bytes()
    fact = parse_fact(data, path=victim, store_scope="project", mtime=datetime.now(UTC)).fact
    new = dataclasses.replace(fact, revision=fact.revision + 1, body=fact.body + f" host edit {i}")
    tmp = victim.with_name(".tmp-bench"); tmp.write_bytes(render_fact(new)); os.replace(tmp, victim)
    t = time.process_time()
    _, base = run_turn(engine, base, prompt)
    change.append(time.process_time() - t)
    for _ in range(2):
        _, base = run_turn(engine, base, prompt)
# The same change, timed up to a current index only (the issue's "one change -> next query":
# what the host does before it can answer; the turn above adds recall, notes and the trace).
update = []
for i in range(max(3, repeats)):
    data = victim.read_bytes()
    fact = parse_fact(data, path=victim, store_scope="project", mtime=datetime.now(UTC)).fact
    new = dataclasses.replace(fact, revision=fact.revision + 1, body=fact.body + f" update {i}")
    tmp = victim.with_name(".tmp-bench"); tmp.write_bytes(render_fact(new)); os.replace(tmp, victim)
    t = time.process_time()
    engine.recaller(engine.active_facts())
    update.append(time.process_time() - t)
    _, base = run_turn(engine, base, prompt)
print(json.dumps({"p50": p50, "p95": p95, "cpu50": cpu50, "cpu95": cpu95, "index_rss": index_rss,
                  "quiet": statistics.median(quiet), "change": statistics.median(change),
                  "update": statistics.median(update)}))
"""

# What a long-lived host holds, in a process of its own (the HOST script above also builds a
# standalone index), opened on a settled saved state: RSS after its imports (NumPy included, as
# a host loads it), after quiet turns, and after one change on disk and the turns that follow.
HOST_RSS = r"""
import dataclasses, json, os, sys, time
from datetime import UTC, datetime
from pathlib import Path
import numpy  # noqa: F401  # a host scores with it after its first few turns
from context_engine.engine import ContextEngine
from context_engine.facts.codec import parse_fact, render_fact
from context_engine.paths import EnginePaths
from context_engine.session.core import run_turn

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

home, ws, prompt = sys.argv[1:4]
paths = EnginePaths.resolve(home=home, workspace=ws)
imports = rss()
engine = ContextEngine(paths, watch=True)
_, base = run_turn(engine, None, prompt)
for _ in range(10):
    _, base = run_turn(engine, base, prompt)
quiet = rss()
victim = sorted(Path(paths.project_store).glob("*.md"))[5]
fact = parse_fact(victim.read_bytes(), path=victim, store_scope="project",
                  mtime=datetime.now(UTC)).fact
new = dataclasses.replace(fact, revision=fact.revision + 1, body=fact.body + " rss edit")
tmp = victim.with_name(".tmp-bench"); tmp.write_bytes(render_fact(new)); os.replace(tmp, victim)
t = time.process_time()
_, base = run_turn(engine, base, prompt)
first = time.process_time() - t  # the host's first change (a median of 3 above hides it)
for _ in range(2):
    _, base = run_turn(engine, base, prompt)
print(json.dumps({"imports": imports, "quiet": quiet, "change": rss(), "first": first}))
"""

# One ``remember`` in a process whose imports are done: the door a CLI call goes through, a
# fresh catalog each time (nothing cached in process), CPU time; a warm-up call first.
REMEMBER = r"""
import json, statistics, sys, time
from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.ops import Person, Save
from context_engine.paths import EnginePaths

home, ws, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
paths = EnginePaths.resolve(home=home, workspace=ws)
def remember(i):
    save = Save(name=f"in-process-{i}", title="Bench", description="bench fact",
                body=f"in process body {i} cache docker")
    t = time.process_time()
    LocalCatalog(paths).apply(save, Person())
    return time.process_time() - t
remember("warm-up")
times = [remember(i) for i in range(max(5, repeats * 3))]

# The floor of any writer of this format (S4.4, S4.9): MEMORY.md, as large as the store made
# it, written once more atomically (a temp file filled from a mapping, fsync, rename over the
# last copy, directory fsync) beside the store, never over it.
import mmap, os, tempfile
src_path = paths.project_store / "MEMORY.md"
scratch = tempfile.mkdtemp(dir=paths.state)
def rewrite(n):
    t = time.process_time()
    src = os.open(src_path, os.O_RDONLY)
    size = os.fstat(src).st_size
    mapped = mmap.mmap(src, size, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0),
                       prot=mmap.PROT_READ)
    temp = os.path.join(scratch, f"tmp-{n}")
    dst = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    view = memoryview(mapped)
    done = 0
    while done < size:
        done += os.write(dst, view[done:])
    view.release(); mapped.close()
    os.fsync(dst); os.close(dst)
    os.replace(temp, os.path.join(scratch, "MEMORY.md"))
    d = os.open(scratch, os.O_RDONLY); os.fsync(d); os.close(d)
    os.close(src)
    return time.process_time() - t
rewrite("warm-up")
floor = [rewrite(i) for i in range(len(times))]
os.unlink(os.path.join(scratch, "MEMORY.md")); os.rmdir(scratch)
print(json.dumps({"remember": statistics.median(times), "floor": statistics.median(floor),
                  "memory_md_mb": os.path.getsize(src_path) / 1e6}))
"""


def state_delta_kb(paths: EnginePaths) -> float:
    """Size of the saved recall state's delta file (KB; 0 when there is none)."""
    from context_engine.recall.persist import recall_cache_path
    from context_engine.recall.state import delta_path

    try:
        return delta_path(recall_cache_path(paths)).stat().st_size / 1024
    except OSError:
        return 0.0


def median(values: list[float]) -> float:
    """The median."""
    return statistics.median(values) if values else float("nan")


def run_size(
    count: int, cache: Path, work: Path, repeats: int, host_only: bool = False
) -> dict[str, float]:
    """Every figure at one size, on a fresh copy of the cached store (``host_only``: only the
    in-process host figures: index RSS, recall p50/p95, quiet turn, change → index)."""
    source = cached_store(cache, count)
    base = work / f"run-{count}"
    if base.exists():
        shutil.rmtree(base)
    started = time.perf_counter()
    shutil.copytree(source, base, symlinks=True)
    print(f"  copied {count:,} facts in {time.perf_counter() - started:.1f} s", flush=True)
    home, ws = base / "home", base / "ws"
    from context_engine.paths import EnginePaths

    paths = EnginePaths.resolve(home=home, workspace=ws)
    # The project store's directory is named after the workspace path: follow the copy.
    generated = EnginePaths.resolve(home=source / "home", workspace=source / "ws")
    (home / "projects" / generated.slug).rename(paths.project_dir)
    # The monitor's idle time outlasts the slowest gap between two hooks of a size (the FTS
    # anchor's build at 100k); a bench stopped half-way leaves it for 30 minutes at most.
    env = dict(os.environ, HOME=str(base), CONTEXT_ENGINE_HOOK_RELAY="0", PYTHONHASHSEED="0",
               CONTEXT_ENGINE_MONITOR_IDLE="1800")
    env.pop("REASONIX_HOME", None)
    env.pop("REASONIX_STATE_HOME", None)
    exe = str(Path(sys.executable).parent / "context-engine")
    ce = [exe, "--home", str(home), "--workspace", str(ws)]
    py = sys.executable
    payload = json.dumps(
        {
            "session_id": "bench",
            "transcript_path": str(base / "t.jsonl"),
            "cwd": str(ws),
            "hook_event_name": "UserPromptSubmit",
            "prompt": PROMPT,
        }
    ).encode()
    hook = [exe, "--home", str(home), "hook", "claude-code", "UserPromptSubmit"]

    def settle() -> None:
        # Past git's racy window (2 s): only then may a saved state vouch for what was just
        # written. A person's prompts are seconds apart; the bench waits instead.
        time.sleep(2.2)

    def build_inline() -> None:
        # Warm up: the first hook builds whatever caches the code keeps; once the copied files
        # have settled, one more saves them as settled. Without a budget the hook builds them
        # inline, as the detached builder a documented first hook hands them to would
        # (bench/first_use_bench.py times that hand-off): the timed rows are steady-state turns.
        inline = dict(env, CONTEXT_ENGINE_HOOK_BUDGET="0")
        for _ in range(2):
            Child(hook, payload, inline)

    if host_only:
        # The full run's warm-up without its first write: otherwise the host would open on the
        # cache's states (another code's, after any change to the recall code) or on files
        # still inside the racy window, and time their rebuild instead of its turns.
        build_inline()
        settle()
        Child(hook, payload, env)
        host = json.loads(Child(
            [py, "-c", HOST, str(home), str(ws), PROMPT, PROMPT_ZH, str(repeats)], env=env
        ).stdout)
        shutil.rmtree(base, ignore_errors=True)
        return {"host quiet turn": host["quiet"], "host change->turn": host["change"],
                "host change->index": host["update"], "recall p50 (in proc)": host["p50"],
                "recall p95 (in proc)": host["p95"], "recall p50 CPU (in proc)": host["cpu50"],
                "recall p95 CPU (in proc)": host["cpu95"], "recall index MB": host["index_rss"]}
    figures: dict[str, list[float]] = {}
    delta_kb: list[float] = []  # the saved recall state's delta after each change's hook

    def add(key: str, child: Child) -> Child:
        figures.setdefault(key, []).append(child.cpu)
        return child

    build_inline()
    # A store's first write builds its writer state once (facts/write_state.py), as the first
    # hook builds the derived index: a copied store's first ``remember`` pays for that, so it is
    # warmed here too and timed on its own (not a steady-state figure).
    first = Child([*ce, "remember", "--name", "scale-bench-warm-up", "--body", "warm-up"], env=env)
    print(f"  first write (writer state built): {first.cpu:.2f} s CPU", flush=True)
    settle()
    Child(hook, payload, env)
    # The warm-up hooks started the store monitor (documented behaviour): "hook quiet" runs
    # with it; "hook quiet, no monitor" walks the stores (CONTEXT_ENGINE_MONITOR=0).
    from context_engine.monitor import client as monitor_client

    no_monitor = dict(env, CONTEXT_ENGINE_MONITOR="0")
    Child(hook, payload, env)  # the first hook the monitor answers records its token
    up = monitor_client.status(str(paths.state))
    MONITORS[count] = _monitor_note(up)
    print(f"  store monitor: {MONITORS[count]}", flush=True)
    projects = sorted(paths.project_store.glob("*.md"))
    victims = [p for p in projects if p.name != "MEMORY.md"][: repeats + 2]
    listing = json.loads(Child([*ce, "--json", "list"], env=env).stdout)
    some = listing["facts"][len(listing["facts"]) // 2]
    fts = base / "fts.sqlite"
    Child([py, "-c", FTS_BUILD, str(fts), str(paths.project_store), str(paths.global_store)])
    from context_engine.facts.codec import parse_fact, render_fact

    for i in range(repeats):
        add("python -c pass", Child([py, "-c", "pass"], env=env))
        add("fts5 anchor", Child([py, "-c", FTS_QUERY, str(fts)], payload, env))
        out = add("hook quiet", Child(hook, payload, env))
        add("hook quiet, no monitor", Child(hook, payload, no_monitor))
        if i == 0 and b"memory-recall" not in out.stdout:
            print("  note: the hook added no recall block", flush=True)
        add("recall", Child([*ce, "recall", PROMPT], env=env))
        indexes = sorted(home.glob("**/context-center/index/*.sqlite"))
        RESIDENT.setdefault(count, []).append(min(
            (share for share in map(resident_share, indexes) if share is not None), default=-1.0
        ))
        add("list --json", Child([*ce, "--json", "list"], env=env))
        add("read", Child([*ce, "read", some["reference"]], env=env))
        add("read by id", Child([*ce, "read", some["id"]], env=env))
        add("memory", Child([*ce, "memory"], env=env))
        # One fact changed on disk by another program (atomic replace, new revision).
        victim = victims[i]
        fact = parse_fact(
            victim.read_bytes(), path=victim, store_scope="project", mtime=datetime.now(UTC)
        ).fact
        import dataclasses

        new = dataclasses.replace(fact, revision=fact.revision + 1, body=fact.body + " edited")
        tmp = victim.with_name(".tmp-scale")
        tmp.write_bytes(render_fact(new))
        os.replace(tmp, victim)
        add("hook after change", Child(hook, payload, env))
        delta_kb.append(state_delta_kb(paths))
        settle()
        add("hook after change, settled", Child(hook, payload, env))
        add(
            "remember new",
            Child(
                [
                    *ce,
                    "remember",
                    "--name",
                    f"scale-bench-new-{i}",
                    "--title",
                    "Bench",
                    "--description",
                    "bench fact",
                    "--body",
                    f"bench body {i} cache docker",
                ],
                env=env,
            ),
        )
        add(
            "remember by id",
            Child(
                [*ce, "remember", "--id", some["id"], "--body", f"updated body {i} docker"],
                env=env,
            ),
        )
        # A new fact again, the last change being our own write: no other program's change
        # to list first (the row above follows one).
        add(
            "remember new, quiet store",
            Child(
                [*ce, "remember", "--name", f"scale-bench-quiet-{i}", "--body", f"quiet {i}"],
                env=env,
            ),
        )
        settle()
        Child(hook, payload, env)  # the state saved again, settled: the next quiet turn
    host = json.loads(
        Child([py, "-c", HOST, str(home), str(ws), PROMPT, PROMPT_ZH, str(repeats)], env=env).stdout
    )
    in_process = json.loads(
        Child([py, "-c", REMEMBER, str(home), str(ws), str(repeats)], env=env).stdout
    )
    settle()
    Child(hook, payload, env)  # a settled saved state again: the host below opens on it
    held = json.loads(Child([py, "-c", HOST_RSS, str(home), str(ws), PROMPT], env=env).stdout)
    result = {key: median(values) for key, values in figures.items()}
    result["remember (in proc)"] = in_process["remember"]
    result["MEMORY.md rewrite floor (in proc)"] = in_process["floor"]
    result["MEMORY.md MB"] = in_process["memory_md_mb"]
    result["host quiet turn"] = host["quiet"]
    result["host change->turn"] = host["change"]
    result["host change->index"] = host["update"]
    result["recall p50 (in proc)"] = host["p50"]
    result["recall p95 (in proc)"] = host["p95"]
    result["recall p50 CPU (in proc)"] = host["cpu50"]
    result["recall p95 CPU (in proc)"] = host["cpu95"]
    result["recall index MB"] = host["index_rss"]
    result["host RSS MB: imports"] = held["imports"]
    result["host RSS MB: quiet turns"] = held["quiet"]
    result["host RSS MB: after a change"] = held["change"]
    if "first" in held:
        result["host first change->turn"] = held["first"]
    result["recall delta KB (largest)"] = max(delta_kb, default=0.0)
    end = monitor_client.status(str(paths.state))
    if (end or {}).get("pid") != (up or {}).get("pid"):  # it exited or was replaced meanwhile
        MONITORS[count] += f"; at the end: {_monitor_note(end)}"
    monitor_client.stop(str(paths.state))  # leave no monitor behind
    shutil.rmtree(base, ignore_errors=True)
    return result


MONITORS: dict[int, str] = {}
# Per size, before each timed ``list --json``: the least-cached derived index's resident share
# (``residency.py``; -1: unknown). A cold index makes that figure ~5× slower.
RESIDENT: dict[int, list[float]] = {}


def _monitor_note(up: dict[str, object] | None) -> str:
    """Whether a store monitor answered, and its resident size."""
    if up is None:
        return "not running (hook quiet walked the stores)"
    pid = up.get("pid")
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            kb = next(int(line.split()[1]) for line in handle if line.startswith("VmRSS"))
    except (OSError, StopIteration, ValueError):
        return f"up (pid {pid})"
    return f"up (pid {pid}, RSS {kb / 1024:.1f} MB)"


PROCESS_KEYS = (
    "python -c pass",
    "fts5 anchor",
    "hook quiet",
    "hook quiet, no monitor",
    "hook after change",
    "hook after change, settled",
    "remember new",
    "remember by id",
    "remember new, quiet store",
    "recall",
    "list --json",
    "read",
    "read by id",
    "memory",
)
HOST_KEYS = (
    "host quiet turn",
    "host change->turn",
    "host change->index",
    "recall p50 (in proc)",
    "recall p95 (in proc)",
    "recall p50 CPU (in proc)",
    "recall p95 CPU (in proc)",
    "remember (in proc)",
    "MEMORY.md rewrite floor (in proc)",
    "host first change->turn",
)


MEMORY_KEYS = (
    "recall index MB",
    "host RSS MB: imports",
    "host RSS MB: quiet turns",
    "host RSS MB: after a change",
    "recall delta KB (largest)",  # the saved state's delta after each change's hook
    "MEMORY.md MB",  # the project store's, after the in-process writes
)


def report(sizes: list[int], results: dict[int, dict[str, float]]) -> None:
    """Print one table: CPU ms per size, ratio to ``python -c pass``, growth between sizes."""
    head = "".join(f"{f'{n:,}':>22}" for n in sizes)
    growth = "".join(f"{f'{a // 1000}k→{b // 1000}k':>10}" for a, b in itertools.pairwise(sizes))
    print(f"\n{'whole process, CPU ms (× python -c pass)':38}{head}{growth}")
    for key in PROCESS_KEYS:
        if not all(key in results[n] for n in sizes):
            continue
        cells = ""
        for n in sizes:
            r = results[n]
            cells += f"{r[key] * 1000:13.0f} ({r[key] / r['python -c pass']:5.1f}×)"
        grows = "".join(
            f"{results[b][key] / results[a][key]:9.2f}×" for a, b in itertools.pairwise(sizes)
        )
        print(f"{key:38}{cells}{grows}")
    print(f"\n{'long-lived host / in process, ms':38}{head}{growth}")
    for key in HOST_KEYS:
        if not all(key in results[n] for n in sizes):
            continue
        cells = "".join(f"{results[n][key] * 1000:22.2f}" for n in sizes)
        grows = "".join(
            f"{results[b][key] / max(results[a][key], 1e-9):9.2f}×"
            for a, b in itertools.pairwise(sizes)
        )
        print(f"{key:38}{cells}{grows}")
    # The index alone (Recaller over facts already made), then a host process's whole RSS.
    for key in MEMORY_KEYS:
        if not all(key in results[n] for n in sizes):
            continue
        cells = "".join(f"{results[n][key]:22.1f}" for n in sizes)
        grows = "".join(
            f"{results[b][key] / max(results[a][key], 1e-9):9.2f}×"
            for a, b in itertools.pairwise(sizes)
        )
        print(f"{key:38}{cells}{grows}")


def main() -> None:
    """Parse options, generate or reuse the stores, measure every size, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated fact counts")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "ce-scale-bench"
    )
    parser.add_argument(
        "--host-only", action="store_true",
        help="only the in-process figures (index RSS, recall p50/p95, host turns): minutes less",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    compileall.compile_dir(str(ROOT / "app"), quiet=1)
    args.cache.mkdir(parents=True, exist_ok=True)
    results: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="ce-scale-") as work:
        for count in sizes:
            print(f"{count:,} facts:", flush=True)
            results[count] = run_size(count, args.cache, Path(work), args.repeats, args.host_only)
    print(f"\nmedians of {args.repeats} runs; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    for count, note in MONITORS.items():
        print(f"store monitor at {count:,}: {note}")
    for count, shares in RESIDENT.items():
        cached = ", ".join("unknown" if s < 0 else f"{s * 100:.0f} %" for s in shares)
        print(f"derived index in page cache before each list --json at {count:,}: {cached}")
    report(sizes, results)


if __name__ == "__main__":
    main()
