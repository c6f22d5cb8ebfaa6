"""Weak turns stay silent on a realistic store, not only on one that avoids common words (S8.5)."""

from pathlib import Path

import pytest
from context_center.demo import build_demo
from context_engine.catalog.local import LocalCatalog
from context_engine.recall.query import NO_MATCH
from context_engine.recall.service import RecallService


@pytest.fixture(scope="module")
def demo_recall(tmp_path_factory: pytest.TempPathFactory) -> RecallService:
    demo = build_demo(Path(tmp_path_factory.mktemp("demo")))
    recall = LocalCatalog(demo.paths).index
    return recall


@pytest.mark.slow
@pytest.mark.parametrize(
    "message",
    [
        "fix the authentication issue in this large application",
        "please inspect this project",
        "can you check what is wrong with it",
        "请帮我看一下这个问题",
    ],
)
def test_weak_query_injects_nothing(demo_recall: RecallService, message: str) -> None:
    result = demo_recall.recaller().recall(message)
    assert result.block == ""
    assert result.trace.suppressed == NO_MATCH


def test_a_specific_query_still_finds_its_fact(demo_recall: RecallService) -> None:
    result = demo_recall.recaller().recall("which release branch do we publish from?")
    assert "project/release-target.md" not in result.block  # references never; ids are
    assert "title: Release target" in result.block


def test_a_stopword_typed_as_distinctive_still_counts(demo_recall: RecallService) -> None:
    # "#fix" is typed as a distinctive term (S8.5), so it is not treated as a stopword.
    from context_engine.recall.query import parse_query

    query = parse_query("the #fix for this")
    assert "fix" not in query.ignored
    assert {"the", "for", "this"} <= query.ignored
