"""Text without CJK is tokenized without compiling the CJK class, with the same tokens (#14).

The CJK character class costs a cold process ~3.5 ms to compile; an em dash, curly quotes or
an accent in a fact or a prompt must not make a hook pay for it.
"""

from __future__ import annotations

import re

import pytest
from context_engine.recall import tokenize
from context_engine.recall.query import parse_query
from context_engine.recall.tokenize import CJK_CLASS, cjk_terms, is_cjk, query_re, token_re, tokens
from hypothesis import given
from hypothesis import strategies as st

CLASS = re.compile(f"[{CJK_CLASS}]")
NOT_CJK = [
    "Caching — why the build “times out” after the migration…",
    "Der Übergang schlägt fehl; İstanbul ß café naïve → retry",
    "Ошибка сокета: повтор с задержкой 🙂",
]


def per_token(text: str) -> list[str]:
    """Tokens by the full pattern (what ``tokens`` gives for any text)."""
    out: list[str] = []
    for cjk, word in token_re().findall(text):
        out.extend([tokenize.fold(word.lower())] if word else cjk_terms(cjk))
    return out


def rows(pattern: re.Pattern[str], text: str) -> list[tuple[object, ...]]:
    return [(m.span(), m.group(1), m.group(2)) for m in pattern.finditer(text)]


def test_is_cjk_agrees_with_the_class_at_every_range_edge() -> None:
    edges = {ord(ch) + d for ch in CJK_CLASS if ch != "-" for d in (-1, 0, 1)}
    for point in sorted(edges | {0x2014, 0x201C, 0x1F642, 0xE9}):
        text = f"é{chr(point)}x"
        assert is_cjk(text) == (CLASS.search(text) is not None), hex(point)
    assert is_cjk("Redis缓存层") and is_cjk("— 한국어") and not is_cjk("plain ascii")


def test_text_without_cjk_never_compiles_the_cjk_class(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = [per_token(text) for text in NOT_CJK]
    queries = [parse_query(text) for text in NOT_CJK]
    patterns = [rows(token_re(), text) for text in NOT_CJK]

    def refused() -> re.Pattern[str]:
        raise AssertionError("the CJK class was compiled")

    monkeypatch.setattr(tokenize, "token_re", refused)
    assert [tokens(text) for text in NOT_CJK] == expected
    assert [parse_query(text) for text in NOT_CJK] == queries
    assert [rows(query_re(text), text) for text in NOT_CJK] == patterns
    with pytest.raises(AssertionError):
        tokens("缓存 — cache")  # CJK text still takes the full pattern


@pytest.mark.slow
@given(st.text(alphabet=st.sampled_from("aZ9_ -.#/\n\tİßK记忆é\u0307—“”🙂Ж\u1100\u11ff\u1200")))
def test_the_cheapest_pattern_finds_what_the_full_pattern_finds(text: str) -> None:
    assert rows(query_re(text), text) == rows(token_re(), text)
    assert tokens(text) == per_token(text)
    assert is_cjk(text) == (CLASS.search(text) is not None)
