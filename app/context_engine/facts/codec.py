"""Fact file codec (S3): lenient, strict-YAML reader and byte-exact S3.1 writer.

Public API used by the store, migration, CLI and app:
``parse_fact``, ``render_fact``, ``new_id``, ``legacy_id``, ``format_timestamp``,
``parse_timestamp`` and ``ParsedFact``. Reading never writes (S3.4); every failure is a
``FactFormatError`` with a ``reason`` code and, where known, a 1-based line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode

from context_engine.errors import FactFormatError, InvalidName
from context_engine.facts import yaml_strict
from context_engine.facts.decoding import MAX_FACT_BYTES, decode_fact_bytes
from context_engine.facts.ids import is_valid_id, legacy_id, legacy_scope, new_id
from context_engine.facts.model import (
    FACT_TYPES,
    SCOPES,
    Fact,
    FactType,
    FileStamp,
    Scope,
    one_line,
)
from context_engine.facts.timestamps import format_timestamp, parse_timestamp
from context_engine.facts.yaml_strict import YamlError, YamlMapping
from context_engine.paths import slugify

__all__ = [
    "MAX_FACT_BYTES",
    "ParsedFact",
    "format_timestamp",
    "legacy_id",
    "new_id",
    "parse_fact",
    "parse_timestamp",
    "render_fact",
    "routing_type",
]

# Keys the codec owns; everything else is preserved in ``Fact.extra``.
_TOP_KEYS = frozenset(
    {"id", "revision", "created_at", "updated_at", "name", "title", "description", "metadata"}
)
_FLAT_LEGACY_KEYS = frozenset({"type", "scope", "fact_type"})
_META_KEYS = frozenset({"type", "fact_type", "scope"})
# Extra key holding unknown keys found inside ``metadata:`` (written back after ``scope``).
METADATA_EXTRA_KEY = "metadata"

_OPEN_FENCE = re.compile(r"---[ \t]*\r?(?:\n|\Z)")
_CLOSE_FENCE = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ParsedFact:
    """A fact as read, plus whether S5.1 migration must rewrite its file."""

    fact: Fact
    needs_upgrade: bool  # frontmatter lacks a non-empty id or a revision > 0 (S5.1)
    encoding: str = "utf-8"


def _split(text: str) -> tuple[str | None, str]:
    """(frontmatter text or None, body) — byte-preserving; an unclosed fence is all body."""
    opening = _OPEN_FENCE.match(text)
    if opening is None:
        return None, text
    closing = _CLOSE_FENCE.search(text, opening.end())
    if closing is None:
        return None, text
    front = text[opening.end() : closing.start()]
    rest = text[closing.end() :]
    if rest.startswith("\n"):
        rest = rest[1:]
    return front, rest


def _aware(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _line(node: Node) -> int | None:
    mark = node.start_mark
    # The YAML text starts on line 2 of the file (after the opening fence).
    return None if mark is None else mark.line + 2


def _text(node: Node | None, key: str) -> str | None:
    """A scalar field as its source text (``010`` stays ``010``); ``None`` when absent/null."""
    if node is None:
        return None
    if not isinstance(node, ScalarNode):
        raise FactFormatError("invalid_field", f"frontmatter {key!r} must be a scalar", _line(node))
    if node.tag == yaml_strict.NULL_TAG:
        return None
    return str(node.value)


def _revision(node: Node | None) -> int | None:
    text = _text(node, "revision")
    if text is None or text.strip() == "":
        return None
    assert node is not None
    stripped = text.strip()
    if re.fullmatch(r"[-+]?[0-9]{1,18}", stripped):
        return int(stripped, 10)
    raise FactFormatError("invalid_revision", f"revision {text!r} is not an integer", _line(node))


def _mapping(node: Node | None) -> dict[str, Node]:
    if node is None:
        return {}
    if isinstance(node, ScalarNode) and node.tag == yaml_strict.NULL_TAG:
        return {}
    if not isinstance(node, MappingNode):
        raise FactFormatError(
            "invalid_metadata", "frontmatter metadata must be a mapping", _line(node)
        )
    return {key: value for key, _, value in yaml_strict.mapping_entries(node)}


_TYPES: dict[str, FactType] = {t: t for t in FACT_TYPES}
_SCOPES: dict[str, Scope] = {s: s for s in SCOPES}


def _fact_type(meta: dict[str, Node], top: dict[str, Node]) -> FactType:
    """The real type: a valid fact_type wins, then type; unknown reads as project (S3.4)."""
    for source in (meta, top):
        value = _text(source.get("fact_type"), "fact_type")
        if value is not None and value.strip() in _TYPES:
            return _TYPES[value.strip()]
    # Nested metadata wins over the old flat key when both are present.
    raw = _text(meta.get("type"), "type") if "type" in meta else _text(top.get("type"), "type")
    return _TYPES.get((raw or "").strip(), "project")


def _scope(meta: dict[str, Node], top: dict[str, Node]) -> Scope | None:
    """The declared valid scope (nested first, then flat), else None."""
    for source in (meta, top):
        value = _text(source.get("scope"), "scope")
        if value is not None and value.strip() in _SCOPES:
            return _SCOPES[value.strip()]
    return None


def _timestamp(node: Node | None, key: str, fallback: datetime) -> datetime:
    text = _text(node, key)
    parsed = None if text is None else parse_timestamp(text)
    return fallback if parsed is None else parsed


def _extras(
    top_nodes: list[tuple[str, Node]], meta: dict[str, Node]
) -> tuple[tuple[str, object], ...]:
    extras: list[tuple[str, object]] = []
    for key, node in top_nodes:
        if key not in _TOP_KEYS and key not in _FLAT_LEGACY_KEYS:
            extras.append((key, yaml_strict.construct(node)))
    unknown_meta = [(k, yaml_strict.construct(v)) for k, v in meta.items() if k not in _META_KEYS]
    if unknown_meta:
        extras.append((METADATA_EXTRA_KEY, YamlMapping(unknown_meta)))
    return tuple(extras)


def _name(raw: str | None, path: Path, node: Node | None) -> str:
    candidate = raw.strip() if raw is not None and raw.strip() else path.stem
    try:
        return slugify(candidate)
    except InvalidName as exc:
        line = None if node is None else _line(node)
        raise FactFormatError("invalid_name", f"{exc.message} (name {candidate!r})", line) from None


def _build(
    front: str | None,
    body: str,
    path: Path,
    store_scope: Scope,
    mtime: datetime,
    stamp: FileStamp | None,
    encoding: str,
) -> ParsedFact:
    top_nodes: list[tuple[str, Node]] = []
    if front is not None and front.strip():
        try:
            root = yaml_strict.compose(front, line_offset=1)
            if root is not None and not (
                isinstance(root, ScalarNode) and root.tag == yaml_strict.NULL_TAG
            ):
                if not isinstance(root, MappingNode):
                    raise FactFormatError(
                        "not_a_mapping", "frontmatter is not a YAML mapping", _line(root)
                    )
                top_nodes = [(key, value) for key, _, value in yaml_strict.mapping_entries(root)]
        except YamlError as exc:
            raise FactFormatError(exc.reason, exc.message, exc.line) from None
    top = dict(top_nodes)
    try:
        meta = _mapping(top.get("metadata"))
        extras = _extras(top_nodes, meta)
    except YamlError as exc:
        line = exc.line + 1 if exc.line is not None else None
        raise FactFormatError(exc.reason, exc.message, line) from None
    fact_type = _fact_type(meta, top)
    declared_scope = _scope(meta, top)
    name = _name(_text(top.get("name"), "name"), path, top.get("name"))
    raw_id = _text(top.get("id"), "id")
    fact_id = raw_id.strip() if raw_id is not None else ""
    if fact_id and not is_valid_id(fact_id):
        raise FactFormatError(
            "invalid_id", f"id {fact_id!r} is not a valid memory id", _line(top["id"])
        )
    revision = _revision(top.get("revision"))
    needs_upgrade = not fact_id or revision is None or revision <= 0
    if not fact_id:
        fact_id = legacy_id(name, legacy_scope(declared_scope, fact_type))
    fallback = _aware(mtime)
    fact = Fact(
        id=fact_id,
        revision=revision if revision is not None and revision > 0 else 1,
        name=name,
        title=one_line(_text(top.get("title"), "title") or ""),
        description=one_line(_text(top.get("description"), "description") or ""),
        type=fact_type,
        scope=declared_scope or store_scope,
        body=body.strip(),
        created_at=_timestamp(top.get("created_at"), "created_at", fallback),
        updated_at=_timestamp(top.get("updated_at"), "updated_at", fallback),
        path=path,
        stamp=stamp,
        extra=extras,
    )
    return ParsedFact(fact=fact, needs_upgrade=needs_upgrade, encoding=encoding)


def _encoding_of(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if data.startswith(b"\xff\xfe"):
        return "utf-16-le"
    if data.startswith(b"\xfe\xff"):
        return "utf-16-be"
    return "utf-8"


def parse_fact(
    data: bytes, *, path: Path, store_scope: Scope, mtime: datetime, stamp: FileStamp | None = None
) -> ParsedFact:
    """Read one fact file's bytes leniently (S3.4); raise ``FactFormatError`` when unreadable."""
    try:
        text = decode_fact_bytes(data)
        encoding = _encoding_of(data)
        if encoding == "utf-8" and not _is_utf8(data):
            encoding = "gb18030"
        front, body = _split(text)
        return _build(front, body, path, store_scope, mtime, stamp, encoding)
    except FactFormatError:
        raise
    except RecursionError:
        raise FactFormatError("too_deep", "fact file nests too deeply") from None
    except Exception as exc:
        raise FactFormatError("unreadable", f"fact file cannot be parsed: {exc}") from None


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def routing_type(fact_type: FactType, scope: Scope) -> FactType:
    """The ``metadata.type`` routing hint older clients read (S3.3)."""
    if scope == "global":
        return fact_type if fact_type in ("user", "feedback") else "user"
    return fact_type if fact_type in ("project", "reference") else "project"


