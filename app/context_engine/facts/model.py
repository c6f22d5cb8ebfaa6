"""Immutable fact values shared by the store, recall, policy, suggestions and the app (S3)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from ..records import field, record

FactType = Literal["user", "feedback", "project", "reference"]
Scope = Literal["project", "global"]

FACT_TYPES: tuple[FactType, ...] = ("user", "feedback", "project", "reference")
SCOPES: tuple[Scope, ...] = ("project", "global")


_NOT_ALNUM = re.compile(r"[\W_]+")  # exactly the complement of str.isalnum (checked per code point)


def normalize_key(text: str) -> str:
    """Lowercase letters and digits only: the equivalence key for titles and descriptions."""
    return _NOT_ALNUM.sub("", text.lower())


def one_line(text: str) -> str:
    """Collapse whitespace runs to single spaces and trim (titles, descriptions)."""
    return re.sub(r"\s+", " ", text).strip()


def utc_now() -> datetime:
    """The current time, UTC-aware, for ``updated_at``."""
    return datetime.now(UTC)


@record
class FactFields:
    """A fact's editable fields as a write gives them; None means not given."""

    name: str | None = None
    title: str | None = None
    description: str | None = None
    type: FactType | None = None
    scope: Scope | None = None
    body: str | None = None


@record
class FileStamp:
    """Identity of a file as read: lets caches prove a snapshot is still current."""

    device: int
    inode: int
    size: int
    mtime_ns: int


@record
class Fact:
    """One active (or archived, or snapshotted) fact as read from or written to a store."""

    id: str
    revision: int
    name: str
    title: str
    description: str
    type: FactType
    scope: Scope
    body: str
    created_at: datetime | None = None
    updated_at: datetime | None = None
    path: Path | None = field(default=None, compare=False)
    stamp: FileStamp | None = field(default=None, compare=False)
    extra: tuple[tuple[str, object], ...] = ()

    @property
    def reference(self) -> str:
        """The provider-visible reference, e.g. ``project/release-target.md``."""
        return f"{self.scope}/{self.name}.md"

    @property
    def display_title(self) -> str:
        """The title, else the name with ``-`` as spaces (S3.8)."""
        return self.title or self.name.replace("-", " ")

    @property
    def timestamp(self) -> datetime | None:
        """``updated_at``, else ``created_at`` (freshness input, S8.7)."""
        return self.updated_at or self.created_at


@record
class ParsedFact:
    """A fact as read, plus whether S5.1 migration must rewrite its file (made by the codec)."""

    fact: Fact
    needs_upgrade: bool  # frontmatter lacks a non-empty id or a revision > 0 (S5.1)
    encoding: str = "utf-8"  # utf-8, utf-8-sig, utf-16-le, utf-16-be or gb18030


@record
class Diagnostic:
    """A local-only problem report about one file (never provider-visible)."""

    code: str
    path: Path
    message: str
    line: int | None = None
