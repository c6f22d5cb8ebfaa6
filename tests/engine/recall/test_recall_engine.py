"""Recall acceptance: suppression, distinctive hits, Chinese, overrides, privacy, budget (S8)."""

from __future__ import annotations

import re

import pytest
from context_engine.recall import Recaller
from context_engine.recall.block import escape
from context_engine.recall.query import GENERIC, NO_MATCH
from hypothesis import given, settings
from hypothesis import strategies as st
from support.recall import NOW, fact, sample_store


@pytest.fixture
def recaller() -> Recaller:
    return Recaller(sample_store())


@pytest.mark.parametrize("turn", ["continue", "继续", "please continue", "ok"])
def test_generic_turns_inject_nothing(recaller: Recaller, turn: str) -> None:
    result = recaller.recall(turn, now=NOW)
    assert result.block == ""
    assert result.trace.suppressed == GENERIC


@pytest.mark.parametrize(
    "turn",
    ["fix the authentication issue in this large application", "please inspect this project"],
)
def test_weak_queries_inject_nothing(recaller: Recaller, turn: str) -> None:
    result = recaller.recall(turn, now=NOW)
    assert result.block == ""
    assert result.trace.suppressed == NO_MATCH
    assert result.trace.used_chars == 0


def test_empty_pool_reason() -> None:
    only_prefix = [fact("tabs", "Use tabs", type="user", scope="global")]
    result = Recaller(only_prefix).recall("tabs or spaces?", now=NOW)
    assert result.trace.suppressed == "memory store is empty"


def test_distinctive_query_finds_its_fact(recaller: Recaller) -> None:
    result = recaller.recall("fix AuthHandler panic from #6928", now=NOW)
    assert [h.name for h in result.trace.hits] == ["auth-handler-panic"]
    assert result.block.startswith("<memory-recall>\n")
    assert result.block.endswith("</memory-recall>")
    assert 'reason="matched authhandler, panic, 6928; project scope"' in result.block
    assert re.search(r"score=\d+\.\d{3} ", result.block)


def test_single_distinctive_term_passes_gate() -> None:
    store = [fact("ticket", "Tracked in ticket 6928 upstream.")]
    assert Recaller(store).recall("what about 6928 then", now=NOW).trace.hits


def test_single_common_term_does_not_pass_gate() -> None:
    store = [fact("ticket", "Tracked in ticket upstream.", description="upstream note")]
    # Three content words: one matching 6-letter word is not enough (S8.5).
    result = Recaller(store).recall("what about the ticket queue for payments", now=NOW)
    assert result.trace.suppressed == NO_MATCH


def test_chinese_query_finds_fact(recaller: Recaller) -> None:
    result = recaller.recall("如何优化项目记忆自动召回", now=NOW)
    assert [h.name for h in result.trace.hits] == ["memory-recall-design"]


def test_mixed_chinese_english_query(recaller: Recaller) -> None:
    result = recaller.recall("Redis缓存的TTL是多少", now=NOW)
    assert result.trace.hits and result.trace.hits[0].name == "cache-layer"


def test_project_overrides_global_with_same_name() -> None:
    store = [
        fact("deploy-steps", "Deploy with kubectl rollout for project zeta.", scope="project"),
        fact("deploy-steps", "Deploy with kubectl rollout generally.", scope="global"),
    ]
    result = Recaller(store).recall("kubectl rollout deploy", now=NOW)
    assert [(h.scope, h.name) for h in result.trace.hits] == [("project", "deploy-steps")]
    dropped = [d for d in result.trace.dropped if d.scope == "global"]
    assert [d.reason for d in dropped] == ["project override"]
    assert "project/deploy-steps.md" in dropped[0].detail and "same name" in dropped[0].detail


def test_project_overrides_global_with_same_title() -> None:
    store = [
        fact("a-proj", "Lint with ruff strict mode.", title="Lint Rules!", scope="project"),
        fact("b-glob", "Lint with flake8 strict mode.", title="lint rules", scope="global"),
    ]
    result = Recaller(store).recall("ruff flake8 lint strict", now=NOW)
    assert [h.name for h in result.trace.hits] == ["a-proj"]
    assert any(
        d.reason == "project override" and "same title" in d.detail for d in result.trace.dropped
    )


def test_global_user_feedback_never_recalled() -> None:
    store = [
        fact("prefers-tabs", "Tabs for Makefile indentation always.", type="user", scope="global"),
        fact("no-mocks", "Never mock the Makefile indentation checker.", type="feedback",
             scope="global"),
        fact("proj", "Nothing related at all here.", scope="project"),
    ]
    result = Recaller(store).recall("Makefile indentation tabs", now=NOW)
    assert result.block == ""
    assert result.trace.suppressed == NO_MATCH


def test_global_reference_is_recalled_without_project_scope_reason() -> None:
    store = [
        fact("dash", "Grafana dashboard grafana.example/d/42 latency.", type="reference",
             scope="global")
    ]
    result = Recaller(store).recall("grafana latency dashboard", now=NOW)
    assert result.trace.hits[0].scope == "global"
    assert "project scope" not in result.trace.hits[0].reason


def test_stale_private_reference_within_small_budget() -> None:
    body = (
        "See /Users/private-name/work/notes/runbook.md for the rotation runbook. "
        + "filler text " * 80
        + "</memory-recall> rotation runbook end"
    )
    stale = fact("rotation-runbook", body, type="reference", age_days=200)
    recaller = Recaller([stale, *sample_store()])
    result = recaller.recall("where is the rotation runbook", budget=700, now=NOW)
    block = result.block
    assert block, result.trace.suppressed
    assert len(block) <= 700
    assert block.count("</memory-recall>") == 1
    assert block.endswith("</memory-recall>")
    assert "&lt;local-home&gt;" in block
    assert "private-name" not in block
    assert "/Users/" not in block and "memory/" not in block
    assert "freshness=stale" in block
    assert result.trace.used_chars == len(block)
    assert result.trace.char_budget == 700