def render_fact(fact: Fact) -> bytes:
    """The byte-exact S3.1 file for ``fact`` (UTF-8, LF, no BOM).

    An empty body renders as nothing after the closing fence line.
    """
    scalar = yaml_strict.scalar
    lines = ["---"]
    if fact.id:
        lines.append(f"id: {scalar(fact.id)}")
    if fact.revision > 0:
        lines.append(f"revision: {fact.revision}")
    if fact.created_at is not None:
        lines.append(f'created_at: "{format_timestamp(fact.created_at)}"')
    if fact.updated_at is not None:
        lines.append(f'updated_at: "{format_timestamp(fact.updated_at)}"')
    lines.append(f"name: {scalar(fact.name)}")
    title = one_line(fact.title)
    if title:
        lines.append(f"title: {scalar(title)}")
    lines.append(f"description: {scalar(one_line(fact.description))}")
    lines.append("metadata:")
    route = routing_type(fact.type, fact.scope)
    lines.append(f"  type: {route}")
    if route != fact.type:
        lines.append(f"  fact_type: {fact.type}")
    lines.append(f"  scope: {fact.scope}")
    top_extras: list[tuple[str, object]] = []
    for key, value in fact.extra:
        if key == METADATA_EXTRA_KEY and isinstance(value, YamlMapping | dict):
            items = value.items() if isinstance(value, dict) else value
            for sub_key, sub_value in items:
                if sub_key not in _META_KEYS:
                    lines.extend(yaml_strict.dump_value(str(sub_key), sub_value, "  "))
        elif key not in _TOP_KEYS and key not in _FLAT_LEGACY_KEYS:
            top_extras.append((key, value))
    for key, value in top_extras:
        lines.extend(yaml_strict.dump_value(key, value))
    lines.append("---")
    body = fact.body.strip()
    text = "\n".join(lines) + "\n"
    if body:
        text += "\n" + body + "\n"
    return text.encode("utf-8")
