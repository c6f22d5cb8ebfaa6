"""Recall benchmark: incremental sparse index vs rank-bm25 BM25Okapi rebuilt per change.

Generated stores of English, Chinese and mixed facts (bodies 50–1,500 characters). For each
size: index build time, per-turn recall p50/p95 over 200 queries, cost of reflecting one
changed fact, and resident memory of the index — each beside rank-bm25 in the same run, with
ratios. Default sizes 1,000 and 10,000 (< 60 s); ``--sizes 100000`` for the large store.

    .venv/bin/python bench/recall_bench.py [--sizes 1000 10000 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
import tracemalloc
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))

import numpy as np
from context_engine.facts.model import Fact
from context_engine.recall import Recaller
from context_engine.recall.tokenize import document_text, tokens
from rank_bm25 import BM25Okapi

NOW = datetime(2026, 6, 1, tzinfo=UTC)
STOP = [
    "the",
    "a",
    "of",
    "to",
    "in",
    "and",
    "is",
    "for",
    "on",
    "with",
    "this",
    "that",
    "be",
    "it",
    "as",
    "by",
    "from",
    "at",
    "or",
]
SYLLABLES = [
    "ka",
    "ri",
    "to",
    "mo",
    "na",
    "shi",
    "ve",
    "lo",
    "pa",
    "ten",
    "dor",
    "ix",
    "ul",
    "bra",
    "cen",
    "dit",
    "fra",
    "gon",
    "hul",
    "jor",
]
HAN = [chr(c) for c in range(0x4E00, 0x4E00 + 2600)]


def make_vocab(rng: random.Random) -> tuple[list[str], list[str]]:
    """English-like words and Chinese words (2–4 characters)."""
    english = sorted(
        {"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(6000)}
    )
    chinese = sorted(
        {"".join(rng.choice(HAN) for _ in range(rng.randint(2, 4))) for _ in range(6000)}
    )
    return english, chinese


def zipf_pick(rng: random.Random, words: list[str]) -> str:
    """Zipf-ish draw: a few words are common, most are rare."""
    return words[min(int(rng.paretovariate(1.1)) - 1, len(words) - 1)]


def body_text(rng: random.Random, kind: str, english: list[str], chinese: list[str]) -> str:
    """A body of 50–1,500 characters in the given language mix."""
    target = rng.randint(50, 1500)
    parts: list[str] = []
    size = 0
    while size < target:
        use_cn = kind == "zh" or (kind == "mixed" and rng.random() < 0.5)
        if use_cn:
            word = zipf_pick(rng, chinese)
        else:
            word = rng.choice(STOP) if rng.random() < 0.3 else zipf_pick(rng, english)
        parts.append(word)
        size += len(word) + (0 if use_cn else 1)
    sep = "" if kind == "zh" else " "
    return sep.join(parts)[:target]


def make_facts(n: int, seed: int = 7) -> list[Fact]:
    """``n`` facts: a third English, Chinese and mixed; each with a distinctive identifier."""
    rng = random.Random(seed)
    english, chinese = make_vocab(rng)
    kinds = ("en", "zh", "mixed")
    out = []
    for i in range(n):
        kind = kinds[i % 3]
        body = body_text(rng, kind, english, chinese) + f" Svc{i}Handler ticket #{10000 + i}."
        stamp = NOW - timedelta(days=rng.randint(0, 400))
        out.append(
            Fact(
                id=f"mem_{i:07d}",
                revision=1,
                name=f"fact-{i}",
                # Real titles rarely collide; 1% reuse an earlier title to exercise overrides.
                title=(
                    out[rng.randrange(i)].title
                    if i and rng.random() < 0.01
                    else " ".join(rng.choice(english) for _ in range(3))
                ),
                description=" ".join(zipf_pick(rng, english) for _ in range(6)),
                type=rng.choice(("project", "reference", "user", "feedback")),
                scope="project" if rng.random() < 0.7 else "global",
                body=body,
                created_at=stamp,
                updated_at=stamp,
            )
        )
    return out


def make_queries(facts: list[Fact], count: int, seed: int = 11) -> list[str]:
    """Distinctive, plain English, Chinese and mixed queries drawn from the store."""
    rng = random.Random(seed)
    queries = []
    for i in range(count):
        fact = rng.choice(facts)
        words = fact.body.split()
        mode = i % 4
        if mode == 0:
            queries.append(
                f"fix Svc{int(fact.id[4:])}Handler panic from #{10000 + int(fact.id[4:])}"
            )
        elif mode == 1:
            if len(words) < 5:  # a Chinese body has no spaces: take short pieces instead
                words = [
                    fact.body[k : k + rng.randint(2, 6)]
                    for k in rng.sample(range(len(fact.body)), 5)
                ]
            queries.append(" ".join(rng.sample(words, 5)))
        elif mode == 2:
            start = rng.randint(0, max(0, len(fact.body) - 12))
            queries.append("如何优化" + fact.body[start : start + 10])
        else:
            queries.append(f"{fact.title} {fact.body[:8]} please check")
    return queries


# The machine is shared (2 cores, several busy processes): wall-clock figures swing 2-5x with
# load, so every figure is this process's CPU time; one wall-clock p50 is printed beside it.
CLOCK = time.process_time


def timed(fn, *args):  # type: ignore[no-untyped-def]
    """(result, CPU seconds)."""
    start = CLOCK()
    result = fn(*args)
    return result, CLOCK() - start


def wall_p50(fn, items) -> float:  # type: ignore[no-untyped-def]
    """Wall-clock p50 in milliseconds of ``fn`` over ``items``."""
    out = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        out.append(time.perf_counter() - start)
    return pct(out, 50)


def pct(values: list[float], q: float) -> float:
    """Percentile in milliseconds."""
    return float(np.percentile(np.array(values) * 1000.0, q))


def traced_bytes(build):  # type: ignore[no-untyped-def]
    """Bytes still allocated after ``build()`` (the structure it returns stays alive)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    keep = build()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del keep
    return after - before


