"""The stable prefix (S7.1–S7.2): the memory block, then the instruction block, built once."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..errors import InvalidName
from ..facts.model import Fact, normalize_key, one_line
from ..paths import slugify

MEMORY_HEADING = "# Memory"
GLOBAL_HEADING = "## Global preferences and feedback"
INDEX_HEADING = "## Background memory index"
INDEX_PREAMBLE = (
    "Background facts saved in earlier sessions. They may be stale or wrong: read one with the "
    "`memory` tool before relying on it, save a new durable fact with `remember`, and archive a "
    "wrong or outdated one with `forget`."
)
EMPTY_INDEX = "(no saved facts yet)"
GUIDANCE_TYPES = ("user", "feedback")
_ASCII_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def _name_slug(name: str) -> str:
    """The slug of a fact name; a name that slugs to nothing keeps its raw text as key."""
    if _ASCII_SLUG.fullmatch(name):
        return name  # already a slug (the common case): slugify would return it unchanged
    try:
        return slugify(name)
    except InvalidName:
        return name


def _compute_keys(fact: Fact) -> tuple[str, ...]:
    keys = [f"id:{fact.id}", f"name:{_name_slug(fact.name)}"]
    title_key = normalize_key(fact.display_title)
    if title_key:
        keys.append(f"title:{title_key}")
    return tuple(keys)


# Keys depend only on id, name and title; a long session asks for the same facts every turn.
_KEY_CACHE: dict[tuple[str, str, str], tuple[str, ...]] = {}
_KEY_CACHE_LIMIT = 200_000


def equivalence_keys(fact: Fact) -> tuple[str, ...]:
    """The S7.2 keys: id, name slug, normalized title (prefixed so kinds never collide)."""
    memo = (fact.id, fact.name, fact.title)
    keys = _KEY_CACHE.get(memo)
    if keys is None:
        if len(_KEY_CACHE) >= _KEY_CACHE_LIMIT:
            _KEY_CACHE.clear()
        keys = _KEY_CACHE[memo] = _compute_keys(fact)
    return keys


def masked_global_ids(facts: Iterable[Fact]) -> frozenset[str]:
    """Ids of global facts that have an equivalent project fact (project over global)."""
    facts = list(facts)
    project_keys: set[str] = set()
    for fact in facts:
        if fact.scope == "project":
            project_keys.update(equivalence_keys(fact))
    return frozenset(
        fact.id
        for fact in facts
        if fact.scope == "global" and not project_keys.isdisjoint(equivalence_keys(fact))
    )


def build_memory_block(facts: Sequence[Fact]) -> str:
    """The S7.2 memory block for the active facts of both stores."""
    # Imported here: the index module pulls in the YAML codec, which a hook must not pay for.
    from ..facts.index_file import managed_line

    masked = masked_global_ids(facts)
    visible = [fact for fact in facts if fact.id not in masked]
    guidance = sorted(
        (
            fact
            for fact in visible
            if fact.scope == "global" and fact.type in GUIDANCE_TYPES and fact.body.strip()
        ),
        key=lambda fact: (fact.name, fact.id),
    )
    parts = [MEMORY_HEADING]
    if guidance:
        parts.append(GLOBAL_HEADING)
        for fact in guidance:
            heading = f"### {one_line(fact.display_title)} (global/{fact.type})"
            parts.append(f"{heading}\n\n{fact.body.strip()}")
    lines = [
        managed_line(fact)
        for fact in sorted(visible, key=lambda fact: (fact.scope != "project", fact.name, fact.id))
    ]
    parts.append(INDEX_HEADING)
    parts.append(INDEX_PREAMBLE)
    parts.append("\n".join(lines) if lines else EMPTY_INDEX)
    return "\n\n".join(parts) + "\n"


def build_stable_prefix(memory_block: str, instruction_block: str) -> str:
    """Memory block then instruction block (S7.1); an empty instruction block is left out."""
    blocks = [block.strip("\n") for block in (memory_block, instruction_block) if block.strip()]
    return "\n\n".join(blocks) + "\n"
