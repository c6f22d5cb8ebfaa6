"""Fact file codec (S3): lenient reader over a strict YAML subset, byte-exact S3.1 writer.

Public API used by the store, migration, CLI and app: ``parse_fact``, ``render_fact``,
``new_id``, ``legacy_id``, ``format_timestamp``, ``parse_timestamp`` and ``ParsedFact``.
Reading never writes (S3.4); every failure is a ``FactFormatError`` with a ``reason`` code
and, where known, a 1-based file line. Files in the writer's exact shape take a fast reader
(``fastpath``); everything else goes through the strict YAML loader (``yaml_strict``).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from context_engine.errors import FactFormatError, InvalidName
from context_engine.facts import yaml_text
from context_engine.facts.decoding import MAX_FACT_BYTES, decode_fact
from context_engine.facts.fastpath import match_canonical, scan_canonical
from context_engine.facts.fields import (
    FLAT_LEGACY_KEYS,
    META_KEYS,
    METADATA_EXTRA_KEY,
    TOP_KEYS,
    FieldValue,
    FrontFields,
)
from context_engine.facts.ids import is_valid_id, legacy_id, legacy_scope, new_id
from context_engine.facts.model import (
    FACT_TYPES,
    SCOPES,
    Fact,
    FactType,
    FileStamp,
    ParsedFact,
    Scope,
    one_line,
)
from context_engine.facts.timestamps import format_timestamp, parse_timestamp
from context_engine.facts.yaml_text import NULL_TAG, YamlError, YamlMapping
from context_engine.paths import slugify

from ..records import replace

if TYPE_CHECKING:
    from yaml.nodes import Node

__all__ = [
    "MAX_FACT_BYTES",
    "MAX_FRONTMATTER_CHARS",
    "METADATA_EXTRA_KEY",
    "ParsedFact",
    "format_timestamp",
    "legacy_id",
    "new_id",
    "normalize_fact",
    "parse_fact",
    "parse_fact_strict",
    "parse_timestamp",
    "render_fact",
    "routing_type",
    "split_frontmatter",
    "trim_body",
]

MAX_FRONTMATTER_CHARS = 256 * 1024
_OPEN_FENCE = re.compile(r"---[ \t]*\r?(?:\n|\Z)")
# The rest of a closing fence line after its "---" (consumes the line end).
_FENCE_TAIL = re.compile(r"[ \t]*\r?(?:\n|\Z)")
# A name that is already its own slug (the common case): skips slugify's regex work.
_ASCII_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_REVISION = re.compile(r"[-+]?[0-9]{1,18}")
# Whitespace-only lines at the start of a body.
_LEADING_BLANK_LINES = re.compile(r"(?:[^\S\n]*\n)+")
_TYPES: dict[str, FactType] = {t: t for t in FACT_TYPES}
_SCOPES: dict[str, Scope] = {s: s for s in SCOPES}


# ---------------------------------------------------------------- splitting


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter text or None, everything after the closing fence line), byte-preserving.

    No opening fence, or an opening fence that is never closed, means the whole file is body.
    The closing fence is the first later line matching ``---[ \\t]*\\r?``.
    """
    opening = _OPEN_FENCE.match(text)
    if opening is None:
        return None, text
    # str.find over candidate lines, then one anchored regex: much cheaper than a
    # MULTILINE search on every file open.
    start = opening.end()
    pos = start - 1
    while True:
        pos = text.find("\n---", pos)
        if pos < 0:
            return None, text
        tail = _FENCE_TAIL.match(text, pos + 4)
        if tail is not None:
            return text[start : pos + 1], text[tail.end() :]
        pos += 1


def trim_body(body: str) -> str:
    """The body as stored (S3.1 "trimmed"): no leading blank lines, no trailing whitespace.

    The first line's indentation is kept, so a body that opens with an indented code block
    survives a rewrite (RELIABILITY §4 F1); inner line ends (CRLF too) are untouched.
    """
    body = body.rstrip()
    match = _LEADING_BLANK_LINES.match(body)
    return body[match.end() :] if match else body


def normalize_fact(fact: Fact) -> Fact:
    """``fact`` exactly as it reads back after ``render_fact`` (one-line title and
    description, trimmed body, timestamps in UTC); path and stamp are kept."""

    def utc(value: datetime | None) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    return replace(
        fact,
        title=one_line(fact.title),
        description=one_line(fact.description),
        body=trim_body(fact.body),
        created_at=utc(fact.created_at),
        updated_at=utc(fact.updated_at),
    )


# ---------------------------------------------------------------- strict reader


def _file_line(node: Node) -> int | None:
    # The YAML text starts on line 2 of the file (line 1 is the opening fence).
    mark = node.start_mark
    return None if mark is None else mark.line + 2


