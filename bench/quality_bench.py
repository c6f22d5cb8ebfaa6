"""Recall quality on the judged quality set: ours beside rank-bm25 and bm25s on the same pool.

The set (tests/engine/data/quality) holds a few hundred facts written like real agent
memories (English and Chinese, every type and scope, ages from days to years) and judged user
turns: specific ones with the facts that answer them, and generic and weak ones that must
inject nothing. Printed per split (dev, held out) and per language:

* success@4 — specific turns with an answering fact among the injected (at most 4);
* MRR — mean reciprocal rank of the first answering fact (0 when none);
* precision — share of injected facts that answer the turn;
* false injection — share of generic/weak turns that inject anything (generic and weak apart).

Every system sees the same pool (S8.3: global user/feedback facts are in the prefix, not
recalled) and the same tokens (S8.4 with inflection folding). rank-bm25 and bm25s inject their
plain top 4; "rank-bm25 + threshold" keeps hits scoring at least a fixed threshold chosen on
the dev split (best success@4 + precision − false injection), then applied to both splits.

    .venv/bin/python bench/quality_bench.py [--misses] [--ablate]

``--ablate`` re-runs ours with one precision or recall step switched off at a time (the
figures in docs/decisions.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "app"), str(ROOT / "tests")]

from context_engine.facts.model import Fact  # noqa: E402
from context_engine.recall import Recaller  # noqa: E402
from context_engine.recall.pool import POOL  # noqa: E402
from context_engine.recall.tokenize import document_text, tokens  # noqa: E402
from support.quality import NOW, Scores, Turn, evaluate, load_facts, load_turns  # noqa: E402

System = Callable[[str], Sequence[str]]


def ours(recaller: Recaller) -> System:
    """The engine's recall (S8), top 4 within 2,400 characters."""
    return lambda text: [h.name for h in recaller.recall(text, now=NOW).trace.hits]


def rank_bm25_scores(pool: list[Fact]) -> Callable[[str], list[tuple[float, str]]]:
    """rank-bm25 BM25Okapi scores, best first, zero scores left out."""
    from rank_bm25 import BM25Okapi

    model = BM25Okapi([tokens(document_text(f)) for f in pool])

    def run(text: str) -> list[tuple[float, str]]:
        query = list(dict.fromkeys(tokens(text)))
        if not query:
            return []
        scores = model.get_scores(query)
        ranked = sorted(
            ((float(s), f.name) for s, f in zip(scores, pool, strict=True)), key=lambda p: -p[0]
        )
        return [p for p in ranked if p[0] > 0]

    return run


def bm25s_system(pool: list[Fact]) -> System | None:
    """bm25s (Lucene idf) plain top 4, or None when bm25s is not installed."""
    try:
        import bm25s
    except ImportError:
        return None
    corpus = [tokens(document_text(f)) for f in pool]
    vocab: dict[str, int] = {}
    for doc in corpus:
        for t in doc:
            vocab.setdefault(t, len(vocab))
    retriever = bm25s.BM25(method="lucene")
    retriever.index(
        bm25s.tokenization.Tokenized(ids=[[vocab[t] for t in doc] for doc in corpus], vocab=vocab),
        show_progress=False,
    )

    def run(text: str) -> list[str]:
        query = [t for t in dict.fromkeys(tokens(text)) if t in vocab]
        if not query:
            return []
        scores = retriever.get_scores([vocab[t] for t in query])
        order = sorted(range(len(pool)), key=lambda i: -scores[i])
        return [pool[i].name for i in order[:4] if scores[i] > 0]

    return run


def tune_threshold(scorer: Callable[[str], list[tuple[float, str]]], dev: list[Turn]) -> float:
    """The absolute score threshold that does best on the dev split."""
    best, best_value = 0.0, -1e9
    for step in range(0, 121):
        threshold = step * 0.25
        system = thresholded(scorer, threshold)
        s = evaluate(dev, system)
        value = s.success + s.precision - s.false_injection
        if value > best_value:
            best, best_value = threshold, value
    return best


def thresholded(scorer: Callable[[str], list[tuple[float, str]]], threshold: float) -> System:
    """Top 4 among hits scoring at least ``threshold``."""
    return lambda text: [n for s, n in scorer(text)[:4] if s >= threshold]


def line(label: str, s: Scores, generic: Scores, weak: Scores) -> str:
    """One table row."""
    return (
        f"| {label:<28} | {s.success:9.3f} | {s.mrr:5.3f} | {s.precision:9.3f} "
        f"| {generic.false_injection:7.1%} | {weak.false_injection:7.1%} |"
    )


