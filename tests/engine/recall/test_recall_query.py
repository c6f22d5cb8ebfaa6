"""Tokenizer, generic turns, suppression reasons and the strong-match gate (S8.2, S8.4, S8.5)."""

from __future__ import annotations

import pytest
from context_engine.recall.query import GENERIC, NO_TERMS, parse_query, suppression
from context_engine.recall.tokenize import tokens


def test_tokens_words_lowercased_and_underscore_kept() -> None:
    assert tokens("Fix AuthHandler_v2, port 8080!") == ["fix", "authhandler_v2", "port", "8080"]


def test_tokens_cjk_overlapping_bigrams_and_lone_char() -> None:
    assert tokens("记忆召回") == ["记忆", "忆召", "召回"]
    assert tokens("好") == ["好"]
    assert tokens("カタカナ 한국어") == ["カタ", "タカ", "カナ", "한국", "국어"]


def test_tokens_mixed_scripts_split_at_script_boundary() -> None:
    assert tokens("Redis缓存层TTL") == ["redis", "缓存", "存层", "ttl"]


@pytest.mark.parametrize(
    "turn", ["continue", "继续", "please continue", "ok", "  OK ", "Go   on", "下一步"]
)
def test_generic_turns(turn: str) -> None:
    assert suppression(turn) == GENERIC


@pytest.mark.parametrize("turn", ["", "   ", "...", "？！", "---"])
def test_no_searchable_terms(turn: str) -> None:
    assert suppression(turn) == NO_TERMS


def test_not_generic_when_more_words() -> None:
    assert suppression("continue with the AuthHandler fix") is None


def test_distinctive_terms() -> None:
    q = parse_query("fix AuthHandler panic from #6928 in config.toml and #deploy")
    assert {"authhandler", "6928", "config", "deploy"} <= q.distinctive
    assert "panic" not in q.distinctive and "fix" not in q.distinctive
    assert "toml" not in q.distinctive


def test_strong_long_term_only_in_short_query() -> None:
    assert "authentication" in parse_query("authentication errors").strong
    assert "authentication" not in parse_query("authentication errors in billing export").strong


def test_short_query_rule_counts_content_terms_only() -> None:
    # S8.5: stopwords, request words and generic words do not count toward "≤ 2 terms".
    assert "sentry" in parse_query("check sentry crash").strong
    assert "sentry" in parse_query("please check the sentry crash").strong
    assert "sentry" in parse_query("the authentication errors here with sentry").strong
    assert "sentry" not in parse_query("sentry crash on billing export").strong


def test_generic_words_and_bare_numbers_are_weak() -> None:
    q = parse_query("run the 2 tests locally on port 8080")
    assert {"run", "test", "2", "locally"} <= q.ignored
    assert q.weak == frozenset({"8080"})
    assert q.strong == frozenset({"8080"})  # two content terms: a long number may stand alone
    assert parse_query("run the 2 tests locally").strong == frozenset()
    # A number typed as a reference, or the subject of a short query, still stands alone.
    assert "6928" in parse_query("fix #6928 in the billing export").strong
    assert "6928" in parse_query("what about 6928 then").strong
    assert "12" not in parse_query("what about 12 then").strong


def test_terms_are_distinct_in_first_seen_order() -> None:
    assert parse_query("cache Cache CACHE ttl").terms == ("cach", "ttl")
    assert parse_query("caches cached ttl").terms == ("cach", "ttl")
