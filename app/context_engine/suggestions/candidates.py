"""Memory candidates from user statements holding a marker (S11.3; rules in decisions.md)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import InvalidName
from ..facts.model import FactType, one_line
from ..paths import slugify
from ..policy.sensitive import scan_text
from .model import MemoryCandidate, UserTurn
from .similarity import CoverageIndex, similar_tokens, tokens
from .text import CJK_MARKERS, marked_sentences, sentences, shorten, stable_hash, statement_key
from .words import word_set

MAX_MEMORIES = 6
MIN_CHARS, MAX_CHARS = 8, 420
EVIDENCE_CHARS = 160
MAX_EVIDENCE = 5
MAX_CLUSTERS = 256  # distinct statements kept for ranking; later ones only add evidence
NAME_CHARS = 48


def _phrases(pattern: str) -> re.Pattern[str]:
    """A case-blind pattern of words and phrases."""
    return re.compile(pattern, re.IGNORECASE)


# A question, not a rule. "Can you always…" is a request and "When you…, always…" a rule,
# so only these openers count.
_QUESTION = _phrases(
    r"[?？吗]\s*[。.]?$|^(?:why|how|what|which|who|is|are|was|were|does|did|should (?:we|i)|"
    r"do (?:you|we|i|they))\b|^(?:为什么|怎么|是否|能不能)",
)
# "It always seems to spin": a report about the code, unless it says what should be.
_OBSERVATION = _phrases(
    r"^(?:it|it's|this|that|there|he|she|they)\b(?!.*\b(?:should|must|needs? to|has to|have to)\b)",
)
_CODEY = re.compile(r"[{}();=<>\[\]|`]")

_URL = _phrases(r"https?://|\bwww\.")
_REFERENCE = _phrases(
    r"\b(see|docs? (?:are|is|live|lives) (?:at|in)|documented (?:at|in)|tracked in|dashboard|"
    r"runbook|wiki|ticket|jira|linear|confluence|(?:is|are|lives?|located|hosted) at)\b|"
    r"\b[\w-]+(?:\.[\w-]+)+:\d{2,5}\b|文档在|参见|见文档|看板",
)
_USER = _phrases(
    r"^(?:i|i'm|i am|my|as a)\b|\bi (?:prefer|like|usually|always|never|am|work|use)\b|"
    r"我(?:是|喜欢|更喜欢|偏好|习惯|通常|一般)|我的",
)
_PROJECT = _phrases(
    r"\b(?:this|the|our) (?:project|repo|repository|codebase|service|app|package|team)\b|"
    r"\b(?:we|our|convention|conventions|rule|rules)\b|项目|仓库|代码库|规则|约定|团队",
)
_IMPERATIVE = _phrases(
    r"\b(?:you|please|don't|do not|make sure)\b|^(?:always|never)\b|请|你|不要|别|务必",
)


def infer_type(statement: str) -> FactType:
    """reference > user > project > feedback (the order and cues are in decisions.md)."""
    if _URL.search(statement) or _REFERENCE.search(statement):
        return "reference"
    if _USER.search(statement) and not _IMPERATIVE.search(statement):
        return "user"
    if _PROJECT.search(statement):
        return "project"
    if not _IMPERATIVE.search(statement) and re.search(r"\bby default\b|默认", statement, re.I):
        return "project"  # a description of how the project behaves, not an instruction
    return "feedback"


def is_statement(sentence: str) -> bool:
    """One-line, 8–420 characters, not a question, not an observation, not code."""
    if not MIN_CHARS <= len(sentence) <= MAX_CHARS:
        return False
    if _QUESTION.search(sentence) or _OBSERVATION.search(sentence):
        return False
    return len(_CODEY.findall(sentence)) * 10 <= len(sentence)


# Openers that carry no meaning in a name ("Remember that …", "From now on, …", "请…").
_NAME_FILLER = _phrases(
    r"^(?:(?:please|remember|note|keep in mind|from now on|going forward|also)\b(?: that)?"
    r"[\s,:;—-]*)+|^(?:记住|请记住|请注意|注意|请)[\s:：，,]*",
)


# Words a name does without: the markers themselves, function words, politeness.
_NAME_SKIP = word_set(
    "a an the and or of to in on at for from with by as is are be been was were it its this "
    "that these those there we our us you your i me my they them their should must will would "
    "can could please always never remember prefer prefers preferred preferably preference "
    "default also just do does don't dont not no so then when whenever every each all any "
    "sure note keep mind now on going forward"
)
_CJK_NAME_SKIP = re.compile("|".join((*CJK_MARKERS, "请记住", "请", "一定", "务必", "都")))
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def name_words(statement: str) -> str:
    """What a statement is about, for its name: the content words in order (at most six),
    without the marker, filler openers and function words. ``Always use pnpm in this repo``
    → ``use pnpm repo``; ``以后提交信息都用中文写`` → ``提交信息用中文写``."""
    text = _CJK_NAME_SKIP.sub(" ", _NAME_FILLER.sub("", statement))
    kept = [w for w in _WORD.findall(text) if w.lower() not in _NAME_SKIP]
    return " ".join(kept[:6])


def candidate_name(statement: str, taken: set[str]) -> str:
    """A fact name from the statement's content words: stable for the same statement and
    store state."""
    slug = "suggestion"
    for text in (name_words(statement), _NAME_FILLER.sub("", statement), statement):
        try:
            slug = slugify(text)
            break
        except InvalidName:
            continue
    cut = slug
    if len(slug) > NAME_CHARS:
        cut = slug[:NAME_CHARS]
        if "-" in cut[NAME_CHARS // 2 :]:
            cut = cut[: cut.rindex("-")]
        cut = cut.rstrip("-")
    # A cut name could collide with another statement's: the hash keeps them apart.
    name = cut if cut == slug else f"{cut}-{stable_hash(statement_key(statement))[:6]}"
    if name in taken:
        name = f"{cut}-{stable_hash('name', statement_key(statement))[:8]}"
    return name


@dataclass(slots=True)
class _Cluster:
    statement: str
    key: str
    tokens: frozenset[str]
    reason: str
    explicit: bool
    order: int
    sessions: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)

    def add(self, session_id: str, statement: str) -> None:
        """Count one more session stating this (one evidence line per session)."""
        if session_id in self.sessions:
            return
        self.sessions.append(session_id)
        if len(self.evidence) < MAX_EVIDENCE:
            self.evidence.append(f"{session_id}: {shorten(statement, EVIDENCE_CHARS)}")


def _statements(turn: UserTurn) -> Iterable[tuple[str, str]]:
    """``(statement, reason)`` pairs a turn offers."""
    if turn.explicit:  # the whole note is one statement when it fits
        note = one_line(turn.text)
        parts = [note] if len(note) <= MAX_CHARS else list(sentences(turn.text))
        for part in parts:
            if MIN_CHARS <= len(part) <= MAX_CHARS and not scan_text(part):
                yield part, "explicit memory note"
        return
    for sentence, marker in marked_sentences(turn):
        if marker is not None and is_statement(sentence) and not scan_text(sentence):
            yield sentence, f'marker "{marker}"'


def memory_candidates(
    turns: Sequence[UserTurn],
    covered: CoverageIndex,
    taken_names: Iterable[str] = (),
    limit: int = MAX_MEMORIES,
) -> list[MemoryCandidate]:
    """Rank marker statements by how many sessions state them, newest first on ties."""
    clusters: list[_Cluster] = []
    by_key: dict[str, _Cluster | None] = {}  # None: covered by a fact or instruction
    for turn in turns:
        for statement, reason in _statements(turn):
            key = statement_key(statement)
            if not key:
                continue
            if key not in by_key:
                by_key[key] = _place(statement, key, reason, turn, clusters, covered)
            cluster = by_key[key]
            if cluster is not None:
                cluster.add(turn.session_id, statement)
    ranked = sorted(clusters, key=lambda c: (-len(c.sessions), not c.explicit, c.order))
    taken = set(taken_names)
    out: list[MemoryCandidate] = []
    for cluster in ranked[:limit]:
        name = candidate_name(cluster.statement, taken)
        taken.add(name)
        out.append(_candidate(cluster, name))
    return out


def _place(
    statement: str,
    key: str,
    reason: str,
    turn: UserTurn,
    clusters: list[_Cluster],
    covered: CoverageIndex,
) -> _Cluster | None:
    """The cluster a new distinct statement joins, a new one, or ``None`` when covered."""
    if covered.covers(statement):
        return None
    mine = tokens(statement)
    for cluster in clusters:
        if key in cluster.key or cluster.key in key or similar_tokens(mine, cluster.tokens):
            return cluster
    if len(clusters) >= MAX_CLUSTERS:
        return None
    cluster = _Cluster(statement, key, mine, reason, turn.explicit, len(clusters))
    clusters.append(cluster)
    return cluster


def _candidate(cluster: _Cluster, name: str) -> MemoryCandidate:
    statement = cluster.statement
    return MemoryCandidate(
        id=f"sug-mem-{stable_hash('memory', cluster.key)[:16]}",
        name=name,
        title=shorten(statement.rstrip("。.!！"), 72),
        description=shorten(statement, EVIDENCE_CHARS),
        type=infer_type(statement),
        scope="project",
        reason=cluster.reason,
        evidence=tuple(cluster.evidence),
        body=statement,
    )
