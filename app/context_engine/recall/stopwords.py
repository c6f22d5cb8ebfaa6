"""Words that score but never make a match "distinctive" for the recall gate (S8.5).

The gate's "≥ 2 distinct query terms occur in the fact" would otherwise let any real store
answer weak turns such as "fix the authentication issue in this large application" through
"the" + "in"; the design asks for distinctive lexical hits only (docs/decisions.md).
"""

from __future__ import annotations

from .tokenize import fold

_ENGLISH_FUNCTION_WORDS = (
    "a", "an", "the", "and", "or", "but", "if", "then", "else", "of", "to", "in", "on", "at",
    "by", "for", "from", "with", "without", "into", "onto", "over", "under", "about", "as",
    "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "done",
    "have", "has", "had", "it", "its", "this", "that", "these", "those", "there", "here", "i",
    "me", "my", "we", "us", "our", "you", "your", "he", "him", "his", "she", "her", "they",
    "them", "their", "what", "which", "who", "whom", "whose", "when", "where", "why", "how",
    "all", "any", "some", "no", "not", "can", "could", "would", "should", "will", "shall",
    "may", "might", "must", "just", "so", "too", "very", "also", "up", "out", "than", "now",
    "let", "lets", "s", "t", "via", "per",
)

# Words of a request that say nothing about its subject.
_REQUEST_WORDS = (
    "please", "help", "fix", "check", "look", "inspect", "make", "need", "want", "try",
    "thing", "things", "stuff", "issue", "issues", "problem", "problems", "something",
    "anything",
)

# Chinese function bigrams (S8.4 tokens).
_CHINESE_FUNCTION_BIGRAMS = (
    "如何", "怎么", "怎样", "什么", "为什", "一下", "这个", "那个", "这些", "那些", "可以",
    "我们", "你们", "帮我", "一个", "是否", "请帮",
    # question words and connectors
    "哪里", "在哪", "哪个", "哪些", "多久", "多少", "应该", "需要", "能不", "不能", "是不",
    "还是", "时候", "的时", "之后", "以前", "然后", "因为", "所以", "但是", "如果", "或者",
    "已经", "现在", "有没", "没有", "要用", "用什", "么时", "么办",
)

# Words that name an activity every project has (running tests, starting locally, 测试,
# 排查问题): like stopwords they score but never count toward the gate.
_GENERIC_WORDS = (
    # routine development activity
    "run", "runs", "running", "rerun", "test", "tests", "testing", "start", "started",
    "starting", "stop", "build", "builds", "building", "work", "works", "working", "use",
    "using", "used", "add", "adding", "update", "updated", "change", "changes", "changed",
    "get", "set", "show", "find", "write", "read", "open", "create", "remove", "delete",
    "fail", "fails", "failed", "failing", "broken", "break", "happen", "happened", "happening",
    "explain", "tell", "know", "say", "said", "see", "seen", "going", "done", "refactor",
    "improve", "clean", "rename", "split",
    # the workspace itself and its generic parts
    "local", "locally", "code", "file", "files", "project", "repo", "app", "error", "errors",
    # vague evaluation, time and order
    "new", "old", "again", "still", "way", "ways", "right", "wrong", "good", "bad", "better",
    "best", "first", "last", "next", "time", "today", "yesterday", "step", "steps", "slow",
    "fast", "well", "like", "looks", "usual", "usually", "whole",
    # the commonest nouns of programming talk: every codebase has them
    "function", "functions", "variable", "variables", "method", "methods", "module", "modules",
    "value", "values", "setting", "settings", "option", "options", "default", "defaults",
    "machine", "page", "line", "lines", "thing", "name", "names", "number", "something",
    "everything", "anything", "part", "parts", "piece", "测试", "运行", "启动", "本地", "问题",
    "排查",
    "代码", "文件", "错误", "项目", "修改", "更新", "检查", "查看", "一遍", "一次", "现在",
    "还是", "正常", "失败",
)

GATE_STOPWORDS: frozenset[str] = frozenset(
    term
    for word in (*_ENGLISH_FUNCTION_WORDS, *_REQUEST_WORDS, *_CHINESE_FUNCTION_BIGRAMS)
    for term in (word, fold(word))
)

GENERIC_TERMS: frozenset[str] = (
    frozenset(term for word in _GENERIC_WORDS for term in (word, fold(word))) - GATE_STOPWORDS
)


def gate_ignored(terms: tuple[str, ...], distinctive: frozenset[str]) -> frozenset[str]:
    """Query terms that do not count toward the gate: stopwords, request words, generic
    activity words and one- or two-digit numbers, unless typed as distinctive (``#build``)."""
    return frozenset(
        t
        for t in terms
        if (t in GATE_STOPWORDS or t in GENERIC_TERMS or _small_number(t)) and t not in distinctive
    )


def _small_number(term: str) -> bool:
    """One or two digits: a quantity ("2 more tests", "30 seconds"), never an identifier."""
    return len(term) <= 2 and is_bare_number(term)


def is_bare_number(term: str) -> bool:
    """A token made of digits only (``2``, ``2024``, ``8080``)."""
    return term.isascii() and term.isdigit()


def gate_weak(terms: tuple[str, ...], distinctive: frozenset[str]) -> frozenset[str]:
    """Terms that count toward a match only beside a subject term: bare numbers (a number
    typed as ``#6928`` is a reference and stays distinctive)."""
    return frozenset(
        t for t in terms if is_bare_number(t) and not _small_number(t) and t not in distinctive
    )
