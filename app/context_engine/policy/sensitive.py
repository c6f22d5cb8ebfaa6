"""Sensitive-content detection for memory writes (S10.2, RELIABILITY §3).

A focused rule set of our own rather than detect-secrets (see docs/decisions.md): every rule
is a bounded regex (Python ``re`` backtracks, so no unbounded quantifier may nest), the input
is bounded, and the scanned copy has Unicode format (Cf) characters removed so a zero-width
character cannot split a token. Findings name the rule and the field, never the matched text.
Patterns are adapted from gitleaks (MIT) and detect-secrets (Apache-2.0).
"""

from __future__ import annotations

import math
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache

# Text beyond this many characters is not scanned; its presence is itself a finding, so an
# oversized write fails closed instead of hiding a secret past the limit.
MAX_SCAN_CHARS = 2_000_000
OVERSIZED_RULE = "oversized_input"

# Generic keyword assignments need a value that looks random (RELIABILITY §3: entropy ≥ 3.0)
# or mixes letters and digits (so ``password=hunter2`` is caught), and is not a reference.
KEYWORD_MIN_ENTROPY = 3.0
AWS_SUFFIX_MIN_ENTROPY = 2.5


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule that matched in one field; deliberately carries no matched text."""

    rule: str
    field: str


@dataclass(frozen=True, slots=True)
class Rule:
    """A named pattern with an optional check on the match (entropy, exclusions)."""

    id: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str], str], bool] | None = None
    lower: bool = False


def shannon_entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    if not text:
        return 0.0
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in Counter(text).values())


_REFERENCE = re.compile(
    r"""^(?:
        \$\{ | \{\{ | \$\( | %\( | \$[A-Za-z_]     # ${X} {{x}} $(cmd) %(x)s $X
      | <.*>$                                       # <your-token>
      | [*xX•.#_-]{3,}$                             # **** xxxx ....
      | (?:os\.)?environ | os\.getenv | getenv\( | process\.env | env\( | ENV\[
      | secrets\. | vault: | keyring\. | config\. | settings\.
      | (?:none|null|nil|true|false|undefined|redacted|\[redacted\]|required|optional)$
      | https?:// | file:// | ~/ | \./ | \.\./ | /    # a pointer; user:pass@ has its own rule
    )""",
    re.IGNORECASE | re.VERBOSE,
)


_LETTER = re.compile(r"[^\W\d_]")
_DIGIT = re.compile(r"\d")


def _starts_word(text: str, start: int) -> bool:
    """True when ``start`` is not preceded by a letter, digit or ``_`` (a ``\\b`` check)."""
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")


def _word(_match: re.Match[str], text: str) -> bool:
    """Accept a vendor token only at a word start (patterns begin with a literal for speed)."""
    return _starts_word(_match.string, _match.start())


def _keyword_value_is_secret(match: re.Match[str], original: str) -> bool:
    """Keep a keyword assignment only when its value is not a reference and looks random."""
    start, end = match.span("value")
    # Case-insensitive rules run on a lowercased copy; judge the value as written.
    value = original[start:end] if len(original) == len(match.string) else match.group("value")
    value = value.strip("\"'`,;")
    if len(value) < 4 or _REFERENCE.search(value):
        return False
    if len(value) >= 6 and _LETTER.search(value) and _DIGIT.search(value):
        return True
    return shannon_entropy(value) >= KEYWORD_MIN_ENTROPY


def _aws_key_is_random(match: re.Match[str], text: str) -> bool:
    """Skip placeholders such as ``AKIAXXXXXXXXXXXXXXXX``; documented samples stay flagged."""
    suffix = match.group(0)[4:]
    return _starts_word(text, match.start()) and shannon_entropy(suffix) >= AWS_SUFFIX_MIN_ENTROPY


def _sk_key(match: re.Match[str], text: str) -> bool:
    """``sk-``/``rk-`` keys: a word start and at least one digit (kebab names rarely have one)."""
    start = match.start()
    if start == 0 or text[start - 1] not in "sr" or not _starts_word(text, start - 1):
        return False
    return any(ch.isdigit() for ch in match.group(0)[2:])


def _stripe_key(match: re.Match[str], text: str) -> bool:
    """``sk_live_``/``rk_test_`` keys at a word start."""
    start = match.start()
    return start > 0 and text[start - 1] in "sr" and _starts_word(text, start - 1)


_LOCAL_PART = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")


def _email_is_address(match: re.Match[str], text: str) -> bool:
    """A local part before ``@``; not an scp-style remote (``git@host:path``) or ``://user@``."""
    at, end = match.span()
    start = at
    while start > 0 and at - start < 65 and text[start - 1] in _LOCAL_PART:
        start -= 1
    if start == at or at - start > 64:
        return False
    if text[max(0, start - 3) : start] == "://":
        return False
    scp_style = text[end : end + 1] == ":" and text[end + 1 : end + 2].strip() != ""
    return not scp_style


# ``tokenizer``/``tokenise`` and ``secretary``/``secretion`` are words, not credential keys.
_KEYWORDS = (
    r"api[_-]?key|access[_-]?key|private[_-]?key|secret(?!ar|ion)|token(?!i[sz])|password"
    r"|passwd|_pwd|authorization"
)

# Every pattern begins with a literal where possible: Python's ``re`` then jumps between
# occurrences of that literal instead of trying each position (8x faster on 1 MB inputs).
# ``lower=True`` rules run on a lowercased copy with lowercase patterns (case-insensitive
# matching would disable that jump).
RULES: tuple[Rule, ...] = (
    Rule("url_credentials", re.compile(r"://[^\s/:@?#]{1,128}:[^\s/@?#]{1,256}@")),
    Rule(
        "keyword_assignment",
        re.compile(
            r"(?:" + _KEYWORDS + r")[a-z0-9_.-]{0,40}"
            r"[\"']?[ \t]{0,4}(?::=|=>|=|:)[ \t]{0,4}"
            r"(?P<value>[\"'`]?[^\s\"'`,;]{1,256})"
        ),
        _keyword_value_is_secret,
        lower=True,
    ),
    Rule(
        "authorization_header",
        re.compile(
            r"authorization[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?:basic|bearer|token|digest)"
            r"[ \t]{1,4}[a-z0-9+/._~=-]{8,}"
        ),
        lower=True,
    ),
    Rule(
        "cookie_header",
        re.compile(r"cookie[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?[a-z0-9_.%-]{1,100}=[^\s;\"']{4,}"),
        lower=True,
    ),
    Rule(
        "session_cookie",
        # Suffixes of JSESSIONID, PHPSESSID, ASP.NET_SessionId, laravel_session, connect.sid …
        re.compile(r"(?:sessid|sessionid|session_id|_session|connect\.sid)=[a-z0-9%._+/=-]{16,}"),
        lower=True,
    ),
    Rule("bearer_token", re.compile(r"bearer[ \t]{1,4}[a-z0-9._~+/=-]{16,}"), _word, lower=True),
    Rule("sk_key", re.compile(r"k-[A-Za-z0-9_-]{20,256}"), _sk_key),
    Rule("stripe_key", re.compile(r"k_(?:live|test)_[A-Za-z0-9]{16,256}"), _stripe_key),
    Rule("github_token", re.compile(r"gh[pousr]_[A-Za-z0-9]{30,255}\b"), _word),
    Rule("github_pat", re.compile(r"github_pat_[A-Za-z0-9_]{22,255}"), _word),
    Rule("gitlab_token", re.compile(r"glpat-[A-Za-z0-9_-]{20,64}"), _word),
    Rule("slack_token", re.compile(r"xox[baprs]-[A-Za-z0-9-]{10,250}"), _word),
    Rule(
        "slack_webhook",
        re.compile(
            r"hooks\.slack\.com/services/T[A-Za-z0-9_]{6,32}/B[A-Za-z0-9_]{6,32}/[A-Za-z0-9_]{16,64}"
        ),
    ),
    Rule("aws_access_key_id", re.compile(r"A(?:KIA|SIA)[A-Z0-9]{16}\b"), _aws_key_is_random),
    Rule("google_api_key", re.compile(r"AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"), _word),
    Rule("npm_token", re.compile(r"npm_[A-Za-z0-9]{36}\b"), _word),
    Rule("pypi_token", re.compile(r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,512}"), _word),
    Rule("huggingface_token", re.compile(r"hf_[A-Za-z]{34}\b"), _word),
    Rule(
        "jwt",
        # The lookbehind after the literal rejects a start inside a longer run at once, so
        # ``eyJeyJ…`` is not rescanned from every occurrence (quadratic otherwise).
        re.compile(
            r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}"
            r"\.[A-Za-z0-9_-]{8,4096}"
        ),
    ),
    Rule("private_key", re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")),
    Rule(
        "email",
        # Matched from the ``@``; the local part is checked by hand. An alphabetic TLD
        # excludes npm ``@scope/pkg@1.2.3`` and docker ``@sha256:``.
        re.compile(r"@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b"),
        _email_is_address,
    ),
)

RULE_IDS: tuple[str, ...] = tuple(rule.id for rule in RULES)


@cache
def _format_char_table() -> dict[int, None]:
    """Translation table deleting every Unicode Cf character (built once, ~70 ms)."""
    return {
        cp: None for cp in range(0x80, sys.maxunicode + 1) if unicodedata.category(chr(cp)) == "Cf"
    }


def strip_format_chars(text: str) -> str:
    """A copy of ``text`` without Cf characters (zero-width, soft hyphen, bidi controls)."""
    if text.isascii():
        return text
    return text.translate(_format_char_table())


def scan_text(text: str, field: str = "text") -> tuple[Finding, ...]:
    """Findings in one field: at most one per rule, in rule order."""
    findings: list[Finding] = []
    if len(text) > MAX_SCAN_CHARS:
        findings.append(Finding(OVERSIZED_RULE, field))
        text = text[:MAX_SCAN_CHARS]
    cleaned = strip_format_chars(text)
    lowered = cleaned.lower()
    for rule in RULES:
        subject = lowered if rule.lower else cleaned
        for match in rule.pattern.finditer(subject):
            if rule.accept is None or rule.accept(match, cleaned if rule.lower else subject):
                findings.append(Finding(rule.id, field))
                break
    return tuple(findings)


def scan_fields(fields: Mapping[str, object]) -> tuple[Finding, ...]:
    """Scan every string value (nested mappings and lists too), field by field."""
    findings: list[Finding] = []
    for name, value in fields.items():
        for path, text in _strings(name, value, depth=0):
            findings.extend(scan_text(text, path))
    return tuple(findings)


def _strings(path: str, value: object, depth: int) -> Iterable[tuple[str, str]]:
    """Every string inside ``value`` with a dotted path; depth-bounded."""
    if depth > 8:
        return
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(f"{path}.{key}", item, depth + 1)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _strings(f"{path}[{index}]", item, depth + 1)


def rule_ids(findings: Iterable[Finding]) -> tuple[str, ...]:
    """Distinct rule ids in first-seen order (what a confirmation shows)."""
    seen: dict[str, None] = {}
    for finding in findings:
        seen.setdefault(finding.rule, None)
    return tuple(seen)
