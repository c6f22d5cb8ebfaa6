"""Small text helpers shared by the extractors: statements of a turn, shortening, hashing."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from functools import lru_cache

from ..facts.model import normalize_key, one_line
from .model import UserTurn
from .similarity import split_sentences

CJK_MARKERS: tuple[str, ...] = (
    "记住",
    "以后",
    "始终",
    "总是",
    "每次",
    "默认",
    "不要",
    "偏好",
    "规则",
    "约定",
)
# One pass finds the earliest S11.3 marker; English ones are whole words ("prefer" also as
# prefers/preferred/preferably), case-insensitive.
_MARKER = re.compile(
    "|".join(CJK_MARKERS)
    + r"|\b(?:remember|always|never|by default|preference|prefer(?:s|red|ably)?)\b",
    re.IGNORECASE,
)

_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_PREFIX = re.compile(r"^\s*(?:[-*+•]\s+|\d+[.)]\s+)+")
_LIST_STARTS = frozenset("-*+•0123456789")
# Pasted output, not prose: log lines, stack frames, tracebacks, diff and prompt lines.
_PASTED = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}[T ]|\[?\d{1,2}:\d{2}(?::\d{2})?|(?:ERROR|WARN|WARNING|INFO|DEBUG|"
    r"TRACE|FATAL|CRITICAL|PANIC)\b|at [\w.$<>]+\(|File \"|Traceback |goroutine \d|[+-]{3} |@@ |"
    r"\w+Error:|\w+Exception\b|npm (?:ERR|WARN)|error(?:\[\w+\])?:)"
)
_SPACES = re.compile(r"\s{2,}|[\t\r\f\v]")


def prose_lines(text: str) -> Iterator[str]:
    """Prose lines of a turn: no code, quotes or pasted output; list markers removed."""
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or line.startswith(("    ", "\t", "$ ", ">>> ")):
            continue  # code and shell transcripts are not statements
        line = line.strip()
        if line.startswith(">") or _PASTED.match(line):
            continue  # a quote (often of the assistant) or pasted output: not the user's rule
        if line[:1] in _LIST_STARTS:
            line = _LIST_PREFIX.sub("", line).strip()
        if line:
            yield line


def sentences(text: str) -> Iterator[str]:
    """One-line sentences of the prose of a turn."""
    for line in prose_lines(text):
        for sentence in split_sentences(line):
            # split_sentences trims; only inner runs of whitespace are left to collapse.
            yield _SPACES.sub(" ", sentence) if _SPACES.search(sentence) else sentence


def shorten(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters, ending in ``…`` when cut."""
    flat = one_line(text)
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def stable_hash(*parts: str) -> str:
    """Hex sha256 of the parts joined by NUL: the seed of stable ids and name suffixes."""
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def statement_key(text: str) -> str:
    """The identity of a statement: letters and digits only, lowercased."""
    return normalize_key(text)


# Idioms that hold a marker word but state no rule ("never mind", "as always", 以后再说 "later").
_IDIOMS = re.compile(r"\bnever ?mind\b|\bas always\b|\bif you remember\b|以后再说", re.IGNORECASE)


# Inline code (`always-on.ts`) is never prose.
_INLINE_CODE = re.compile(r"`[^`]*`")
# Characters that join a word into a path, file name or identifier: a marker touching one of
# them (``always-on.ts``, ``src/never_cache``, ``--always``) is part of that name, not a word.
_JOINERS = frozenset("-_./\\:@#=$~+")


def _inside_name(text: str, start: int, end: int) -> bool:
    """Whether the match ``text[start:end]`` is glued to a path, file name or identifier."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    if before in _JOINERS or after in "-_/\\@#=$~+":
        return True
    # A dot or colon right after is punctuation unless a name character follows it.
    follows = text[end + 1] if end + 1 < len(text) else " "
    return after in ".:" and (follows.isalnum() or follows in "_/")


def find_marker(statement: str) -> str | None:
    """The earliest S11.3 marker in ``statement`` used as a word, lowercased, or ``None``.

    English markers count only as words of prose: never inside inline code, a path, a file
    name or an identifier (``- always-on.ts: src/always-on.ts`` holds no marker).
    """
    if _MARKER.search(statement) is None:
        return None
    text = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), _IDIOMS.sub(" ", statement))
    for match in _MARKER.finditer(text):
        word = match.group(0)
        if word.isascii() and _inside_name(text, match.start(), match.end()):
            continue
        return word.lower()
    return None


@lru_cache(maxsize=1 << 15)
def marked_sentences(turn: UserTurn) -> tuple[tuple[str, str | None], ...]:
    """``(sentence, marker)`` pairs of a turn, computed once for both extractors.

    ``scan`` clears the cache when it is done, so no turn text outlives a scan.
    """
    return tuple((s, find_marker(s)) for s in sentences(turn.text))
