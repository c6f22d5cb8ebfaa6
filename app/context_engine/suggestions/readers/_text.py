"""Stripping host-injected ``<tag>…</tag>`` blocks around user text."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=64)
def _leading(tags: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(t) for t in tags)
    return re.compile(rf"\A\s*<({names})(?:\s[^>]*)?>.*?</\1\s*>\s*", re.DOTALL)


@lru_cache(maxsize=64)
def _trailing(tags: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(t) for t in tags)
    return re.compile(rf"\s*<({names})(?:\s[^>]*)?>(?:(?!<\1[\s>]).)*?</\1\s*>\s*\Z", re.DOTALL)


def strip_leading_blocks(text: str, tags: Iterable[str]) -> str:
    """Remove every leading ``<tag …>…</tag>`` block whose tag is in ``tags``."""
    pattern = _leading(tuple(tags))
    while (match := pattern.match(text)) is not None:
        text = text[match.end() :]
    return text


def strip_trailing_blocks(text: str, tags: Iterable[str]) -> str:
    """Remove every trailing ``<tag …>…</tag>`` block whose tag is in ``tags``."""
    pattern = _trailing(tuple(tags))
    while (match := pattern.search(text)) is not None:
        text = text[: match.start()]
    return text


def starts_with_any(text: str, prefixes: tuple[str, ...], *, fold: bool = False) -> bool:
    """Whether ``text`` (left-trimmed) starts with one of ``prefixes``."""
    head = text.lstrip()
    if fold:
        return head[:128].lower().startswith(_lowered(prefixes))
    return head.startswith(prefixes)


@lru_cache(maxsize=16)
def _lowered(prefixes: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(p.lower() for p in prefixes)
