"""Word lists written as one whitespace-separated string."""

from __future__ import annotations


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` as a set."""
    return frozenset(text.split())
