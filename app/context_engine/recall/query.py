"""The recall query: generic turns, distinct terms and distinctive terms (S8.1–S8.2, S8.5)."""

from __future__ import annotations

import re

from ..records import field, record
from .gate import strong_terms
from .stopwords import gate_ignored, gate_weak, is_bare_number
from .tokenize import cjk_terms, fold, query_re

GENERIC_TURNS: frozenset[str] = frozenset(
    {
        "continue",
        "please continue",
        "go on",
        "next",
        "ok",
        "okay",
        "yes",
        "no",
        "继续",
        "好的",
        "好",
        "是",
        "否",
        "下一步",
    }
)

NO_TERMS = "no searchable terms"
GENERIC = "generic user turn"
EMPTY_POOL = "memory store is empty"
NO_MATCH = "no sufficiently distinctive match"
OVER_BUDGET = "matched facts exceeded recall budget"

_WS = re.compile(r"\s+")


@record
class Query:
    """A parsed user message: distinct terms in first-seen order and the distinctive subset.

    ``typed`` maps each term (a folded stem for English words) to the word first typed for it,
    lowercased: what a person reads in a ``reason``.
    """

    text: str
    terms: tuple[str, ...]
    distinctive: frozenset[str]
    typed: dict[str, str] = field(default_factory=dict, compare=False)
    # Distinctive only for being typed in capitals (CI, PR, API, TTL): the recall engine keeps
    # them distinctive only when they are rare in the pool.
    acronyms: frozenset[str] = frozenset()
    # The term classes below, each worked out on first use: a turn asks for them many times.
    _classes: dict[str, frozenset[str]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def ignored(self) -> frozenset[str]:
        """Terms that score but do not count toward the gate (stopwords)."""
        found = self._classes.get("ignored")
        if found is None:
            found = self._classes["ignored"] = gate_ignored(self.terms, self.distinctive)
        return found

    @property
    def weak(self) -> frozenset[str]:
        """Terms that count toward the gate only beside a subject term (generic, numbers)."""
        found = self._classes.get("weak")
        if found is None:
            found = self._classes["weak"] = gate_weak(self.terms, self.distinctive)
        return found

    @property
    def strong(self) -> frozenset[str]:
        """Terms that pass the gate on their own (S8.5)."""
        found = self._classes.get("strong")
        if found is None:
            lengths = {t: len(w) for t, w in self.typed.items()}
            found = strong_terms(self.terms, self.distinctive, self.ignored, self.weak, lengths)
            self._classes["strong"] = found
        return found

    @property
    def counting(self) -> frozenset[str]:
        """Terms that count toward the gate at all (what a ``reason`` lists)."""
        found = self._classes.get("counting")
        if found is None:
            found = self._classes["counting"] = frozenset(self.terms) - self.ignored
        return found

    def shown(self, term: str) -> str:
        """The term as the person typed it (lowercased)."""
        return self.typed.get(term, term)


def _has_inner_capital(typed: str) -> bool:
    """An uppercase letter after the first character, as typed (``AuthHandler``)."""
    return any(ch.isupper() for ch in typed[1:])


def parse_query(message: str) -> Query:
    """Trim the message and extract its distinct terms and distinctive terms.

    Works on the token matches directly: a pasted message can hold thousands of CJK bigrams.
    """
    text = message.strip()
    terms: dict[str, None] = {}
    typed: dict[str, str] = {}
    distinctive: set[str] = set()
    capitals: set[str] = set()
    marked: set[str] = set()
    size = len(text)
    pattern = query_re(text)
    for match in pattern.finditer(text):
        cjk, word = match.group(1), match.group(2)
        start, end = match.span()
        before = text[start - 1] if start > 0 else ""
        after = text[end] if end < size else ""
        # ``term.`` marks a dotted name (config.toml, errors.Is); a period that ends a
        # sentence ("run the tests.") is punctuation, not a mark of distinction.
        follows = text[end + 1] if end + 1 < size else ""
        dotted = after == "." and (follows.isalnum() or follows == "_")
        if word:
            lowered = word.lower()
            term = fold(lowered)
            terms.setdefault(term, None)
            typed.setdefault(term, lowered)
            if is_bare_number(lowered):
                # A bare number is an identifier only when typed as one (#6928).
                if before == "#":
                    distinctive.add(term)
            elif (
                before == "#"
                or dotted
                or "_" in word
                or any(ch.isdigit() for ch in word)
            ):
                distinctive.add(term)
                marked.add(term)
            elif _has_inner_capital(word):
                distinctive.add(term)
                if word.isupper():
                    capitals.add(term)
                else:
                    marked.add(term)
            continue
        grams = cjk_terms(cjk)
        for gram in grams:
            terms.setdefault(gram, None)
        # Only the run's edges touch the marker characters.
        if before == "#":
            distinctive.add(grams[0])
        if dotted:
            distinctive.add(grams[-1])
    return Query(
        text=text,
        terms=tuple(terms),
        distinctive=frozenset(distinctive),
        typed=typed,
        acronyms=frozenset(capitals - marked),
    )


def suppression(message: str) -> str | None:
    """The S8.2 reason a message never triggers recall, or ``None``."""
    text = message.strip()
    if not any(ch.isalnum() for ch in text):
        return NO_TERMS
    if _WS.sub(" ", text.lower()) in GENERIC_TURNS:
        return GENERIC
    return None
