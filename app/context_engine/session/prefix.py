"""The stable prefix (S7.1–S7.2): the memory block, then the instruction block, built once."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

from ..facts.equivalence import equivalence_keys
from ..facts.model import Fact, one_line

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


MEMORY_BLOCK_LIMIT = 8000
MEMORY_BLOCK_MIN = 1000
LIMIT_ENV = "CONTEXT_ENGINE_MEMORY_BLOCK_CHARS"
CUT_MARKER = "[… cut to fit; read {reference} with the `memory` tool for the rest]"
MORE_LINE = "… and {count} more facts: search them with the memory tool"


def memory_block_limit() -> int:
    """The configured bound in characters (``$CONTEXT_ENGINE_MEMORY_BLOCK_CHARS``, min 1,000)."""
    raw = os.environ.get(LIMIT_ENV, "").strip()
    if not raw.isdigit():
        return MEMORY_BLOCK_LIMIT
    return max(MEMORY_BLOCK_MIN, int(raw))


def _newest_first(fact: Fact) -> tuple[float, bool, str, str]:
    stamp = fact.timestamp
    return (-(stamp.timestamp() if stamp else 0.0), fact.scope != "project", fact.name, fact.id)


def _identity(text: str) -> str:
    return text


def _cut(text: str, room: int, marker: str) -> str:
    """``text`` whole when it fits in ``room``, else its head and ``marker``."""
    if len(text) <= room:
        return text
    return text[: max(0, room - len(marker) - 1)].rstrip() + "\n" + marker


def build_memory_block(
    facts: Sequence[Fact],
    limit: int | None = None,
    scrub: Callable[[str], str] = _identity,
) -> str:
    """The S7.2 memory block for the active facts of both stores, at most ``limit`` characters.

    Over the bound (S7.2a) the guidance bodies are cut with a marker and only the newest index
    lines that fit are kept, then one count line points to the ``memory`` tool. ``scrub`` is
    applied to each part before it is measured, so the bound holds for the text sent.
    """
    # Imported here: the index module pulls in the YAML codec, which a hook must not pay for.
    from ..facts.index_file import managed_line

    bound = memory_block_limit() if limit is None else max(MEMORY_BLOCK_MIN, limit)
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
    ordered = sorted(visible, key=lambda fact: (fact.scope != "project", fact.name, fact.id))
    lines = {fact.id: scrub(managed_line(fact)) for fact in ordered}
    head = [MEMORY_HEADING]
    sections: list[str] = []
    for fact in guidance:
        heading = f"### {one_line(fact.display_title)} (global/{fact.type})"
        sections.append(scrub(f"{heading}\n\n{fact.body.strip()}"))
    tail = [INDEX_HEADING, INDEX_PREAMBLE]
    whole = _join(
        [
            *head,
            *([GLOBAL_HEADING, *sections] if sections else []),
            *tail,
            "\n".join(lines.values()) if lines else EMPTY_INDEX,
        ]
    )
    if len(whole) <= bound:
        return whole
    return _bounded(guidance, sections, ordered, lines, bound)


def _join(parts: Sequence[str]) -> str:
    return "\n\n".join(parts) + "\n"


def _bounded(
    guidance: Sequence[Fact],
    sections: Sequence[str],
    ordered: Sequence[Fact],
    lines: dict[str, str],
    bound: int,
) -> str:
    """The over-the-bound block: cut guidance, the newest index lines that fit, a count line."""
    more_room = len(MORE_LINE.format(count=len(ordered))) + 1
    fixed = len(_join([MEMORY_HEADING, INDEX_HEADING, INDEX_PREAMBLE, ""])) + more_room
    # Guidance (the person's own preferences) first, but never more than half the block.
    share = (bound - fixed) // 2 - len(GLOBAL_HEADING) - 2
    kept: list[str] = []
    if sections and share > 0:
        each = max(200, share // len(sections))
        used = 0
        for fact, section in zip(guidance, sections, strict=True):
            marker = CUT_MARKER.format(reference=fact.reference)
            text = _cut(section, each, marker)
            if used + len(text) + 2 > share:
                break
            kept.append(text)
            used += len(text) + 2
    parts = [
        MEMORY_HEADING,
        *([GLOBAL_HEADING, *kept] if kept else []),
        INDEX_HEADING,
        INDEX_PREAMBLE,
    ]
    room = bound - len(_join(parts)) - 2 - more_room
    chosen: set[str] = set()
    for fact in sorted(ordered, key=_newest_first):
        cost = len(lines[fact.id]) + 1
        if cost <= room:
            chosen.add(fact.id)
            room -= cost
    shown = [lines[fact.id] for fact in ordered if fact.id in chosen]
    omitted = len(ordered) - len(shown)
    if omitted:
        shown.append(MORE_LINE.format(count=omitted))
    parts.append("\n".join(shown) if shown else EMPTY_INDEX)
    return _join(parts)


def build_stable_prefix(memory_block: str, instruction_block: str) -> str:
    """Memory block then instruction block (S7.1); an empty instruction block is left out."""
    blocks = [block.strip("\n") for block in (memory_block, instruction_block) if block.strip()]
    return "\n\n".join(blocks) + "\n"
