"""``remember``'s work and the output of every write command, without click (issue 14).

The click commands (``facts_cmds``) and the plain ``remember`` command line of ``cli/fast.py``
run this code, so both print the same bytes. Every write is ``apply(op, Person("cli"))``: the
command typed by the person is the confirmation (S10.5).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalog.ops import Person, Save
from .context import CliContext, echo, fail

if TYPE_CHECKING:
    from ..catalog.ops import WriteOutcome

PERSON = Person("cli")


def remember_fact(
    ctx: CliContext,
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    body: str | None,
    fact_type: str | None,
    scope: str | None,
    fact_id: str | None,
    expected_revision: int | None,
) -> None:
    """Save a fact (its arguments already checked as ``remember`` checks them) and print it."""
    save = Save(name=name, title=title, description=description, body=body, type=fact_type,
                scope=scope, id=fact_id, expected_revision=expected_revision)
    written(ctx, ctx.catalog().apply(save, PERSON), "saved")


def written(ctx: CliContext, outcome: WriteOutcome, verb: str) -> None:
    """Print a write: ``{"fact", "archived"}``; exit 1 when it did not run."""
    if not outcome.ran:
        fail(ctx, "refused", outcome.result)
    warn(outcome)
    payload: dict[str, object] = {}
    if ctx.json:  # the JSON form only: ``reads`` (timestamps, freshness) loads for it alone
        from .reads import fact_json

        payload = {
            "fact": fact_json(outcome.fact) if outcome.fact is not None else None,
            "archived": list(outcome.archived),
        }
    fact = outcome.fact
    lines = [f"{verb} {fact.reference} ({fact.id}, revision {fact.revision})"] if fact else []
    lines += [f"archived {path}" for path in outcome.archived]
    ctx.emit(payload, "\n".join(lines))


def warn(outcome: WriteOutcome) -> None:
    """Post-commit problems (e.g. MEMORY.md not rewritten) go to stderr; stdout stays S12."""
    for message in outcome.warnings:
        echo(f"warning: {message}", err=True)
