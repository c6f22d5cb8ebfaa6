"""The session-start memory block is bounded at any store size (S7.2a)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from context_engine.facts.model import Fact
from context_engine.session.prefix import (
    GLOBAL_HEADING,
    INDEX_HEADING,
    MEMORY_BLOCK_LIMIT,
    build_memory_block,
)

BASE = datetime(2026, 1, 1, tzinfo=UTC)


def fact(i: int, scope: str = "project", type_: str = "project", body: str = "Body.") -> Fact:
    return Fact(
        id=f"mem-{scope}-{i:06d}",
        revision=1,
        name=f"{scope}-fact-{i:06d}",
        title=f"Fact number {i} about the release pipeline",
        description=f"How step {i} of the deployment works, with enough words to be realistic",
        type=type_,  # type: ignore[arg-type]
        scope=scope,  # type: ignore[arg-type]
        body=body,
        updated_at=BASE + timedelta(minutes=i),
    )


@pytest.mark.slow
@pytest.mark.parametrize("count", [0, 10, 102, 1000, 10_000])
def test_block_fits_the_bound_at_any_size(count: int) -> None:
    facts = [fact(i) for i in range(count)]
    block = build_memory_block(facts)
    assert len(block) <= MEMORY_BLOCK_LIMIT
    assert block.startswith("# Memory\n")
    if count >= 102:
        index = block.split(INDEX_HEADING, 1)[1].splitlines()
        shown = [line for line in index if line.startswith("- [")]
        more = count - len(shown)
        assert index[-1] == f"… and {more} more facts: search them with the memory tool"
        assert len(shown) > 20


def test_newest_facts_are_kept_and_the_choice_is_deterministic() -> None:
    facts = [fact(i) for i in range(500)]
    block = build_memory_block(facts)
    assert "project-fact-000499.md" in block  # newest
    assert "project-fact-000000.md" not in block  # oldest
    assert build_memory_block(list(reversed(facts))) == block  # same facts in, same block out


def test_project_before_global_on_equal_timestamps() -> None:
    same = BASE
    facts = [
        Fact(
            id=f"mem-{s}-{i}",
            revision=1,
            name=f"{s}-{i:04d}",
            title="",
            description="x" * 120,
            type="reference",
            scope=s,
            body="",
            updated_at=same,  # type: ignore[arg-type]
        )
        for i in range(200)
        for s in ("global", "project")
    ]
    block = build_memory_block(facts, limit=4000)
    assert "project-0000.md" in block
    assert "global-0199.md" not in block


def test_small_store_block_is_unchanged_whole() -> None:
    facts = [fact(i) for i in range(5)]
    block = build_memory_block(facts)
    assert "more facts" not in block
    assert all(f"project-fact-{i:06d}.md" in block for i in range(5))


def test_long_guidance_is_cut_with_a_marker_and_stays_first() -> None:
    guidance = [fact(i, "global", "feedback", body="Prefer tabs. " * 2000) for i in range(3)]
    block = build_memory_block([*guidance, *(fact(i) for i in range(3, 300))])
    assert len(block) <= MEMORY_BLOCK_LIMIT
    assert block.index(GLOBAL_HEADING) < block.index(INDEX_HEADING)
    assert "cut to fit; read global/global-fact-000000.md with the `memory` tool" in block


def test_bound_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    facts = [fact(i) for i in range(1000)]
    monkeypatch.setenv("CONTEXT_ENGINE_MEMORY_BLOCK_CHARS", "3000")
    assert len(build_memory_block(facts)) <= 3000
    assert len(build_memory_block(facts, limit=20_000)) > 8000


def test_scrub_is_measured_before_the_bound() -> None:
    facts = [fact(i) for i in range(1000)]
    grow = lambda text: text.replace("step", "<local-home-longer-than-before>")  # noqa: E731
    block = build_memory_block(facts, scrub=grow)
    assert len(block) <= MEMORY_BLOCK_LIMIT
    assert "<local-home-longer-than-before>" in block
