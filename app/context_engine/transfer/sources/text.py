"""Shared reading of Markdown memory files: bounded, decoded, frontmatter split leniently."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import FactFormatError, InvalidName
from ...facts.codec import split_frontmatter
from ...facts.decoding import MAX_FACT_BYTES, decode_fact
from ...facts.model import FACT_TYPES, Diagnostic, FactType, one_line
from ...facts.yaml_strict import compose, construct
from ...facts.yaml_text import YamlError, YamlMapping
from ...paths import slugify
from ..candidate import Agent, Candidate

NAME_WORDS = 8
NAME_CHARS = 60
DESCRIPTION_CHARS = 200


@dataclass(frozen=True, slots=True)
class MarkdownFile:
    """A memory file's text, its frontmatter mapping (empty when none) and body start line."""

    path: Path
    text: str
    front: YamlMapping
    body: str
    body_line: int


def read_text(path: Path) -> str:
    """A source file's text (UTF-8/16 with BOM, GB18030); ``FactFormatError`` when unreadable."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FACT_BYTES + 1)
    except OSError as exc:
        raise FactFormatError("unreadable", f"cannot read: {exc.strerror or exc}") from None
    return decode_fact(data)[0].replace("\r\n", "\n")


def read_markdown(path: Path) -> MarkdownFile:
    """Read and split a Markdown file; malformed frontmatter raises ``FactFormatError``."""
    text = read_text(path)
    front_text, body = split_frontmatter(text)
    front = YamlMapping(())
    body_line = 1
    if front_text is not None:
        body_line = text[: len(text) - len(body)].count("\n") + 1
        try:
            node = compose(front_text, 1)
        except YamlError as exc:
            raise FactFormatError(exc.reason, exc.message, exc.line) from None
        value = construct(node) if node is not None else YamlMapping(())
        if not isinstance(value, YamlMapping):
            raise FactFormatError("frontmatter", "frontmatter is not a mapping", 2)
        front = value
    return MarkdownFile(path, text, front, body, body_line)


def topic_candidate(
    agent: Agent, path: Path, hint: tuple[str, str] = ("", "")
) -> Candidate | None:
    """A memory file with optional ``name``/``description``/``type`` frontmatter (Claude Code's
    topic files, Gemini's project-memory siblings); ``hint`` is an index's (title, hook)."""
    doc = read_markdown(path)
    body = doc.body.strip()
    if not body:
        return None
    front_name = text_field(doc.front, "name")
    name = name_from(front_name or path.stem.replace("_", " "))
    if not name:
        return None
    title = front_name if front_name and front_name != name else hint[0]
    description = text_field(doc.front, "description") or clip(hint[1]) or first_line(body)
    return Candidate(agent, fact_type(doc.front), "project", name, title, clip(description),
                     body, path, 1)


def diagnostic(path: Path, exc: FactFormatError) -> Diagnostic:
    """The per-file diagnostic a malformed source file gives (it is skipped, never changed)."""
    return Diagnostic(exc.code, path, exc.message, exc.line)


def text_field(front: YamlMapping, key: str) -> str:
    """A frontmatter value as one line of text ('' when missing or not a scalar)."""
    value = front.get(key)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return one_line(str(value))
    return ""


def fact_type(front: YamlMapping, default: FactType = "project") -> FactType:
    """``type`` (flat or under ``metadata:``) when it is one of ours, else ``default``."""
    raw = text_field(front, "type")
    metadata = front.get("metadata")
    if not raw and isinstance(metadata, YamlMapping):
        raw = text_field(metadata, "type")
    for known in FACT_TYPES:
        if raw.lower() == known:
            return known
    return default


def name_from(text: str) -> str:
    """A short slug for a memory that has no name: its first words, bounded."""
    words = one_line(text).split(" ")[:NAME_WORDS]
    short = " ".join(words)[:NAME_CHARS]
    try:
        return slugify(short)
    except InvalidName:
        return ""


def first_line(body: str) -> str:
    """The first paragraph (or list item) of a body that is not a heading, bounded."""
    paragraph: list[str] = []
    for line in body.splitlines():
        stripped = line.strip()
        if paragraph and (not stripped or re.match(r"^(?:[-*+#]|\d+[.)])\s", stripped)):
            break
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        item = re.sub(r"^(?:[-*+]\s+|\d+[.)]\s+)", "", stripped)
        if item != stripped:
            return clip(item)
        paragraph.append(stripped)
    return clip(" ".join(paragraph))


def clip(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """One line, cut at ``limit`` characters on a word boundary with an ellipsis."""
    line = one_line(text)
    if len(line) <= limit:
        return line
    cut = line[:limit].rsplit(" ", 1)[0] or line[:limit]
    return cut.rstrip(" ,;:") + "…"


def bullets(lines: list[str], start_line: int) -> list[tuple[int, str]]:
    """Top-level ``- item`` bullets (with their continuation lines) and their line numbers."""
    items: list[tuple[int, str]] = []
    for offset, raw in enumerate(lines):
        match = re.match(r"^[-*+]\s+(.*\S)\s*$", raw)
        if match:
            items.append((start_line + offset, match.group(1)))
        elif items and raw.startswith(("  ", "\t")) and raw.strip():
            number, text = items[-1]
            items[-1] = (number, text + " " + raw.strip())
    return items
