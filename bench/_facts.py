"""Shared bench fixture: a workspace and home with N synthetic facts written in S3.1 format."""

from __future__ import annotations

import os
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from context_engine.facts.codec import render_fact
from context_engine.facts.model import Fact
from context_engine.paths import EnginePaths

WORDS = [
    "release", "build", "deploy", "cache", "token", "parser", "index", "budget", "branch",
    "docker", "kernel", "socket", "schema", "migration", "lint", "format", "type", "check",
    "test", "fixture", "queue", "worker", "retry", "timeout", "config", "secret", "vault",
    "proxy", "gateway", "router", "handler", "logger", "metric", "trace", "span", "alert",
    "frontend", "backend", "database", "replica", "shard", "backup", "restore", "archive",
    "upload", "download",
]


def make_workspace(base: Path, count: int, seed: int = 7) -> EnginePaths:
    """Write ``count`` facts (90 % project, 10 % global) and return the engine paths."""
    workspace = base / "ws"
    (workspace / ".git").mkdir(parents=True, exist_ok=True)
    (workspace / "AGENTS.md").write_text("Run the tests before committing.\n", "utf-8")
    paths = EnginePaths.resolve(home=base / "home", workspace=workspace)
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for store in (paths.project_store, paths.global_store):
        store.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        scope = "global" if i % 10 == 0 else "project"
        kinds = ("user", "feedback") if scope == "global" else ("project", "reference")
        fact_type = rng.choice(kinds)
        words = rng.sample(WORDS, 12)
        name = f"{words[0]}-{words[1]}-{i}"
        when = start + timedelta(hours=i)
        fact = Fact(
            id=f"mem-{i:032x}",
            revision=1,
            name=name,
            title="",
            description=f"{words[2]} {words[3]} note {i}",
            type=fact_type,
            scope=scope,
            body=" ".join(rng.choice(WORDS) for _ in range(40)) + f" ticket{i}",
            created_at=when,
            updated_at=when,
        )
        store = paths.global_store if scope == "global" else paths.project_store
        (store / f"{name}.md").write_bytes(render_fact(fact))
    return paths


def make_aged_workspace(base: Path, count: int) -> EnginePaths:
    """``make_workspace`` with every fact file an hour old and the racy window waited out.

    Files written just now are "racy" for 2 s (their mtime cannot prove them unchanged), so a
    reader would not trust its cache yet; ctime cannot be aged, so the last 2 s are waited.
    """
    paths = make_workspace(base, count)
    old = time.time() - 3600
    for store in (paths.project_store, paths.global_store):
        for file in store.iterdir():
            os.utime(file, (old, old))
    time.sleep(2.1)
    return paths