def _scalar_text(key_node: Node, node: Node, key: str) -> FieldValue:
    """A known key's value as its source text (``010`` stays ``010``); null reads as absent.

    The line reported is the key's line (what a person looks for in the file).
    """
    from yaml.nodes import ScalarNode

    line = _file_line(key_node)
    if not isinstance(node, ScalarNode):
        raise FactFormatError("invalid_field", f"frontmatter key {key!r} must be a scalar", line)
    if node.tag == NULL_TAG:
        return None, line
    return str(node.value), line


def _strict_fields(front: str) -> FrontFields:
    """Fields via the strict YAML loader; every refusal is a ``FactFormatError``.

    PyYAML is imported here, on the first file outside the canonical layout, not by every
    process that reads or writes a fact.
    """
    from yaml.nodes import MappingNode, ScalarNode

    from context_engine.facts import yaml_strict

    fields = FrontFields()
    try:
        root = yaml_strict.compose(front, line_offset=1)
        if root is None or (isinstance(root, ScalarNode) and root.tag == NULL_TAG):
            return fields
        if not isinstance(root, MappingNode):
            raise FactFormatError(
                "not_a_mapping", "frontmatter is not a YAML mapping", _file_line(root)
            )
        extras: list[tuple[str, object]] = []
        for key, key_node, node in yaml_strict.mapping_entries(root):
            if key == "metadata":
                fields.top[key] = (None, _file_line(key_node))
                extras.extend(_strict_metadata(node, fields))
            elif key in TOP_KEYS or key in FLAT_LEGACY_KEYS:
                fields.top[key] = _scalar_text(key_node, node, key)
            else:
                extras.append((key, yaml_strict.construct(node)))
        # Unknown metadata keys travel as one extra entry, after the top-level extras.
        extras.sort(key=lambda item: item[0] == METADATA_EXTRA_KEY)
        fields.extra = tuple(extras)
    except YamlError as exc:
        # Errors raised outside compose() carry YAML-relative lines: shift past the fence.
        line = exc.line
        if line is not None and exc.reason in ("duplicate_key", "non_string_key"):
            line += 1
        raise FactFormatError(exc.reason, exc.message, line) from None
    return fields


def _strict_metadata(node: Node, fields: FrontFields) -> list[tuple[str, object]]:
    from yaml.nodes import MappingNode, ScalarNode

    from context_engine.facts import yaml_strict

    if isinstance(node, ScalarNode) and node.tag == NULL_TAG:
        return []
    if not isinstance(node, MappingNode):
        raise FactFormatError(
            "invalid_metadata", "frontmatter 'metadata' must be a mapping", _file_line(node)
        )
    unknown: list[tuple[str, object]] = []
    for key, key_node, child in yaml_strict.mapping_entries(node):
        if key in META_KEYS:
            fields.meta[key] = _scalar_text(key_node, child, key)
        else:
            unknown.append((key, yaml_strict.construct(child)))
    return [(METADATA_EXTRA_KEY, YamlMapping(unknown))] if unknown else []


# ---------------------------------------------------------------- fields → Fact


_ABSENT: FieldValue = (None, None)


def _fact_type(fields: FrontFields) -> FactType:
    """A valid fact_type wins, then type (nested before flat); unknown reads as project."""
    for source in (fields.meta, fields.top):
        value = source.get("fact_type", _ABSENT)[0]
        if value is not None and value.strip() in _TYPES:
            return _TYPES[value.strip()]
    source = fields.meta if "type" in fields.meta else fields.top
    raw = source.get("type", _ABSENT)[0]
    return _TYPES.get((raw or "").strip(), "project")


def _declared_scope(fields: FrontFields) -> Scope | None:
    """The valid scope written in the file (nested before flat), else ``None``."""
    for source in (fields.meta, fields.top):
        value = source.get("scope", _ABSENT)[0]
        if value is not None and value.strip() in _SCOPES:
            return _SCOPES[value.strip()]
    return None


def _revision(text: str | None, fields: FrontFields) -> int | None:
    if text is None or not text.strip():
        return None
    if _REVISION.fullmatch(text.strip()) is None:
        raise FactFormatError(
            "invalid_revision", f"revision {text!r} is not an integer", fields.line("revision")
        )
    return int(text.strip(), 10)


def _name_candidate(raw: str | None, path: Path) -> str:
    """The name as written (frontmatter ``name``, else the file stem), before slugging."""
    return (raw or "").strip() or path.stem


def _name(candidate: str, fields: FrontFields) -> str:
    """The fact name: the NFC slug of the candidate, like ``facts.store.fact_slug`` (so
    NFC/NFD twins — macOS writes NFD file names — are one name)."""
    if len(candidate) <= 252 and _ASCII_SLUG.fullmatch(candidate):
        return candidate
    try:
        return slugify(unicodedata.normalize("NFC", candidate))
    except InvalidName as exc:
        raise FactFormatError(
            "invalid_name", f"{exc.message} (name {candidate!r})", fields.line("name")
        ) from None


