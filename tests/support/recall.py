"""Fact builders shared by the recall and memory-tool tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from context_engine.facts.model import Fact, FactType, Scope

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def fact(
    name: str,
    body: str,
    *,
    title: str = "",
    description: str = "",
    type: FactType = "project",
    scope: Scope = "project",
    id: str | None = None,
    revision: int = 1,
    age_days: float = 1.0,
) -> Fact:
    """A fact updated ``age_days`` before :data:`NOW`."""
    stamp = NOW - timedelta(days=age_days)
    return Fact(id=id or f"mem_{scope[0]}_{name}", revision=revision, name=name,
                title=title or name.replace("-", " "), description=description or f"about {name}",
                type=type, scope=scope, body=body, created_at=stamp, updated_at=stamp)


def sample_store() -> list[Fact]:
    """A small mixed store; its bodies avoid pairs of the weak-query words on purpose."""
    return [
        fact(
            "auth-handler-panic",
            "AuthHandler panics when a session token is empty; tracked as #6928. "
            "Guard added to middleware ordering.",
            title="AuthHandler panic",
            description="nil session token crash",
        ),
        fact(
            "memory-recall-design",
            "记忆召回只在真实用户回合触发，按 BM25 排序，预算 2400 字符。",
            title="记忆召回设计",
            description="自动召回的约束",
        ),
        fact(
            "release-target",
            "Release builds go out Thursdays from branch release/2.x; CI job deploy-prod.",
            title="Release target",
            description="weekly release cadence",
        ),
        fact(
            "cache-layer",
            "Redis 缓存层 uses TTL 300s for session lookups; 缓存失效 handled by pubsub.",
            title="Redis 缓存",
            description="cache TTL settings",
        ),
    ]
