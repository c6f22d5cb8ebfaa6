"""Fact identities: new random ids (S3.5) and deterministic legacy ids (S3.6)."""

from __future__ import annotations

import os
import re

from context_engine.digests import sha256
from context_engine.paths import slugify

NEW_ID_PREFIX = "mem-"
LEGACY_ID_PREFIX = "legacy-"
# What an id read from a file may look like: it becomes a directory name under .revisions/,
# so it must be a single safe path component (RELIABILITY §4 schema validation).
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def new_id() -> str:
    """``mem-`` + 32 lowercase hex digits from a cryptographic random source (S3.5)."""
    return NEW_ID_PREFIX + os.urandom(16).hex()


def legacy_id(name: str, scope: str) -> str:
    """``legacy-`` + 24 hex of sha256("reasonix-memory-v2\\0" + scope + "\\0" + slug(name))."""
    seed = "reasonix-memory-v2\0" + scope + "\0" + slugify(name)
    return LEGACY_ID_PREFIX + sha256(seed.encode("utf-8")).hexdigest()[:24]


def legacy_scope(frontmatter_scope: str | None, fact_type: str) -> str:
    """Scope hashed into a legacy id: the frontmatter scope, else by type (S3.6)."""
    if frontmatter_scope:
        return frontmatter_scope
    return "global" if fact_type in ("user", "feedback") else "project"


def is_valid_id(value: str) -> bool:
    """True when ``value`` is usable as an id (a single safe path component)."""
    return ID_PATTERN.fullmatch(value) is not None and ".." not in value
