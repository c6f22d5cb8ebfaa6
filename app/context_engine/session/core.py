"""One session end to end: the prefix built once, then each user turn with recall and notes (S7).

The functions here only assemble text; reading stores, resolving instructions and recalling go
through :class:`SessionSources`, so the same code serves the in-process API, the hooks (one
process per turn, the baseline kept on disk) and the tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

from ..facts.model import Fact
from ..records import record
from .notes import Baseline, diff_notes, render_notes
from .prefix import build_memory_block, build_stable_prefix


class InstructionView(NamedTuple):
    """The provider-visible instruction block and each document's text by label (S6.7)."""

    block: str
    documents: Mapping[str, str]


class RecallOutcome(NamedTuple):
    """The recall block for one message (empty when suppressed) and its trace."""

    block: str
    trace: object | None


class SessionSources(Protocol):
    """Where a session reads from; every text it returns is still unscrubbed."""

    def active_facts(self) -> Sequence[Fact]:
        """Every active fact of both stores, as they are now."""
        ...

    def instructions(self) -> InstructionView:
        """The instruction block and documents, as they are now."""
        ...

    def recall(self, message: str, facts: Sequence[Fact]) -> RecallOutcome:
        """Run S8 for ``message`` over ``facts`` and record the trace."""
        ...

    def scrub(self, text: str) -> str:
        """Remove every absolute path and home prefix from provider-visible text (S7.4)."""
        ...


@record
class TurnResult:
    """One user turn as the provider receives it, and its parts."""

    text_for_provider: str
    recall_block: str
    notes: str
    trace: object | None

    @property
    def added_context(self) -> str:
        """What the engine appended to the user's text (recall block, then notes)."""
        return "\n\n".join(part for part in (self.recall_block, self.notes) if part)


def open_prefix(
    sources: SessionSources, *, with_instructions: bool = True
) -> tuple[str, Baseline]:
    """Build the stable prefix once and the baseline it implies (S7.1).

    ``with_instructions=False`` gives the memory block alone, for hosts that load their own
    instruction files (edits to ours still become turn-tail notes).
    """
    facts = sources.active_facts()  # as is: the engine recognises its own snapshot
    instructions = sources.instructions()
    block = instructions.block if with_instructions else ""
    prefix = build_stable_prefix(build_memory_block(facts, scrub=sources.scrub), block)
    return sources.scrub(prefix), Baseline.capture(facts, instructions.documents)


def run_turn(
    sources: SessionSources, baseline: Baseline | None, text: str
) -> tuple[TurnResult, Baseline]:
    """Append the recall block and pending notes to ``text``; return the moved baseline (S7.3).

    With no baseline (a host that never received the prefix) there is nothing to compare
    against: the current state becomes the baseline and no notes are sent.
    """
    facts = sources.active_facts()  # as is: the engine recognises its own snapshot
    documents = sources.instructions().documents
    lines: list[str] = []
    if baseline is None:
        following = Baseline.capture(facts, documents)
    else:
        lines, following = diff_notes(baseline, facts, documents, sources.scrub)
    notes = sources.scrub(render_notes(lines))
    outcome = sources.recall(text, facts)
    block = sources.scrub(outcome.block)
    added = "\n\n".join(part for part in (block, notes) if part)
    provider_text = f"{text}\n\n{added}" if added else text
    return TurnResult(provider_text, block, notes, outcome.trace), following
