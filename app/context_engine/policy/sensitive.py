"""Sensitive-content detection for memory writes (S10.2, RELIABILITY §3).

A focused rule set of our own rather than detect-secrets (see docs/decisions.md): every rule
is a bounded regex (Python ``re`` backtracks, so no unbounded quantifier may nest), the input
is bounded, and the scanned copy has Unicode format (Cf) characters removed so a zero-width
character cannot split a token. Findings name the rule and the field, never the matched text.
The rules themselves are data: one row per format in ``secret_rules.py``, written from the
vendors' documented token formats, each with a positive and a negative fixture.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import NamedTuple

from ..records import record
from .secret_rules import PREFILTER_LONG_TEXTS, PREFILTERS, ROWS, RuleRow

# Text beyond this many characters is not scanned; its presence is itself a finding, so an
# oversized write fails closed instead of hiding a secret past the limit.
MAX_SCAN_CHARS = 2_000_000
OVERSIZED_RULE = "oversized_input"

# Generic keyword assignments need a value that looks random (RELIABILITY §3: entropy ≥ 3.0)
# or mixes letters and digits (so ``password=hunter2`` is caught), and is not a reference.
KEYWORD_MIN_ENTROPY = 3.0
AWS_SUFFIX_MIN_ENTROPY = 2.5


@record
class Finding:
    """One rule that matched in one field; deliberately carries no matched text."""

    rule: str
    field: str


class Rule(NamedTuple):
    """A row of the rule table: pattern plus the gate a match must also pass.

    The pattern is compiled on first use: a hook turn that redacts a short trace compiles only
    the few rules whose prefilter passed, not all forty (~10 ms per process otherwise).
    """

    id: str
    source: str
    accept: Callable[[re.Match[str], str], bool] | None = None
    lower: bool = False
    needles: tuple[str, ...] = ()  # one of these must be in the text, else the rule is skipped

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled once per process)."""
        return _compiled(self.source)

    def may_match(self, subject: str) -> bool:
        """The cheap prefilter: False only when the pattern cannot match ``subject``."""
        return not self.needles or any(needle in subject for needle in self.needles)


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


def _placeholder(match: re.Match[str], text: str) -> bool:
    """A vendor token at a word start that is not a run of one or two characters (``xxxx``)."""
    return _starts_word(text, match.start()) and shannon_entropy(match.group(0)) >= 2.0


def _word_entropy(match: re.Match[str], text: str) -> bool:
    """A hex-bodied token at a word start whose characters look random (not ``0000…``)."""
    return _starts_word(text, match.start()) and shannon_entropy(match.group(0)) >= 3.0


_B64URL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _discord_token(match: re.Match[str], text: str) -> bool:
    """The segment before the first dot is base64 of a numeric snowflake id (24–28 chars)."""
    import base64
    import binascii

    end = match.start()
    start = end
    while start > 0 and end - start < 29 and text[start - 1] in _B64URL_CHARS:
        start -= 1
    if not 24 <= end - start <= 28 or text[start] not in "MNO" or not _starts_word(text, start):
        return False
    head = text[start:end]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return 17 <= len(decoded) <= 20 and decoded.isdigit()


def _telegram_token(match: re.Match[str], text: str) -> bool:
    """``<5–16 digit bot id>:A…`` with the id at a word start; the secret part looks random."""
    start = match.start()
    digits = start
    while digits > 0 and start - digits < 17 and text[digits - 1].isdigit():
        digits -= 1
    if not 5 <= start - digits <= 16:
        return False
    # ``https://api.telegram.org/bot<token>/…`` glues the token to ``bot``.
    if not _starts_word(text, digits) and text[max(0, digits - 3) : digits] != "bot":
        return False
    return shannon_entropy(match.group(0)) >= 3.0


def _mailgun_key(match: re.Match[str], text: str) -> bool:
    """The 32 hex characters before ``-xxxxxxxx-xxxxxxxx``, at a word start."""
    start = match.start()
    head = text[max(0, start - 32) : start]
    if len(head) != 32 or any(ch not in "0123456789abcdef" for ch in head):
        return False
    tail = match.group(0)
    if not any(ch in "abcdef" for ch in tail):
        return False  # ``<hash>-20260701-00000001``: dates and counters, not key material
    return _starts_word(text, start - 32) and shannon_entropy(head) >= 3.0