def _one_line(text: str | None) -> str:
    """``model.one_line`` with a shortcut for text that is already one clean line."""
    if not text:
        return ""
    if text.isprintable() and "  " not in text and text[0] != " " and text[-1] != " ":
        # isprintable() is False for every whitespace character but the ASCII space.
        return text
    return one_line(text)


def _timestamp(text: str | None, fallback: datetime) -> datetime:
    # Unreadable timestamps fall back like missing ones (S3.4 leniency; never rewritten).
    parsed = None if text is None else parse_timestamp(text)
    return fallback if parsed is None else parsed


def _assemble(
    fields: FrontFields,
    body: str,
    *,
    path: Path,
    store_scope: Scope,
    mtime: datetime,
    stamp: FileStamp | None,
    encoding: str,
) -> ParsedFact:
    top = fields.top
    fact_type = _fact_type(fields)
    declared_scope = _declared_scope(fields)
    candidate = _name_candidate(top.get("name", _ABSENT)[0], path)
    name = _name(candidate, fields)
    fact_id = (top.get("id", _ABSENT)[0] or "").strip()
    if fact_id and not is_valid_id(fact_id):
        raise FactFormatError(
            "invalid_id", f"id {fact_id!r} is not a valid memory id", fields.line("id")
        )
    revision = _revision(top.get("revision", _ABSENT)[0], fields)
    needs_upgrade = not fact_id or revision is None or revision <= 0
    if not fact_id:
        # S3.6 hashes slug(name) as written, without NFC (what Reasonix computes).
        fact_id = legacy_id(candidate, legacy_scope(declared_scope, fact_type))
    fallback = mtime.replace(tzinfo=UTC) if mtime.tzinfo is None else mtime.astimezone(UTC)
    fact = Fact(
        id=fact_id,
        revision=revision if revision is not None and revision > 0 else 1,
        name=name,
        title=_one_line(top.get("title", _ABSENT)[0]),
        description=_one_line(top.get("description", _ABSENT)[0]),
        type=fact_type,
        scope=declared_scope or store_scope,
        body=trim_body(body),
        created_at=_timestamp(top.get("created_at", _ABSENT)[0], fallback),
        updated_at=_timestamp(top.get("updated_at", _ABSENT)[0], fallback),
        path=path,
        stamp=stamp,
        extra=fields.extra,
    )
    return ParsedFact(fact=fact, needs_upgrade=needs_upgrade, encoding=encoding)


def _fast_parsed(
    values: list[str | None],
    body: str,
    path: Path,
    mtime: datetime,
    stamp: FileStamp | None,
    encoding: str,
) -> ParsedFact | None:
    """``_assemble`` specialised to a canonical, current file; ``None`` for anything else.

    Canonical text already guarantees a valid type and scope and escape-free keys; every
    other case (legacy id, revision <= 0, a name that needs slugging, a bad id) returns
    ``None`` so the general path decides. Equality with the general path is property-tested.
    """
    # Order of fastpath.ID … fastpath.SCOPE.
    (
        fact_id,
        revision_text,
        created,
        updated,
        name,
        title,
        description,
        route_type,
        fact_type,
        scope,
    ) = values
    if fact_id is None or revision_text is None or name is None or scope is None:
        return None
    revision = int(revision_text)
    if revision <= 0 or not is_valid_id(fact_id):
        return None
    if len(name) > 252 or _ASCII_SLUG.fullmatch(name) is None:
        try:
            name = slugify(unicodedata.normalize("NFC", name))
        except InvalidName:
            return None
    try:
        # The regex admitted only the canonical shape: fromisoformat reads it exactly as
        # parse_timestamp does, and raises on impossible dates (then the general path decides).
        created_at = None if created is None else datetime.fromisoformat(created)
        updated_at = None if updated is None else datetime.fromisoformat(updated)
    except ValueError:
        return None
    if created_at is None or updated_at is None:
        fallback = mtime.replace(tzinfo=UTC) if mtime.tzinfo is None else mtime.astimezone(UTC)
        created_at = created_at or fallback
        updated_at = updated_at or fallback
    fact = Fact(
        id=fact_id,
        revision=revision,
        name=name,
        title=_one_line(title),
        description=_one_line(description),
        type=_TYPES[fact_type or route_type or ""],
        scope=_SCOPES[scope or ""],
        body=trim_body(body),
        created_at=created_at,
        updated_at=updated_at,
        path=path,
        stamp=stamp,
    )
    return ParsedFact(fact=fact, needs_upgrade=False, encoding=encoding)


