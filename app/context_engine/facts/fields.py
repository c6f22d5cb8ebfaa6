"""The frontmatter fields the codec reads, as text, from either reader (S3.4).

Both the strict YAML reader and the canonical fast reader produce ``FrontFields``; one
function (``codec._assemble``) turns them into a ``Fact``, so the two readers cannot drift.
"""

from __future__ import annotations

# Keys the codec owns at the top level; everything else is preserved in ``Fact.extra``.
TOP_KEYS = frozenset(
    {"id", "revision", "created_at", "updated_at", "name", "title", "description", "metadata"}
)
# Old flat keys (S3.4): read, and written back under ``metadata:``.
FLAT_LEGACY_KEYS = frozenset({"type", "scope", "fact_type"})
META_KEYS = frozenset({"type", "fact_type", "scope"})
# Extra entry holding the unknown keys found inside ``metadata:`` (written after ``scope``).
METADATA_EXTRA_KEY = "metadata"

# (source text or None when absent/null, 1-based file line of the value or None)
FieldValue = tuple[str | None, int | None]


class FrontFields:
    """Scalar text of every known key (top level and ``metadata``) plus preserved extras."""

    __slots__ = ("extra", "meta", "top")

    def __init__(
        self,
        top: dict[str, FieldValue] | None = None,
        meta: dict[str, FieldValue] | None = None,
        extra: tuple[tuple[str, object], ...] = (),
    ) -> None:
        self.top: dict[str, FieldValue] = {} if top is None else top
        self.meta: dict[str, FieldValue] = {} if meta is None else meta
        self.extra = extra

    def text(self, key: str) -> str | None:
        """The top-level text of ``key``, else ``None``."""
        value = self.top.get(key)
        return None if value is None else value[0]

    def line(self, key: str) -> int | None:
        """The file line of top-level ``key``, else ``None``."""
        value = self.top.get(key)
        return None if value is None else value[1]