def test_budget_clamped_and_limit_clamped(recaller: Recaller) -> None:
    result = recaller.recall("AuthHandler 6928", budget=10, limit=99, now=NOW)
    assert result.trace.char_budget == 480
    assert result.trace.limit == 8


def test_limit_drops_count_as_omitted() -> None:
    store = [
        fact(f"svc-{i}", f"Service zebra{i} uses port 9{i}00 and quokka gateway.") for i in range(6)
    ]
    result = Recaller(store).recall("quokka gateway port", limit=2, now=NOW)
    assert len(result.trace.hits) == 2
    assert result.trace.omitted == 4
    assert "- omitted=4 additional relevant fact(s)" in result.block
    assert result.trace.dropped_counts.get("limit") == 4
    assert all(d.reason == "limit" for d in result.trace.dropped)


def test_relative_floor_drops_weak_hits() -> None:
    strong = fact("strong", "quokka gateway quokka gateway quokka gateway router")
    weak = fact("weak", "quokka " + "padding words here " * 60 + " gateway")
    others = [fact(f"o{i}", f"unrelated {i} alpha beta") for i in range(30)]
    result = Recaller([strong, weak, *others]).recall("quokka gateway router", now=NOW)
    names = [h.name for h in result.trace.hits]
    assert "strong" in names
    if "weak" not in names:
        assert result.trace.dropped_counts.get("relative score") == 1


def test_order_ties_by_newer_updated_then_id() -> None:
    a = fact("a", "quokka gateway", id="mem_b", age_days=5)
    b = fact("b", "quokka gateway", id="mem_a", age_days=5)
    c = fact("c", "quokka gateway", id="mem_c", age_days=1)
    result = Recaller([a, b, c]).recall("quokka gateway", now=NOW)
    assert [h.id for h in result.trace.hits] == ["mem_c", "mem_a", "mem_b"]


def test_stale_penalty_and_project_boost() -> None:
    proj = fact("p", "quokka gateway", scope="project", age_days=1)
    glob = fact("g", "quokka gateway", scope="global", type="reference", age_days=1)
    old = fact("o", "quokka gateway", scope="project", age_days=400)
    trace = Recaller([proj, glob, old]).recall("quokka gateway", now=NOW).trace
    hits = {h.name: h.score for h in trace.hits}
    assert hits["p"] == pytest.approx(hits["g"] * 1.08)
    # The stale copy is scored × 0.92, then left out beside the fresher one (same subject).
    dropped = {d.name: d for d in trace.dropped}
    assert dropped["o"].reason == "superseded"
    assert dropped["o"].score == pytest.approx(hits["p"] * 0.92)


def test_html_escaping_of_user_values() -> None:
    evil = fact("evil", "quokka gateway <script>alert(\"x\")</script> & 'quote'",
                title='<b>"Title"</b> & more', id="mem_<x>")
    block = Recaller([evil]).recall("quokka gateway", now=NOW).block
    assert "<script>" not in block and "<b>" not in block
    assert escape('<b>"Title"</b> & more') in block
    assert "&#39;quote&#39;" in block
    assert block.count("<memory-recall>") == 1


def test_recall_never_raises_and_reports() -> None:
    recaller = Recaller(sample_store())

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk gone")

    recaller._recall = boom  # type: ignore[method-assign]
    result = recaller.recall("AuthHandler 6928", now=NOW)
    assert result.block == ""
    assert result.trace.suppressed == "recall failed: RuntimeError"


def test_snapshot_diagnostics_are_reported_as_skipped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from context_engine.facts.model import Diagnostic

    diag = Diagnostic(
        code="yaml_syntax", path=tmp_path / "memory" / "broken.md", message="bad yaml", line=3
    )
    recaller = Recaller(sample_store(), diagnostics=[diag])
    trace = recaller.recall("AuthHandler 6928", now=NOW).trace
    assert [(s.code, s.file) for s in trace.skipped] == [("yaml_syntax", "broken.md")]
    assert str(tmp_path) not in trace.to_text()


def test_every_hit_over_budget_reason() -> None:
    huge_title = "Quokka gateway " + "very long title words " * 20
    store = [fact("big", "quokka gateway details", title=huge_title)]
    result = Recaller(store).recall("quokka gateway", budget=480, now=NOW)
    assert result.block == ""
    assert result.trace.suppressed == "matched facts exceeded recall budget"
    assert result.trace.dropped_counts == {"budget": 1}
    assert result.trace.omitted == 1


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(budget=st.integers(min_value=0, max_value=3000),
       limit=st.integers(min_value=0, max_value=10),
       sizes=st.lists(st.integers(min_value=0, max_value=1500), min_size=1, max_size=10))
def test_block_never_exceeds_budget(budget: int, limit: int, sizes: list[int]) -> None:
    store = [
        fact(f"f{i}", "quokka gateway <&> " + "x" * size, title=f"T{i} " + "y" * (size // 10))
        for i, size in enumerate(sizes)
    ]
    result = Recaller(store).recall("quokka gateway", budget=budget, limit=limit, now=NOW)
    trace = result.trace
    assert len(result.block) <= trace.char_budget
    assert trace.used_chars == len(result.block)
    assert len(trace.hits) <= trace.limit
    below_floor = trace.dropped_counts.get("relative score", 0)
    assert len(trace.hits) + trace.omitted + below_floor == len(store)
    if trace.omitted and result.block:
        assert f"- omitted={trace.omitted} additional" in result.block
    if result.block:
        assert result.block.count("</memory-recall>") == 1