def _netrc_tokens_end_in_entry(before: str) -> bool:
    """The words before ``password`` end in ``machine <host>`` or ``default``, then optional
    ``login <user>`` / ``account <x>`` pairs (the .netrc grammar)."""
    words = before[-300:].split()[-7:]
    for start in range(len(words) - 1, -1, -1):
        head = words[start]
        rest = words[start + 2 :] if head == "machine" else words[start + 1 :]
        if head not in ("machine", "default") or (head == "machine" and start + 1 >= len(words)):
            continue
        pairs_ok = len(rest) % 2 == 0 and all(
            rest[i] in ("login", "account") for i in range(0, len(rest), 2)
        )
        if pairs_ok:
            return True
    return False


_NETRC_KEYS = ("machine", "login", "account")
_NETRC_HEAD = re.compile(r"^[ \t]*(?:machine|default|login|account)(?:[ \t]|$)")


def _netrc_password(match: re.Match[str], text: str) -> bool:
    """``password`` as a .netrc token: after ``machine``/``login`` on its line, or on a line
    of its own under one; the value is not a reference."""
    start = match.start()
    # Look back at most 512 characters: a long line of ``password …`` stays linear.
    floor = max(0, start - 512)
    line_start = max(text.rfind("\n", floor, start) + 1, floor)
    before = text[line_start:start]
    if before.strip():
        if "machine" not in before and "default" not in before:
            return False  # the cheap common case: prose that says "password"
        last = before[-300:].rsplit(None, 2)[-2:]
        if last[-1] != "default" and (len(last) < 2 or last[0] not in _NETRC_KEYS):
            return False  # "… machine learning password reset": not a keyword-value pair
        if _REFERENCE.search(match.group("value")):
            return False
        # Same line: every token before ``password`` must be netrc grammar with a keyword.
        return _netrc_tokens_end_in_entry(before)
    previous_end = line_start - 1
    if previous_end <= 0:
        return False
    floor = max(0, previous_end - 512)
    previous = text[max(text.rfind("\n", floor, previous_end) + 1, floor) : previous_end]
    return bool(_NETRC_HEAD.match(previous)) and not _REFERENCE.search(match.group("value"))


GATES: dict[str, Callable[[re.Match[str], str], bool] | None] = {
    "none": None,
    "word": _word,
    "placeholder": _placeholder,
    "word_entropy": _word_entropy,
    "keyword_value": _keyword_value_is_secret,
    "email": _email_is_address,
    "aws": _aws_key_is_random,
    "sk": _sk_key,
    "stripe": _stripe_key,
    "discord": _discord_token,
    "telegram": _telegram_token,
    "mailgun": _mailgun_key,
    "netrc": _netrc_password,
}


@cache
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source)


def _compile(row: RuleRow) -> Rule:
    """One table row as a compiled rule."""
    return Rule(row.id, row.pattern, GATES[row.gate], row.lower, PREFILTERS.get(row.id, ()))


RULES: tuple[Rule, ...] = tuple(_compile(row) for row in ROWS)

# (needle, position in RULES) for the prefilter, split by the copy each rule reads.
_NEEDLES = tuple((n, i) for i, r in enumerate(RULES) if not r.lower for n in r.needles)
_LOWER_NEEDLES = tuple((n, i) for i, r in enumerate(RULES) if r.lower for n in r.needles)
_ALWAYS = frozenset(i for i, r in enumerate(RULES) if not r.needles)
_LONG_NEEDLES = tuple((n, i) for n, i in _NEEDLES if RULES[i].id in PREFILTER_LONG_TEXTS)
_LONG_LOWER_NEEDLES = tuple(
    (n, i) for n, i in _LOWER_NEEDLES if RULES[i].id in PREFILTER_LONG_TEXTS
)
_UNFILTERED_LONG = frozenset(
    i for i, r in enumerate(RULES) if not r.needles or r.id not in PREFILTER_LONG_TEXTS
)


