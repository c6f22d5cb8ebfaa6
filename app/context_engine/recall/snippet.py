"""Snippets centred on the query, with home directories hidden (S7.4, S8.8)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

SNIPPET_CHARS = 520
ELLIPSIS = "..."
SNIPPET_SEPARATOR = " — "  # between a fact's description and its body on the ``fact:`` line


def compact(text: str) -> str:
    """Collapse whitespace runs to one space and trim (a snippet is one line)."""
    # str.split() splits on exactly the characters ``\s`` matches (str.isspace) and drops
    # the ends: the same text as ``re.sub(r"\s+", " ", text).strip()`` (tested), ~4x faster.
    return " ".join(text.split())


def anchor(text: str, query: str, terms: Sequence[str]) -> int:
    """Offset of the first occurrence of the whole query, else of the first multi-char term."""
    lower = text.lower()
    whole = compact(query).lower()
    if whole:
        found = lower.find(whole)
        if found >= 0:
            return found
    for term in terms:
        if len(term) < 2:
            continue
        found = lower.find(term)
        if found >= 0:
            return found
    return 0


def make_snippet(
    text: str,
    query: str,
    terms: Sequence[str],
    limit: int = SNIPPET_CHARS,
    clean: Callable[[str], str] | None = None,
) -> str:
    """At most ``limit`` characters of ``text`` around the query, local paths scrubbed.

    ``clean`` is the engine's scrubber (``session/privacy.py``; default: the OS user's home
    and the generic home patterns). It runs on the whole raw text before the window is cut
    and before anything is escaped, so a window can never start in the middle of a home path.
    """
    if clean is None:
        from ..session.privacy import default_clean

        clean = default_clean
    text = compact(clean(text))  # scrub first: compacting would respell a path with spaces
    if len(text) <= limit:
        return text
    width = max(limit - 2 * len(ELLIPSIS), 1)
    at = anchor(text, query, terms)
    start = max(0, at - width // 2)
    end = min(len(text), start + width)
    start = max(0, end - width)
    head = ELLIPSIS if start > 0 else ""
    tail = ELLIPSIS if end < len(text) else ""
    return head + text[start:end] + tail
