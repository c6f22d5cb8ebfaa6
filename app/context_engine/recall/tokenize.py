"""Tokens for recall and search (S8.4).

Runs of letters, digits and ``_`` are one lowercased token (English inflections folded,
:func:`fold`); CJK text (Han, kana, Hangul) is
split into overlapping two-character tokens (a lone CJK character is one token); everything
else separates.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections import Counter

from ..facts.model import Fact

# Han (radicals, CJK ideographs and extensions, compatibility), kana, Hangul.
CJK_CLASS = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303b"
    "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
    "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uffa0-\uffdc"
    "\U00020000-\U0003134f"
)


@functools.cache
def token_re() -> re.Pattern[str]:
    """Group 1: a CJK run; group 2: a run of word characters that are not CJK.

    Compiled on first use: the character class costs ~10 ms to compile, which a hook process
    whose texts are all ASCII never needs (see ``ASCII_QUERY_RE``).
    """
    return re.compile(f"([{CJK_CLASS}]+)|([^\\W{CJK_CLASS}]+)")


# ``token_re()`` restricted to ASCII text: no CJK run (group 1 never takes part) and ``\w``
# is exactly ``[A-Za-z0-9_]`` there, so it finds the same spans and groups.
ASCII_QUERY_RE = re.compile("([^\\x00-\\x7f]+)|([A-Za-z0-9_]+)")
# ASCII text has no CJK and lowercasing it keeps every character's class, so the whole text
# can be lowered once and split by one regex; other text (e.g. "İ".lower() is two characters,
# one of them a combining mark) takes the per-token path.
_ASCII_TOKEN_RE = re.compile("[a-z0-9_]+")


# Text with no CJK character: ``token_re()`` finds the same spans and groups as these (its
# group 1 never takes part, and its group 2 is ``\w`` there). Text with an em dash, curly
# quotes or accents so never compiles the CJK class.
_WORD_RE = re.compile(r"\w+")
WORD_QUERY_RE = re.compile(r"([^\s\S])|(\w+)")
_NON_ASCII_RUN = re.compile("[^\\x00-\\x7f]+")


def _bounds(ranges: str) -> tuple[int, ...]:
    """Sorted code point bounds of ``ranges`` (``a-b`` pairs), adjacent ranges merged.

    A character is in the class when ``bisect_right`` lands it at an odd index.
    """
    pairs = sorted((ord(ranges[i]), ord(ranges[i + 2]) + 1) for i in range(0, len(ranges), 3))
    bounds: list[int] = []
    for low, high in pairs:
        if bounds and low <= bounds[-1]:
            bounds[-1] = max(bounds[-1], high)
        else:
            bounds.extend((low, high))
    return tuple(bounds)


_CJK_BOUNDS = _bounds(CJK_CLASS)
_FIRST_CJK = chr(_CJK_BOUNDS[0])


def is_cjk(text: str) -> bool:
    """True when ``text`` contains a CJK character (no regex of the class is compiled)."""
    if text.isascii():
        return False
    for run in _NON_ASCII_RUN.findall(text):
        if max(run) >= _FIRST_CJK:
            for ch in run:
                if bisect_right(_CJK_BOUNDS, ord(ch)) & 1:
                    return True
    return False


def query_re(text: str) -> re.Pattern[str]:
    """The cheapest pattern finding ``token_re()``'s matches in ``text`` (same spans, groups)."""
    if text.isascii():
        return ASCII_QUERY_RE
    return token_re() if is_cjk(text) else WORD_QUERY_RE


def cjk_terms(run: str) -> list[str]:
    """Overlapping bigrams of a CJK run; a lone character is its own token."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


_VOWELS = frozenset("aeiouy")
_KEEP_DOUBLE = frozenset("lsz")


# Folded words (``fold``), in a plain dict read at C speed by ``tokens``. Only tokens of letters
# are kept: ids and numbers (``ticket1485``, ``2991``) are mostly one-offs that filled an LRU
# of this size with 12 MB at 100,000 facts, measured.
_FOLDED: dict[str, str] = {}
_FOLDED_LIMIT = 65_536


def fold(word: str) -> str:
    """``_fold`` of one lowercased token, remembered for tokens of letters."""
    return _FOLDED.get(word) or _folded(word)


def _folded(word: str) -> str:
    """``_fold`` of a token not remembered, remembered if it is all letters."""
    stem = _fold(word)
    if word.isalpha():
        if len(_FOLDED) >= _FOLDED_LIMIT:
            _FOLDED.clear()
        _FOLDED[word] = stem
    return stem


def _fold(word: str) -> str:
    """Light English inflection folding of one lowercased token (push/pushes/pushed/pushing).

    Only plain ASCII letter runs of at least four characters are touched; identifiers with
    digits or ``_`` and every non-Latin token are kept as they are. Both a word and its
    inflected forms land on the same stem ("cache"/"caches"/"cached" → "cach"), which is all
    matching needs; the stem is never shown to anyone.
    """
    if len(word) < 4 or not word.isascii() or not word.isalpha():
        return word
    stem = word
    if (stem.endswith("ies") and len(stem) > 4) or (stem.endswith("ied") and len(stem) > 4):
        stem = stem[:-3] + "y"
    elif stem.endswith(("xes", "ches", "shes", "sses", "zes")):
        stem = stem[:-2]
    elif stem.endswith("s") and not stem.endswith(("ss", "us", "is", "os")):
        stem = stem[:-1]
    elif stem.endswith("ed") and not stem.endswith("eed") and len(stem) - 2 >= 3:
        stem = _undouble(stem[:-2])
    elif stem.endswith("ing") and _has_vowel(stem[:-3]) and len(stem) - 3 >= 3:
        stem = _undouble(stem[:-3])
    if stem.endswith("e") and len(stem) >= 5 and not stem.endswith(("ee", "ie")):
        stem = stem[:-1]
    return stem


def _has_vowel(text: str) -> bool:
    return any(ch in _VOWELS for ch in text)


def _undouble(stem: str) -> str:
    """``runn`` → ``run``, ``stopp`` → ``stop`` (but ``install``, ``process`` stay)."""
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS | _KEEP_DOUBLE:
        return stem[:-1]
    return stem


def tokens(text: str) -> list[str]:
    """All tokens of ``text`` in order, duplicates kept (document length counts them)."""
    get, miss = _FOLDED.get, _folded  # ``fold`` inlined: the per-token cost of an index build
    if text.isascii():
        return [get(w) or miss(w) for w in _ASCII_TOKEN_RE.findall(text.lower())]
    if not is_cjk(text):
        return [get(w) or miss(w) for w in map(str.lower, _WORD_RE.findall(text))]
    out: list[str] = []
    for cjk, word in token_re().findall(text):
        if word:
            out.append(fold(word.lower()))
        else:
            out.extend(cjk_terms(cjk))
    return out


def document_text(fact: Fact) -> str:
    """The searchable text of a fact: name, title, description, body (S8.4)."""
    return "\n".join((fact.name, fact.title, fact.description, fact.body))


def count_terms(text: str) -> Counter[str]:
    """Term frequencies of ``text`` (measured: faster than split-scan variants)."""
    return Counter(tokens(text))


def term_counts(fact: Fact) -> Counter[str]:
    """Term frequencies of a fact's document text."""
    return count_terms(document_text(fact))