class Baseline:
    """rank-bm25 BM25Okapi over the same tokens; no incremental update, so rebuilt per change."""

    def __init__(self, facts: list[Fact]) -> None:
        self.corpus = [tokens(document_text(f)) for f in facts]
        self.model = BM25Okapi(self.corpus)

    def query(self, text: str) -> list[int]:
        terms = list(dict.fromkeys(tokens(text)))
        scores = self.model.get_scores(terms)
        return np.argsort(-scores)[:8].tolist()

    def change(self, i: int, fact: Fact) -> None:
        self.corpus[i] = tokens(document_text(fact))
        del self.model  # free the old model first: at 100,000 facts each one holds GBs
        self.model = BM25Okapi(self.corpus)


class Bm25sAlt:
    """bm25s ``lucene``: S8.6's idf; scores × (k1 + 1) match ours to float32. Rebuilt per change."""

    def __init__(self, facts: list[Fact]) -> None:
        import bm25s

        self.bm25s = bm25s
        self.corpus = [tokens(document_text(f)) for f in facts]
        self._build()

    def _build(self) -> None:
        self.model = self.bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        self.model.index(self.corpus, show_progress=False)

    def query(self, text: str) -> list[int]:
        scores = self.model.get_scores(list(dict.fromkeys(tokens(text))))
        return np.argsort(-scores)[:8].tolist()

    def change(self, i: int, fact: Fact) -> None:
        self.corpus[i] = tokens(document_text(fact))
        self._build()


class Fts5Alt:
    """SQLite FTS5 over pre-tokenized text (its own bm25 idf); delete + insert per change."""

    def __init__(self, facts: list[Fact]) -> None:
        import sqlite3

        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "create virtual table docs using fts5(body, "
            "tokenize = \"unicode61 remove_diacritics 0 tokenchars '_'\")"
        )
        self.db.executemany(
            "insert into docs(rowid, body) values (?, ?)",
            ((i, " ".join(tokens(document_text(f)))) for i, f in enumerate(facts)),
        )
        self.db.commit()

    def query(self, text: str) -> list[int]:
        terms = " OR ".join(f'"{t}"' for t in dict.fromkeys(tokens(text)))
        rows = self.db.execute(
            "select rowid from docs where docs match ? order by bm25(docs) limit 8", (terms,)
        )
        return [r[0] for r in rows]

    def change(self, i: int, fact: Fact) -> None:
        self.db.execute("delete from docs where rowid = ?", (i,))
        self.db.execute(
            "insert into docs(rowid, body) values (?, ?)",
            (i, " ".join(tokens(document_text(fact)))),
        )
        self.db.commit()

    def nbytes(self) -> int:
        pages = self.db.execute("pragma page_count").fetchone()[0]
        return int(pages * self.db.execute("pragma page_size").fetchone()[0])


def run_alternatives(n: int, n_queries: int) -> None:
    """bm25s and FTS5 on the same store and queries (speed and memory only)."""
    facts = make_facts(n)
    queries = make_queries(facts, n_queries)[:50]
    print(f"   alternatives at {n:,} facts (50 queries):")
    for name, cls in (("bm25s lucene", Bm25sAlt), ("sqlite fts5", Fts5Alt)):
        try:
            alt, build = timed(cls, facts)
        except ImportError:
            print(f"   {name:14} not installed")
            continue
        lat = [timed(alt.query, q)[1] for q in queries]
        change = statistics.median(timed(alt.change, i, facts[(i * 7) % n])[1] for i in range(3))
        if isinstance(alt, Fts5Alt):
            mem = alt.nbytes() / 1e6
        else:
            del alt
            mem = traced_bytes(lambda cls=cls: cls(facts)) / 1e6
        print(
            f"   {name:14} build {build:.3f} s; p50 {pct(lat, 50):.3f} ms; "
            f"p95 {pct(lat, 95):.3f} ms;"
            f" one change {change * 1000:.1f} ms; memory {mem:.1f} MB"
        )