# Above this size each rule's own literal search costs what its ``in`` prefilter would.
_PREFILTER_MAX = 16_384


def _candidates(cleaned: str, lowered: str) -> Sequence[Rule]:
    """The rules whose prefilter passes, in rule order (one ``in`` per needle).

    The prefilter saves per-rule overhead on the many short texts of a store; on long texts a
    rule's regex finds (or misses) its literal as fast as ``in`` would, so all rules run.
    """
    if len(cleaned) > _PREFILTER_MAX:
        chosen = set(_UNFILTERED_LONG)
        chosen.update(i for needle, i in _LONG_NEEDLES if needle in cleaned)
        chosen.update(i for needle, i in _LONG_LOWER_NEEDLES if needle in lowered)
        return [RULES[i] for i in sorted(chosen)]
    chosen = set(_ALWAYS)
    chosen.update(i for needle, i in _NEEDLES if needle in cleaned)
    chosen.update(i for needle, i in _LOWER_NEEDLES if needle in lowered)
    return [RULES[i] for i in sorted(chosen)]


RULE_IDS: tuple[str, ...] = tuple(rule.id for rule in RULES)


# Every Unicode Cf (format) character as of Unicode 15 (Python 3.11 ships 14; the 15.0
# additions U+13439–U+1343F are included). Written out because deriving the set scans all
# 1.1 million code points (~70 ms), once per hook process with a non-ASCII prompt; a test
# checks the running interpreter's Cf set is inside it.
FORMAT_CHARS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)
_FORMAT_RE = re.compile(f"[{FORMAT_CHARS}]+")


def strip_format_chars(text: str) -> str:
    """A copy of ``text`` without Cf characters (zero-width, soft hyphen, bidi controls)."""
    if text.isascii():
        return text
    return _FORMAT_RE.sub("", text)


def scan_text(text: str, field: str = "text") -> tuple[Finding, ...]:
    """Findings in one field: at most one per rule, in rule order."""
    findings: list[Finding] = []
    if len(text) > MAX_SCAN_CHARS:
        findings.append(Finding(OVERSIZED_RULE, field))
        text = text[:MAX_SCAN_CHARS]
    cleaned = strip_format_chars(text)
    lowered = cleaned.lower()
    for rule in _candidates(cleaned, lowered):
        subject = lowered if rule.lower else cleaned
        for match in rule.pattern.finditer(subject):
            if rule.accept is None or rule.accept(match, cleaned if rule.lower else subject):
                findings.append(Finding(rule.id, field))
                break
    return tuple(findings)


_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.%+-")


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow a match to the whole token around it (gates read a few characters outside)."""
    while start > 0 and text[start - 1] in _TOKEN_CHARS:
        start -= 1
    while end < len(text) and text[end] in _TOKEN_CHARS:
        end += 1
    return start, end


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[redacted:<rule>]`` (traces, S8.10).

    The result is built from the Cf-stripped copy (what the rules judged); text beyond the scan
    limit is dropped. When lowercasing changed the length, a lowercase rule's hit redacts the
    whole text rather than guess at the span.
    """
    if len(text) > MAX_SCAN_CHARS:
        text = text[:MAX_SCAN_CHARS]
    cleaned = strip_format_chars(text)
    lowered = cleaned.lower()
    aligned = len(lowered) == len(cleaned)
    spans: list[tuple[int, int, str]] = []
    for rule in _candidates(cleaned, lowered):
        subject = lowered if rule.lower else cleaned
        for match in rule.pattern.finditer(subject):
            if rule.accept is None or rule.accept(match, cleaned if rule.lower else subject):
                if rule.lower and not aligned:
                    return f"[redacted:{rule.id}]"
                spans.append((*_widen(cleaned, *match.span()), rule.id))
    if not spans:
        return cleaned
    spans.sort()
    out: list[str] = []
    position = 0
    for start, end, rule_id in spans:
        if end <= position:
            continue
        if start < position:  # overlapping hits: the earlier marker covers both
            position = end
            continue
        out.append(cleaned[position:start])
        out.append(f"[redacted:{rule_id}]")
        position = end
    out.append(cleaned[position:])
    return "".join(out)


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