def ablations() -> list[tuple[str, list[tuple[object, str, object]]]]:
    """Each step of the recall pipeline, as the module attributes that switch it off."""
    from context_engine.recall import engine, focus, gate, query, stopwords, tokenize

    def same(word: str) -> str:
        return word

    def keep_all(ranked: Sequence[object], *_: object) -> tuple[list[object], list[object]]:
        return list(ranked), []

    return [
        ("- inflection folding", [(tokenize, "fold", same), (query, "fold", same)]),
        ("- generic words", [(stopwords, "GENERIC_TERMS", frozenset())]),
        ("- small numbers ignored", [(stopwords, "_small_number", lambda _t: False)]),
        ("- rare long word", [(gate, "RARE_SHARE", 1.0)]),
        ("- one word named", [(engine, "_named_single", keep_all)]),
        ("- stale beside fresh", [(engine, "superseded", lambda *_a: {})]),
        ("- focus", [(focus, "FOCUS_FLOOR", 0.0), (focus, "FOCUS_COVERAGE", 0.0)]),
    ]


def run_ablations(facts: list[Fact], turns: list[Turn]) -> None:
    """ours with each step off: success@4 / precision / generic / weak, dev | held out."""
    print("\nablations (success@4 / precision / generic / weak; dev | held out)")
    for label, patches in [("all steps", []), *ablations()]:
        saved = [(module, name, getattr(module, name)) for module, name, _ in patches]
        for module, name, value in patches:
            setattr(module, name, value)
        try:
            system = ours(Recaller(facts))
            cells = []
            for split in ("d", "h"):
                chosen = [t for t in turns if t.split == split]
                s = evaluate([t for t in chosen if t.kind != "w"], system)
                w = evaluate([t for t in chosen if t.kind != "g"], system)
                cells.append(
                    f"{s.success:.3f} / {s.precision:.3f} / {s.false_injection:.1%} / "
                    f"{w.false_injection:.1%}"
                )
            print(f"  {label:<24} {' | '.join(cells)}")
        finally:
            for module, name, value in saved:
                setattr(module, name, value)


def main() -> None:
    """Print the table, and with --misses the turns ours gets wrong."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="list ours' wrong turns")
    parser.add_argument("--ablate", action="store_true", help="ours with each step off")
    args = parser.parse_args()
    facts = load_facts()
    turns = load_turns()
    recaller = Recaller(facts)
    pool = [f for f in facts if recaller.membership(f.reference) == POOL]
    scorer = rank_bm25_scores(pool)
    dev = [t for t in turns if t.split == "d"]
    threshold = tune_threshold(scorer, dev)
    systems: list[tuple[str, System]] = [
        ("ours", ours(recaller)),
        ("rank-bm25 top-4", thresholded(scorer, 0.0)),
        (f"rank-bm25 + threshold {threshold:g}", thresholded(scorer, threshold)),
    ]
    b = bm25s_system(pool)
    if b is not None:
        systems.append(("bm25s top-4", b))
    specific = sum(t.kind == "s" for t in turns)
    print(
        f"quality set: {len(facts)} facts ({len(pool)} in the recall pool), {len(turns)} turns "
        f"({specific} specific, {sum(t.kind == 'g' for t in turns)} generic, "
        f"{sum(t.kind == 'w' for t in turns)} weak)"
    )
    groups = [
        ("dev", lambda t: t.split == "d"),
        ("held out", lambda t: t.split == "h"),
        ("all, English", lambda t: not t.chinese),
        ("all, Chinese", lambda t: t.chinese),
    ]
    for title, keep in groups:
        chosen = [t for t in turns if keep(t)]
        print(f"\n{title} ({sum(t.kind == 's' for t in chosen)} specific turns)")
        print(f"| {'system':<28} | success@4 | MRR   | precision | generic | weak    |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, system in systems:
            print(
                line(
                    label,
                    evaluate(chosen, system),
                    evaluate([t for t in chosen if t.kind in ("s", "g")], system),
                    evaluate([t for t in chosen if t.kind in ("s", "w")], system),
                )
            )
    if args.ablate:
        run_ablations(facts, turns)
    if args.misses:
        run = ours(recaller)
        print("\nours, wrong turns:")
        for t in turns:
            names = list(run(t.text))
            wrong = (t.kind != "s" and names) or (
                t.kind == "s" and (not set(names[:4]) & t.expected or set(names) - t.expected)
            )
            if wrong:
                print(f"  [{t.split}{t.kind}] {t.text!r} -> {names} want {sorted(t.expected)}")


if __name__ == "__main__":
    main()