def run_size(n: int, n_queries: int, repeats: int) -> dict[str, float]:
    """All figures for one store size."""
    facts = make_facts(n)
    queries = make_queries(facts, n_queries)
    builds = [timed(Recaller, facts) for _ in range(repeats)]
    ours_build = statistics.median(seconds for _, seconds in builds)
    recaller = builds[-1][0]
    del builds

    # Ours first, with no baseline alive: millions of rank-bm25 dicts would make every
    # cyclic-GC pass during our timings pay for the baseline's objects.
    recall = partial(recaller.recall, now=NOW)
    for q in queries[:10]:  # warm-up
        recall(q)
    ours_lat = [timed(recall, q)[1] for q in queries]
    ours_wall = wall_p50(recall, queries)
    pasted = [facts[i].body[:1000] for i in range(0, n, max(1, n // 20))]  # long pasted turns
    pasted_lat = [timed(recall, q)[1] for q in pasted]
    hits = sum(1 for q in queries if recall(q).trace.hits)
    rng = random.Random(3)
    ours_change = []
    for k in range(50):
        i = rng.randrange(n)
        old = facts[i]
        new = replace(old, revision=old.revision + 1, body=old.body[::-1] + f" Changed{k}X")
        facts[i] = new
        ours_change.append(timed(recaller.upsert, new)[1])
    assert recaller.stats.full_builds == 1
    sync_cost = timed(recaller.sync, facts)[1]  # the O(N) snapshot diff with nothing new
    del recaller, recall
    gc.collect()

    baseline, base_build = timed(Baseline, facts)
    base_queries = queries if n <= 1_000 else queries[:30]
    base_lat = [timed(baseline.query, q)[1] for q in base_queries]
    base_change = [timed(baseline.change, i, facts[i])[1] for i in rng.sample(range(n), 3)]
    del baseline
    gc.collect()

    ours_mem = traced_bytes(lambda: Recaller(facts))
    base_mem = traced_bytes(lambda: Baseline(facts)) if n <= 10_000 else float("nan")
    return {
        "n": n,
        "build_ours_s": ours_build,
        "build_base_s": base_build,
        "p50_ours_ms": pct(ours_lat, 50),
        "p95_ours_ms": pct(ours_lat, 95),
        "p50_base_ms": pct(base_lat, 50),
        "p95_base_ms": pct(base_lat, 95),
        "change_ours_ms": statistics.median(ours_change) * 1000,
        "change_ours_p95_ms": pct(ours_change, 95),
        "sync_scan_ms": sync_cost * 1000,
        "change_base_ms": statistics.median(base_change) * 1000,
        "mem_ours_mb": ours_mem / 1e6,
        "mem_base_mb": base_mem / 1e6,
        "pasted_p50_ms": pct(pasted_lat, 50),
        "p50_ours_wall_ms": ours_wall,
        "queries_with_hits": hits,
        "queries": len(queries),
    }


def report(r: dict[str, float]) -> None:
    """Print one size's figures with ratios (baseline / ours)."""
    n = int(r["n"])
    print(
        f"\n== {n:,} facts  ({int(r['queries_with_hits'])}/{int(r['queries'])} "
        "queries injected a block)"
    )
    rows = [
        ("index build (s)", r["build_ours_s"], r["build_base_s"]),
        ("recall p50 (ms)", r["p50_ours_ms"], r["p50_base_ms"]),
        ("recall p95 (ms)", r["p95_ours_ms"], r["p95_base_ms"]),
        ("one changed fact (ms)", r["change_ours_ms"], r["change_base_ms"]),
        ("index memory (MB)", r["mem_ours_mb"], r["mem_base_mb"]),
    ]
    print(f"{'':24}{'ours':>12}{'rank-bm25':>12}{'ratio':>10}")
    for label, ours, base in rows:
        ratio = base / ours if ours and base == base else float("nan")
        print(f"{label:24}{ours:12.3f}{base:12.3f}{ratio:9.1f}x")
    print(
        f"{'':24}one change p95 {r['change_ours_p95_ms']:.3f} ms; "
        f"snapshot diff scan with no change {r['sync_scan_ms']:.1f} ms"
    )
    print(f"{'':24}pasted 1,000-character turns: recall p50 {r['pasted_p50_ms']:.2f} ms")
    print(f"{'':24}recall p50 by wall clock (load-dependent): {r['p50_ours_wall_ms']:.3f} ms")


def main() -> None:
    """Parse flags and run every size."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--alternatives", action="store_true", help="also time bm25s and SQLite FTS5 (≤ 10,000)"
    )
    args = parser.parse_args()
    print("recall bench: ours = incremental sparse index (exact S8.6 BM25 + gate + block);")
    print("rank-bm25 = BM25Okapi.get_scores + top-8 (different idf; speed baseline only),")
    print("rebuilt from cached tokens per change. ratio = rank-bm25 / ours. Times are CPU time.")
    for n in args.sizes:
        report(run_size(n, args.queries, args.repeats if n <= 10_000 else 1))
        if args.alternatives and n <= 10_000:
            run_alternatives(n, args.queries)


if __name__ == "__main__":
    main()
