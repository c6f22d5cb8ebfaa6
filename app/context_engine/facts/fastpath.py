"""Fast reader for the exact frontmatter shape our writer produces (S3.1).

Opening a store parses every fact, and the strict YAML loader costs about 0.5 ms a file in
pure Python. This reader is one anchored regex over the writer's exact layout (key order,
plain tokens or escape-free double-quoted values, known types and scopes) and returns
``None`` for anything else, so the strict loader decides every other file. Accepted text
gives exactly the fields the strict loader gives (property-tested in test_codec_fastpath).
"""

from __future__ import annotations

import re

from context_engine.facts.fields import FieldValue, FrontFields
from context_engine.facts.yaml_strict import PLAIN_TOKEN, QUOTED_CLASS

# The escapes our writer emits (yaml_strict.double_quoted), and nothing else.
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


def _value(name: str) -> str:
    quoted = rf"(?:[{QUOTED_CLASS}]|{_ESCAPE})*"
    return rf'(?:"(?P<q_{name}>{quoted})"|(?P<p_{name}>{PLAIN_TOKEN}))'


_TYPE = "user|feedback|project|reference"
_CANONICAL = re.compile(
    rf"(?:id: {_value('id')}\n)?"
    r"(?:revision: (?P<revision>[0-9]{1,18})\n)?"
    rf"(?:created_at: {_value('created_at')}\n)?"
    rf"(?:updated_at: {_value('updated_at')}\n)?"
    rf"name: {_value('name')}\n"
    rf"(?:title: {_value('title')}\n)?"
    rf"description: {_value('description')}\n"
    r"metadata:\n"
    rf"  type: (?P<type>{_TYPE})\n"
    rf"(?:  fact_type: (?P<fact_type>{_TYPE})\n)?"
    r"  scope: (?P<scope>project|global)\n"
)
_TEXT_KEYS = ("id", "created_at", "updated_at", "name", "title", "description")
# Plain scalars the strict loader reads as null (absent).
_NULL_WORDS = frozenset({"~", "null"})


def scan_canonical(front: str) -> FrontFields | None:
    """Fields of canonical frontmatter text, else ``None`` (use the strict loader)."""
    match = _CANONICAL.fullmatch(front)
    if match is None:
        return None
    groups = match.groupdict()
    top: dict[str, FieldValue] = {}
    for key in _TEXT_KEYS:
        quoted = groups[f"q_{key}"]
        if quoted is not None:
            if "\\" in quoted:
                quoted = _ESCAPED.sub(_unescape_one, quoted)
            top[key] = (quoted, None)
            continue
        plain = groups[f"p_{key}"]
        if plain is not None:
            if plain in _NULL_WORDS:
                return None
            top[key] = (plain, None)
    if groups["revision"] is not None:
        top["revision"] = (groups["revision"], None)
    meta: dict[str, FieldValue] = {"type": (groups["type"], None), "scope": (groups["scope"], None)}
    if groups["fact_type"] is not None:
        meta["fact_type"] = (groups["fact_type"], None)
    return FrontFields(top=top, meta=meta)
