"""Fast reader for the exact frontmatter shape our writer produces (S3.1).

Opening a store parses every fact, and the strict YAML loader costs about 0.5 ms a file in
pure Python. This reader is one anchored regex over the writer's exact layout (key order,
plain tokens or double-quoted values with only the writer's escapes, canonical timestamps,
known types and scopes) and returns ``None`` for anything else, so the strict loader decides
every other file. Accepted text gives exactly what the strict loader gives (property-tested
in tests/engine/test_codec_fuzz.py).
"""

from __future__ import annotations

import re

from context_engine.facts.fields import FieldValue, FrontFields
from context_engine.facts.yaml_text import PLAIN_TOKEN, QUOTED_CLASS

# The escapes our writer emits (yaml_text.double_quoted), and nothing else.
_ESCAPE = r'\\(?:[0abtnvfreNLP"\\]|x[0-9A-F]{2}|u[0-9A-F]{4}|U[0-9A-F]{8})'
_ESCAPED = re.compile(_ESCAPE)
_SIMPLE_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    "N": "\x85",
    "L": "\u2028",
    "P": "\u2029",
    '"': '"',
    "\\": "\\",
}


def _unescape_one(match: re.Match[str]) -> str:
    code = match.group()[1:]
    simple = _SIMPLE_ESCAPES.get(code)
    return simple if simple is not None else chr(int(code[1:], 16))


# A value is the rest of its line (neither form admits a newline). The layout regex captures
# it cheaply; each captured value is then checked by one strict pattern, compiled once: writing
# the big Unicode classes into the layout four times made importing this module cost ~60 ms.
# The unrolled "[…]*(?:\\x[…]*)*" form keeps the engine from trying an alternation per character.
_VALUE = r"([^\n]*)"
_STRICT_VALUE = re.compile(rf'"[{QUOTED_CLASS}]*(?:{_ESCAPE}[{QUOTED_CLASS}]*)*"|{PLAIN_TOKEN}')
_TYPE = "(user|feedback|project|reference)"
# Timestamps exactly as written (timestamps.format_timestamp), captured without the quotes.
_STAMP = r'"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z)"'
_CANONICAL = re.compile(
    rf"(?:id: {_VALUE}\n)?"
    r"(?:revision: ([0-9]{1,18})\n)?"
    rf"(?:created_at: {_STAMP}\n)?"
    rf"(?:updated_at: {_STAMP}\n)?"
    rf"name: {_VALUE}\n"
    rf"(?:title: {_VALUE}\n)?"
    rf"description: {_VALUE}\n"
    r"metadata:\n"
    rf"  type: {_TYPE}\n"
    rf"(?:  fact_type: {_TYPE}\n)?"
    # Optional only for legacy files (scope from the directory); those take the general path.
    r"(?:  scope: (project|global)\n)?"
)
# Plain scalars the strict loader reads as null (absent).
_NULL_WORDS = frozenset({"~", "null"})

# Positions in the tuple ``match_canonical`` returns.
ID, REVISION, CREATED_AT, UPDATED_AT, NAME, TITLE, DESCRIPTION, TYPE, FACT_TYPE, SCOPE = range(10)
_TEXT_KEYS = (
    (ID, "id"),
    (NAME, "name"),
    (TITLE, "title"),
    (DESCRIPTION, "description"),
)


def match_canonical(front: str) -> list[str | None] | None:
    """The ten values of canonical frontmatter (see the index constants), else ``None``.

    Text values are unescaped; absent keys are ``None``. ``None`` overall also when a value
    is a null plain scalar (the strict reader decides that rare shape).
    """
    match = _CANONICAL.fullmatch(front)
    if match is None:
        return None
    values: list[str | None] = list(match.groups())
    for index, _ in _TEXT_KEYS:
        raw = values[index]
        if raw is None:
            continue
        if _STRICT_VALUE.fullmatch(raw) is None:
            return None
        if raw[0] == '"':
            inner = raw[1:-1]
            values[index] = _ESCAPED.sub(_unescape_one, inner) if "\\" in inner else inner
        elif raw in _NULL_WORDS:
            return None
    return values


def scan_canonical(front: str) -> FrontFields | None:
    """Fields of canonical frontmatter text, else ``None`` (use the strict loader)."""
    values = match_canonical(front)
    if values is None:
        return None
    top: dict[str, FieldValue] = {}
    for index, key in (
        *_TEXT_KEYS,
        (REVISION, "revision"),
        (CREATED_AT, "created_at"),
        (UPDATED_AT, "updated_at"),
    ):
        if values[index] is not None:
            top[key] = (values[index], None)
    meta: dict[str, FieldValue] = {"type": (values[TYPE], None)}
    if values[FACT_TYPE] is not None:
        meta["fact_type"] = (values[FACT_TYPE], None)
    if values[SCOPE] is not None:
        meta["scope"] = (values[SCOPE], None)
    return FrontFields(top=top, meta=meta)
