"""A strict YAML subset for frontmatter: load without surprises, dump so it reads back (S3).

Loading (RELIABILITY §4): a ``yaml.SafeLoader`` subclass that rejects anchors and aliases,
explicit tags other than ``!!str``, nesting deeper than ``MAX_DEPTH``; resolves only
YAML-1.2-core-like scalars (decimal ints, ``true``/``false``, ``null``/``~``/empty, floats with
a dot or exponent) and never timestamps, sexagesimals, octal or ``yes``/``no``. Construction is
our own (duplicate and non-string keys are errors). Every failure is a ``YamlError`` with a
reason code and a 1-based line.

Dumping, errors and values live in ``yaml_text`` (no PyYAML); they are re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml
from yaml.events import AliasEvent, Event, NodeEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .yaml_text import (  # noqa: F401  # reason: re-exported, the one place they were
    BOOL_TAG,
    FLOAT_TAG,
    INT_TAG,
    MAP_TAG,
    MAX_DEPTH,
    NULL_TAG,
    PLAIN_TOKEN,
    PRINTABLE_CLASS,
    QUOTED_CLASS,
    SEQ_TAG,
    STR_TAG,
    YamlError,
    YamlMapping,
    double_quoted,
    dump_scalar,
    dump_value,
    is_plain_safe,
    resolves_as_string,
    scalar,
)

_ALLOWED_EXPLICIT_TAGS = frozenset({"!", STR_TAG})


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
