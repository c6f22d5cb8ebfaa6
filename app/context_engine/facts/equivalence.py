"""The S7.2 equivalence keys of a fact: the one definition the prefix and the recall pool share.

A global fact is equivalent to a project fact with the same id, the same name slug or the same
normalized *title* (the title as written: a fact without one has no title key, as Reasonix
decides; its display title is its name, which the name key already covers).
"""

from __future__ import annotations

import re

from ..errors import InvalidName
from ..paths import slugify
from .model import Fact, normalize_key

_ASCII_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

# Keys depend only on id, name and title; a long session asks for the same facts every turn.
_KEY_CACHE: dict[tuple[str, str, str], tuple[str, ...]] = {}
_KEY_CACHE_LIMIT = 200_000


def name_key(name: str) -> str:
    """The slug of a fact name; a name that slugs to nothing keys as its trimmed lowercase text."""
    if _ASCII_SLUG.fullmatch(name):
        return name  # already a slug (the common case): slugify would return it unchanged
    try:
        return slugify(name)
    except InvalidName:
        return name.strip().lower()


def _compute_keys(fact: Fact) -> tuple[str, ...]:
    keys = [f"id:{fact.id.strip()}", f"name:{name_key(fact.name)}"]
    title = normalize_key(fact.title)
    if title:
        keys.append(f"title:{title}")
    return tuple(key for key in keys if not key.endswith(":"))


def equivalence_keys(fact: Fact) -> tuple[str, ...]:
    """The keys that make a global fact equivalent to a project fact (prefixed by kind)."""
    memo = (fact.id, fact.name, fact.title)
    keys = _KEY_CACHE.get(memo)
    if keys is None:
        if len(_KEY_CACHE) >= _KEY_CACHE_LIMIT:
            _KEY_CACHE.clear()
        keys = _KEY_CACHE[memo] = _compute_keys(fact)
    return keys
