"""Words that score but never make a match "distinctive" for the recall gate (S8.5).

The gate's "≥ 2 distinct query terms occur in the fact" would otherwise let any real store
answer weak turns such as "fix the authentication issue in this large application" through
"the" + "in"; the design asks for distinctive lexical hits only (docs/decisions.md).
"""

from __future__ import annotations

_ENGLISH_FUNCTION_WORDS = (
    "a", "an", "the", "and", "or", "but", "if", "then", "else", "of", "to", "in", "on",
    "at", "by", "for", "from", "with", "without", "into", "onto", "over", "under",
    "about", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do",
    "does", "did", "done", "have", "has", "had", "it", "its", "this", "that", "these",
    "those", "there", "here", "i", "me", "my", "we", "us", "our", "you", "your", "he",
    "him", "his", "she", "her", "they", "them", "their", "what", "which", "who", "whom",
    "whose", "when", "where", "why", "how", "all", "any", "some", "no", "not", "can",
    "could", "would", "should", "will", "shall", "may", "might", "must", "just", "so",
    "too", "very", "also", "up", "out", "than", "now", "let", "lets", "s", "t", "via",
    "per",
)

# Words of a request that say nothing about its subject.
_REQUEST_WORDS = (
    "please", "help", "fix", "check", "look", "inspect", "make", "need", "want", "try",
    "thing", "things", "stuff", "issue", "issues", "problem", "problems", "something",
    "anything",
)

# Chinese function bigrams (S8.4 tokens).
_CHINESE_FUNCTION_BIGRAMS = (
    "如何", "怎么", "怎样", "什么", "为什", "一下", "这个", "那个", "这些",
    "那些", "可以", "我们", "你们", "帮我", "一个", "是否", "请帮",
)

GATE_STOPWORDS: frozenset[str] = frozenset(
    (*_ENGLISH_FUNCTION_WORDS, *_REQUEST_WORDS, *_CHINESE_FUNCTION_BIGRAMS)
)


def gate_ignored(terms: tuple[str, ...], distinctive: frozenset[str]) -> frozenset[str]:
    """Query terms that do not count toward the gate: stopwords not typed as distinctive."""
    return frozenset(t for t in terms if t in GATE_STOPWORDS and t not in distinctive)
