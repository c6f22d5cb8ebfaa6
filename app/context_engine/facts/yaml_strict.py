"""A strict YAML subset for frontmatter: load without surprises, dump so it reads back (S3).

Loading (RELIABILITY §4): a ``yaml.SafeLoader`` subclass that rejects anchors and aliases,
explicit tags other than ``!!str``, nesting deeper than ``MAX_DEPTH``; resolves only
YAML-1.2-core-like scalars (decimal ints, ``true``/``false``, ``null``/``~``/empty, floats with
a dot or exponent) and never timestamps, sexagesimals, octal or ``yes``/``no``. Construction is
our own (duplicate and non-string keys are errors). Every failure is a ``YamlError`` with a
reason code and a 1-based line.

Dumping: ``scalar()`` writes a string plain only when every YAML reader we know of (PyYAML's
1.1 resolver, this loader, YAML 1.2 core) reads it back as the same string; otherwise it is
double-quoted with escapes. Non-ASCII printable text (CJK) stays raw.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml
from yaml.events import AliasEvent, Event, NodeEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

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
_ALLOWED_EXPLICIT_TAGS = frozenset({"!", STR_TAG})


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


def _line(node_or_event: Node | Event) -> int | None:
    mark = node_or_event.start_mark
    return None if mark is None else mark.line + 1


class StrictLoader(yaml.SafeLoader):
    """SafeLoader with anchors, aliases, foreign tags and deep nesting refused at compose time."""

    # Our own implicit resolvers only: nothing inherited from YAML 1.1.
    yaml_implicit_resolvers = {}  # noqa: RUF012 - PyYAML's own class table

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        """Compose one node, refusing aliases, anchors, foreign tags and excess depth."""
        event = self.peek_event()  # type: ignore[no-untyped-call]  # reason: PyYAML stubs leave it untyped
        if isinstance(event, AliasEvent):
            raise YamlError("alias_forbidden", "YAML aliases are not allowed", _line(event))
        if isinstance(event, NodeEvent) and event.anchor is not None:
            raise YamlError("alias_forbidden", "YAML anchors are not allowed", _line(event))
        tag = getattr(event, "tag", None)
        if tag is not None and tag not in _ALLOWED_EXPLICIT_TAGS:
            raise YamlError("tag_forbidden", f"YAML tag {tag!r} is not allowed", _line(event))
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise YamlError("too_deep", f"frontmatter nests deeper than {MAX_DEPTH}", _line(event))
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        return node


def _add(tag: str, pattern: str, first: str) -> None:
    # PyYAML calls regexp.match(): anchor both ends so "12:30" is not read as 12.
    StrictLoader.add_implicit_resolver(tag, re.compile(f"(?:{pattern})\\Z"), list(first))


_add(BOOL_TAG, r"true|false", "tf")
_add(INT_TAG, r"[-+]?[0-9]+", "-+0123456789")
_add(
    FLOAT_TAG,
    r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][-+]?[0-9]+)?|[-+]?\.inf|\.nan",
    "-+.0123456789",
)
_add(NULL_TAG, r"~|null|", ["~", "n", ""])  # type: ignore[arg-type]  # reason: "" (an empty value) is a valid first character here; the stubs want str


def _scalar_value(node: ScalarNode) -> object:
    tag = node.tag
    text = node.value
    if tag == STR_TAG:
        return text
    if tag == INT_TAG:
        return int(text, 10)
    if tag == BOOL_TAG:
        return text == "true"
    if tag == NULL_TAG:
        return None
    if tag == FLOAT_TAG:
        # YAML spells infinity and NaN ".inf" / ".nan"; Python's float() wants "inf" / "nan".
        return float(text.replace(".inf", "inf").replace(".nan", "nan"))
    raise YamlError("tag_forbidden", f"YAML tag {tag!r} is not allowed", _line(node))


def construct(node: Node) -> object:
    """Build plain Python values: str, int, float, bool, None, tuple, ``YamlMapping``."""
    if isinstance(node, ScalarNode):
        return _scalar_value(node)
    if isinstance(node, SequenceNode):
        return tuple(construct(child) for child in node.value)
    if isinstance(node, MappingNode):
        return YamlMapping((key, construct(value)) for key, _, value in mapping_entries(node))
    raise YamlError("yaml_syntax", "unexpected YAML node", _line(node))


def mapping_entries(node: MappingNode) -> Iterator[tuple[str, ScalarNode, Node]]:
    """(key, key node, value node) of a mapping; duplicate or non-string keys are errors."""
    seen: set[str] = set()
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.tag != STR_TAG:
            raise YamlError("non_string_key", "frontmatter keys must be strings", _line(key_node))
        key = key_node.value
        if key in seen:
            raise YamlError("duplicate_key", f"duplicate frontmatter key {key!r}", _line(key_node))
        seen.add(key)
        yield key, key_node, value_node


def compose(text: str, line_offset: int = 0) -> Node | None:
    """Compose one YAML document with ``StrictLoader``; ``None`` for an empty document.

    ``line_offset`` is added to reported lines (the frontmatter starts after the fence).
    """
    loader = StrictLoader(text)
    try:
        return loader.get_single_node()
    except YamlError as exc:
        if exc.line is not None:
            exc.line += line_offset
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = None if mark is None else mark.line + 1 + line_offset
        raise YamlError("yaml_syntax", f"YAML syntax error: {exc.problem or exc}", line) from exc
    except yaml.YAMLError as exc:
        raise YamlError("yaml_syntax", f"YAML error: {exc}", None) from exc
    except RecursionError as exc:
        raise YamlError("too_deep", "frontmatter nests too deeply", None) from exc
    finally:
        loader.dispose()


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
# LS, PS), not the BOM, not a surrogate or non-character.
PRINTABLE_CLASS = (
    r"\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"
)
# The same without ``#`` and ``:`` (so no comment and no mapping indicator can start inside).
_PLAIN_BODY_CLASS = PRINTABLE_CLASS.replace(r"\x20-\x7e", r"\x20-\x22\x24-\x39\x3b-\x7e")
# The same without ``"`` and ``\`` (double-quoted text that needs no escapes).
QUOTED_CLASS = PRINTABLE_CLASS.replace(r"\x20-\x7e", r"\x20\x21\x23-\x5b\x5d-\x7e")
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