# ---------------------------------------------------------------- entry points


def _parse(
    data: bytes,
    path: Path,
    store_scope: Scope,
    mtime: datetime,
    stamp: FileStamp | None,
    fast: bool,
) -> ParsedFact:
    # Positional parameters and one call per step: this runs for every file on store open.
    try:
        text, encoding = decode_fact(data)
        front, body = split_frontmatter(text)
        if front is not None and len(front) > MAX_FRONTMATTER_CHARS:
            # The pure-Python YAML loader needs ~1 s per MB; real frontmatter is < 1 KB.
            raise FactFormatError(
                "frontmatter_too_large",
                f"frontmatter is longer than {MAX_FRONTMATTER_CHARS} characters",
                1,
            )
        values = match_canonical(front) if fast and front is not None else None
        if values is not None:
            parsed = _fast_parsed(values, body, path, mtime, stamp, encoding)
            if parsed is not None:
                return parsed
        fields = scan_canonical(front) if values is not None and front is not None else None
        if fields is not None:
            try:
                return _assemble(fields, body, path=path, store_scope=store_scope, mtime=mtime,
                                 stamp=stamp, encoding=encoding)
            except FactFormatError:
                # The fast reader keeps no line numbers: the strict reader reports the error.
                pass
        strict = FrontFields() if front is None else _strict_fields(front)
        return _assemble(strict, body, path=path, store_scope=store_scope, mtime=mtime,
                         stamp=stamp, encoding=encoding)
    except FactFormatError:
        raise
    except RecursionError:
        raise FactFormatError("too_deep", "fact file nests too deeply") from None
    except Exception as exc:  # a hostile file must never crash the caller (RELIABILITY §4)
        raise FactFormatError("unreadable", f"fact file cannot be parsed: {exc}") from None


_UNSAFE_NAME = re.compile(r"[/\\\x00-\x1f\x7f]|^\s*~|^[A-Za-z]:|^\s*\.{1,2}\s*$")


def unsafe_written_name(data: bytes) -> str | None:
    """The frontmatter ``name`` when it is written as a path rather than a name, else None.

    A name that holds a separator or a control character, is ``.`` or ``..``, or starts like a
    path (``~``, ``C:``) was never written by a person naming a fact; ``recover`` refuses it.
    """
    try:
        text, _ = decode_fact(data)
        front, _ = split_frontmatter(text.removeprefix("\ufeff"))
        if front is None:
            return None
        raw = _strict_fields(front).top.get("name", _ABSENT)[0]
    except (FactFormatError, RecursionError, ValueError):
        return None
    if isinstance(raw, str) and _UNSAFE_NAME.search(raw):
        return raw
    return None


def parse_fact(
    data: bytes,
    *,
    path: Path,
    store_scope: Scope,
    mtime: datetime,
    stamp: FileStamp | None = None,
    fast: bool = True,
) -> ParsedFact:
    """Read one fact file's bytes leniently (S3.4); raise ``FactFormatError`` when unreadable.

    ``fast=False`` skips the fast reader (tests prove both give identical results).
    """
    return _parse(data, path, store_scope, mtime, stamp, fast)


# ``parse_fact`` without the fast reader: the reference the fast path is tested against.
parse_fact_strict = partial(parse_fact, fast=False)


# ---------------------------------------------------------------- writer


def routing_type(fact_type: FactType, scope: Scope) -> FactType:
    """The ``metadata.type`` routing hint older clients read (S3.3)."""
    if scope == "global":
        return fact_type if fact_type in ("user", "feedback") else "user"
    return fact_type if fact_type in ("project", "reference") else "project"


def _mapping_items(value: object) -> list[tuple[str, object]]:
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items()]
    if isinstance(value, YamlMapping):
        return list(value)
    return []


def render_fact(fact: Fact) -> bytes:
    """The byte-exact S3.1 file for ``fact`` (UTF-8, LF line ends, no BOM).

    Unknown keys (``fact.extra``) follow the ``metadata`` block; unknown metadata keys
    (the ``metadata`` extra entry) follow ``scope``. An empty body writes nothing after the
    closing fence line.
    """
    scalar = yaml_text.scalar
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
        if key == METADATA_EXTRA_KEY:
            for sub_key, sub_value in _mapping_items(value):
                if sub_key not in META_KEYS:
                    lines.extend(yaml_text.dump_value(sub_key, sub_value, "  "))
        elif key not in TOP_KEYS and key not in FLAT_LEGACY_KEYS:
            top_extras.append((key, value))
    for key, value in top_extras:
        lines.extend(yaml_text.dump_value(key, value))
    lines.append("---")
    text = "\n".join(lines) + "\n"
    body = trim_body(fact.body)
    if body:
        text += "\n" + body + "\n"
    return text.encode("utf-8")
