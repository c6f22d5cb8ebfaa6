"""When two statements say the same thing: the dedupe rule of S11.3 (docs/decisions.md).

A statement is *covered* by a text when any of these holds:
1. its normalized form (letters and digits only, lowercased) occurs inside the text's
   normalized form (verbatim or re-punctuated copy);
2. against some sentence of the text, token Jaccard >= 0.75;
3. against some sentence of the text, >= 90 % of the statement's tokens occur in that sentence
   (statement of >= 3 tokens), or >= 90 % of the sentence's tokens occur in the statement
   (sentence of >= 4 tokens: the statement restates the rule and adds a clause).
The thresholds are strict on purpose: CJK bigrams of two rules that differ only in their
object ("reply in Chinese" / "write commit messages in Chinese") share ~70 % of their tokens.
Tokens: lowercased Latin/digit words minus a few function words; each run of CJK characters
contributes its character bigrams (a lone character counts as itself).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..facts.model import normalize_key
from .words import word_set

JACCARD_MIN = 0.75
COVERAGE_MIN = 0.9

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[。！？；!?;])\s*|(?<=[.])\s+|\n+")
_STOP = word_set(
    "a an the to of and or in on for with you your i me my we our it its is are be be "
    "this that please pls do does"
)


def is_cjk(ch: str) -> bool:
    """Whether ``ch`` is a CJK ideograph, kana or hangul."""
    code = ord(ch)
    return (
        0x3040 <= code <= 0x30FF  # kana
        or 0x3400 <= code <= 0x9FFF  # CJK ideographs
        or 0xAC00 <= code <= 0xD7AF  # hangul
        or 0xF900 <= code <= 0xFAFF
    )


def tokens(text: str) -> frozenset[str]:
    """The token set used by the Jaccard and coverage tests."""
    out: set[str] = set()
    for word in _WORD.findall(text.lower()):
        run: list[str] = []
        latin: list[str] = []
        for ch in word + " ":
            if ch != " " and is_cjk(ch):
                if latin:
                    out.add("".join(latin))
                    latin = []
                run.append(ch)
                continue
            if run:
                out.update("".join(run[i : i + 2]) for i in range(max(1, len(run) - 1)))
                run = []
            if ch != " ":
                latin.append(ch)
        if latin:
            out.add("".join(latin))
    return frozenset(t for t in out if t not in _STOP)


def split_sentences(text: str) -> list[str]:
    """Sentences of a text: split at CJK/Latin sentence ends and line breaks."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


@dataclass(frozen=True, slots=True)
class _Text:
    norm: str
    sentences: tuple[frozenset[str], ...]


class CoverageIndex:
    """Existing texts (fact bodies, instruction bodies, accepted candidates) to test against."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self._texts: list[_Text] = []
        for text in texts:
            self.add(text)

    def add(self, text: str) -> None:
        """Add one text (its sentences are indexed separately)."""
        sentences = tuple(t for t in (tokens(s) for s in split_sentences(text)) if t)
        self._texts.append(_Text(normalize_key(text), sentences))

    def covers(self, statement: str) -> bool:
        """Whether some indexed text already says ``statement`` (rule in the module doc)."""
        norm = normalize_key(statement)
        mine = tokens(statement)
        for text in self._texts:
            if norm and norm in text.norm:
                return True
            for other in text.sentences:
                if similar_tokens(mine, other):
                    return True
        return False


def similar_tokens(mine: frozenset[str], other: frozenset[str]) -> bool:
    """Rules 2 and 3 of the module doc on two token sets."""
    if not mine or not other:
        return False
    shared = len(mine & other)
    if shared / len(mine | other) >= JACCARD_MIN:
        return True
    if len(mine) >= 3 and shared / len(mine) >= COVERAGE_MIN:
        return True
    return len(other) >= 4 and shared / len(other) >= COVERAGE_MIN
