"""S5.1: upgrade legacy fact files of one store to the S3.1 format, idempotently.

Called with the store lock held. Only files the codec flags ``needs_upgrade`` (no non-empty id
or no revision > 0) are rewritten; unreadable files are left byte-identical; MEMORY.md,
dotfiles and sub-directories are never touched. Plain reads never call this.

Reads follow Reasonix: a file without frontmatter (an empty file, a first line of JSON, an
opening fence that is never closed) is a legacy fact whose whole text is the body. Rewriting is
stricter: a file whose shape admits two readings — a fence that is never closed (frontmatter
that lost its end, or a body that opens with a rule?) or a JSON object where frontmatter would
be — is left byte-identical with a diagnostic, so a person decides. An empty file has one
reading and is upgraded, as Reasonix does.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import bounded_json
from ..errors import FactFormatError
from .codec import _OPEN_FENCE, render_fact, split_frontmatter
from .decoding import decode_fact
from .fs import atomic_write
from .model import Diagnostic
from .store import Store

UNTERMINATED = "unterminated_frontmatter"
JSON_HEADER = "json_header"


def ambiguity(data: bytes) -> tuple[str, str] | None:
    """Why a legacy file's text admits two readings (code, message), or ``None``."""
    try:
        text, _ = decode_fact(data)
    except FactFormatError:
        return None  # the codec reports it as unreadable; nothing is rewritten anyway
    text = text.removeprefix("\ufeff")
    if _OPEN_FENCE.match(text):
        if split_frontmatter(text)[0] is None:
            return UNTERMINATED, "the frontmatter fence on line 1 is never closed"
        return None
    head = text.lstrip(" \t\r\n")
    if head[:1] != "{" or bounded_json.exceeds_depth(head[:65536]):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(head[:65536])
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict):
        return JSON_HEADER, "the file starts with a JSON object, not a --- frontmatter block"
    return None


def migrate_store(
    store: Store, skipped: list[Diagnostic] | None = None, candidates: list[Path] | None = None
) -> list[Path]:
    """Rewrite every legacy fact file of ``store``; returns the paths rewritten.

    ``candidates`` (the writer state's legacy files), else a snapshot, names the files to
    look at; each is re-read under the lock before writing. Ambiguous files are appended to
    ``skipped`` as diagnostics and left untouched.
    """
    if candidates is None:
        store.snapshot()
        candidates = store.legacy_files()
    rewritten: list[Path] = []
    for path in candidates:
        try:
            loaded = store.load(path)
        except FactFormatError:
            continue
        if loaded is None or not loaded.parsed.needs_upgrade:
            continue
        reason = ambiguity(loaded.data)
        if reason is not None:
            if skipped is not None:
                skipped.append(Diagnostic(reason[0], path, f"left untouched: {reason[1]}", 1))
            continue
        data = render_fact(loaded.fact)
        if data != loaded.data:
            atomic_write(store.fs, path, data, revision=loaded.fact.revision)
            rewritten.append(path)
    return rewritten
