"""Recall's output, byte for byte, against a digest recorded before the turn-cost work (issue 14).

A seeded store (English, Chinese, mixed; project and global; many near-ties) and a spread of
queries, limits and budgets: the blocks, the full traces (JSON and text) and the search hits
must hash to what the code at c684bc6 produced, on both scorers. A change meant to alter
ranking, snippets or the trace updates ``DIGEST`` on purpose, saying why in its commit.
"""

from __future__ import annotations

import hashlib
import json
import random
from datetime import UTC, datetime, timedelta

import pytest
from context_engine.facts.model import Fact
from context_engine.recall import Recaller, index

DIGEST = "a8fffd69ec74bf62f98a76792ed8b648ff49d3b7bf746a47623ca2108feef070"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
EN = [
    "docker", "release", "build", "cache", "migration", "timeout", "kernel", "socket", "handler",
    "gateway", "retry", "vault", "token", "session", "budget", "panic", "deploy", "config", "the",
    "a", "of", "to", "why", "is", "slow", "after", "out",
]
ZH = ["发布", "构建", "缓存", "迁移", "超时", "内核", "网关", "会话", "预算", "配置"]


def store(count: int = 600) -> list[Fact]:
    """``count`` facts with seeded text, ages, scopes and types."""
    rng = random.Random(14)
    facts = []
    for i in range(count):
        words = rng.choices(EN, k=rng.randint(3, 60))
        if i % 3 == 0:
            words += rng.choices(ZH, k=rng.randint(1, 12))
        scope = "global" if i % 4 == 0 else "project"
        kind = ("project", "reference", "user", "feedback")[i % 4]
        stamp = NOW - timedelta(days=rng.uniform(0, 400))
        name = f"{rng.choice(EN)}-{rng.choice(EN)}-{i % 150}"  # some globals shadowed
        facts.append(Fact(
            id=f"mem_{i:04d}", revision=1 + i % 3, name=name, title=" ".join(words[:3]),
            description=" ".join(words[3:6]), type=kind, scope=scope,  # type: ignore[arg-type]
            body=" ".join(words) + (f" ticket{i}" if i % 7 == 0 else ""),
            created_at=stamp, updated_at=stamp if i % 5 else None,
        ))
    return facts


def queries() -> list[str]:
    """Fixed prompts plus seeded word mixes of one to fifteen words."""
    rng = random.Random(7)
    out = ["why does the docker release build time out after the cache migration?",
           "发布构建为什么在缓存迁移之后超时", "kernel socket 超时 handler", "ticket42", "ok",
           "why is the gateway slow", "the the the", ""]
    for _ in range(50):
        out.append(" ".join(rng.choices(EN + ZH, k=rng.choice([1, 2, 3, 5, 9, 15]))))
    return out


def digest(recaller: Recaller) -> str:
    """sha256 over every output for every query and limit/budget pair."""
    h = hashlib.sha256()
    for query in queries():
        for limit, budget in ((4, 2400), (1, 300), (12, 1200)):
            result = recaller.recall(query, limit=limit, budget=budget, now=NOW)
            h.update(result.block.encode())
            h.update(json.dumps(result.trace.to_dict(), ensure_ascii=False).encode())
            h.update(result.trace.to_text().encode())
        h.update(repr([(hit.fact.id, hit.score) for hit in recaller.search(query)]).encode())
    return h.hexdigest()


@pytest.mark.slow
@pytest.mark.parametrize("plain", [True, False])
def test_outputs_equal_the_recorded_digest(plain: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index, "use_python", lambda postings: plain)
    assert digest(Recaller(store())) == DIGEST
