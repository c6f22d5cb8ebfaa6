"""The PyYAML-free side of the frontmatter YAML subset: values, errors, and the dumper (S3).

Dumping: ``scalar()`` writes a string plain only when every YAML reader we know of (PyYAML's
1.1 resolver, the strict loader, YAML 1.2 core) reads it back as the same string; otherwise it
is double-quoted with escapes. Non-ASCII printable text (CJK) stays raw.

Kept apart from ``yaml_strict`` (the loader) so that writing a fact, and reading one in the
canonical layout (``fastpath``), never imports PyYAML (tens of ms in every process).
"""

from __future__ import annotations

import re

MAX_DEPTH = 20

STR_TAG = "tag:yaml.org,2002:str"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
SEQ_TAG = "tag:yaml.org,2002:seq"
MAP_TAG = "tag:yaml.org,2002:map"
# "!" is the non-specific tag of quoted scalars; "!!str" is harmless. Everything else
# (``!!python/object/apply``, ``!!binary``, ``!custom`` …) is refused before construction.


class YamlError(Exception):
    """A frontmatter document that the strict loader refuses; ``reason`` is a short code."""

    def __init__(self, reason: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.line = line


class YamlMapping(tuple[tuple[str, object], ...]):
    """An immutable, ordered, hashable YAML mapping (keeps ``Fact`` hashable)."""

    __slots__ = ()

    def get(self, key: str) -> object:
        """The value for ``key``, else ``None``."""
        for k, v in self:
            if k == key:
                return v
        return None

    def keys(self) -> list[str]:
        """The keys in document order."""
        return [k for k, _ in self]


# ---------------------------------------------------------------- dumping

# Anything PyYAML 1.1, YAML 1.2 core or our loader might read as non-string.
_SPECIAL_WORDS = frozenset(
    "y Y yes Yes YES n N no No NO true True TRUE false False FALSE "  # noqa: SIM905
    "on On ON off Off OFF null Null NULL ~ = <<".split()
)
_NUMBER_LIKE = re.compile(
    r"[-+]?(?:"
    r"0[xXoObB][0-9a-fA-F_]*"
    r"|[0-9][0-9_]*(?::[0-9_]+)*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?"
    r"|\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?"
    r"|\.(?:inf|Inf|INF|nan|NaN|NAN)"
    r")"
)
_DATE_LIKE = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?", re.DOTALL)
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_ESCAPES = {
    "\0": "\\0",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}


# Characters a YAML reader accepts in a plain scalar: printable, not a YAML line break (NEL,
# LS, PS), not the BOM, not a surrogate or non-character — that is \x20-\x7e, \xa0-\u2027,
# \u202a-\ud7ff, \ue000-\ufefe, \uff00-\ufffd and \U00010000-\U0010ffff, written as its
# complement: ``re`` fills a 64k-entry map for each wide range it is given, so the listed form
# cost every process that reads or writes a fact ~3 ms per class to compile (issue 14). Each
# class goes inside ``[...]`` on its own (the leading ``^`` negates it).
_NOT_PRINTABLE = r"\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff"
PRINTABLE_CLASS = rf"^{_NOT_PRINTABLE}"
# The same without ``#`` and ``:`` (so no comment and no mapping indicator can start inside).
_PLAIN_BODY_CLASS = rf"^\x23\x3a{_NOT_PRINTABLE}"
# The same without ``"`` and ``\`` (double-quoted text that needs no escapes).
QUOTED_CLASS = rf"^\x22\x5c{_NOT_PRINTABLE}"
# A plain token: no leading indicator or space, no trailing space, no ``:``/``#`` anywhere.
PLAIN_TOKEN = rf"(?![-?,\[\]{{}}&*!|>'\"%@` ])[{_PLAIN_BODY_CLASS}]+(?<! )"
_PLAIN_TOKEN = re.compile(PLAIN_TOKEN)
_PRINTABLE = re.compile(f"[{PRINTABLE_CLASS}]")


def _plain_char(ch: str) -> bool:
    return _PRINTABLE.fullmatch(ch) is not None


def resolves_as_string(text: str) -> bool:
    """True when no YAML reader we know of resolves plain ``text`` to a non-string."""
    if text in _SPECIAL_WORDS:
        return False
    if text[:1] in "+.0123456789":
        return _NUMBER_LIKE.fullmatch(text) is None and _DATE_LIKE.fullmatch(text) is None
    return True


def is_plain_safe(text: str) -> bool:
    """True when ``text`` may be written as a plain scalar and read back unchanged."""
    return _PLAIN_TOKEN.fullmatch(text) is not None and resolves_as_string(text)


def _escape_char(ch: str) -> str:
    known = _ESCAPES.get(ch)
    if known is not None:
        return known
    if _plain_char(ch):
        return ch
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02X}"
    if code <= 0xFFFF:
        return f"\\u{code:04X}"
    return f"\\U{code:08X}"


def double_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar (non-ASCII printable text stays raw)."""
    return '"' + "".join(_escape_char(ch) for ch in text) + '"'


def scalar(text: str) -> str:
    """``text`` plain when that reads back unchanged, else double-quoted."""
    return text if is_plain_safe(text) else double_quoted(text)


def dump_value(key: str, value: object, indent: str = "") -> list[str]:
    """Block-style lines for ``key: value`` (extras): scalars, sequences, mappings."""
    head = f"{indent}{scalar(key)}:"
    if isinstance(value, (YamlMapping, dict)):
        items = list(value.items()) if isinstance(value, dict) else list(value)
        if not items:
            return [head + " {}"]
        lines = [head]
        for sub_key, sub_value in items:
            lines.extend(dump_value(str(sub_key), sub_value, indent + "  "))
        return lines
    if isinstance(value, (tuple, list)):
        if not value:
            return [head + " []"]
        lines = [head]
        for item in value:
            lines.extend(_dump_item(item, indent + "  "))
        return lines
    return [f"{head} {dump_scalar(value)}"]


def _dump_item(item: object, indent: str) -> list[str]:
    if isinstance(item, (YamlMapping, dict, tuple, list)) and item:
        if isinstance(item, (YamlMapping, dict)):
            pairs = list(item.items()) if isinstance(item, dict) else list(item)
            lines: list[str] = []
            for n, (sub_key, sub_value) in enumerate(pairs):
                sub = dump_value(str(sub_key), sub_value, indent + "  ")
                if n == 0:
                    sub[0] = indent + "- " + sub[0][len(indent) + 2 :]
                lines.extend(sub)
            return lines
        nested: list[str] = []
        for n, sub_item in enumerate(item):
            sub = _dump_item(sub_item, indent + "  ")
            if n == 0:
                sub[0] = indent + "- " + sub[0][len(indent) + 2 :]
            nested.extend(sub)
        return nested
    if isinstance(item, (YamlMapping, dict)):
        return [indent + "- {}"]
    if isinstance(item, (tuple, list)):
        return [indent + "- []"]
    return [f"{indent}- {dump_scalar(item)}"]


def dump_scalar(value: object) -> str:
    """One scalar value as YAML text that this loader reads back as the same value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    return scalar(str(value))
