"""``suggest`` and ``accept <candidate-id>`` (S11, S12).

Both work through the invocation's catalog (``CliContext.catalog()``): this workspace's sessions
in process, or the server's under ``--remote`` — never this machine's sessions for a remote
workspace (S11.6).
"""

from __future__ import annotations

from typing import Any

import click

from ..catalog.errors import Unavailable
from ..catalog.ops import Accept, Person
from ..facts.model import FACT_TYPES, SCOPES, FactType, Scope
from ..suggestions.accept import Edits
from ..suggestions.model import Suggestions
from ..suggestions.payload import suggestions_json
from .output import CliContext, engine_errors, pass_cli
from .reads import fact_json  # the one S12 fact shape


def suggestions_text(result: Suggestions) -> str:
    """Human-readable candidates with their evidence."""
    if not result.available:
        return "suggestions unavailable for this workspace\n"
    lines: list[str] = []
    if not result.memories and not result.skills:
        lines.append("no suggestions from recent sessions")
    for m in result.memories:
        lines.append(f"{m.id}  memory {m.name}  [{m.scope}/{m.type}]  ({m.reason})")
        lines.append(f"    {m.body}")
        lines.extend(f"    · {e}" for e in m.evidence)
    for s in result.skills:
        lines.append(f"{s.id}  skill {s.name}  {s.description}")
        lines.extend(f"    · {e}" for e in s.evidence)
    for d in result.diagnostics:
        lines.append(f"note: {d.path}: {d.message}")
    return "\n".join(lines) + "\n"


@click.command("suggest")
@pass_cli
@engine_errors
def suggest_cmd(ctx: CliContext) -> None:
    """Memory and skill candidates from the workspace's recent sessions (never writes)."""
    catalog = ctx.catalog()
    try:
        result = catalog.suggestions()
    except Unavailable:  # S11.6: say so; never scan this machine's sessions instead
        result = Suggestions(available=False)
    ctx.emit(suggestions_json(result), suggestions_text(result))


@click.command("accept")
@click.argument("candidate_id")
@click.option("--name", default=None, help="Edited name.")
@click.option("--title", default=None, help="Edited title (memory candidates).")
@click.option("--description", default=None, help="Edited description.")
@click.option("--type", "fact_type", type=click.Choice(FACT_TYPES), default=None)
@click.option("--scope", type=click.Choice(SCOPES), default=None)
@click.option("--body", default=None, help="Edited body.")
@click.option(
    "--body-file",
    type=click.File("r", encoding="utf-8"),
    default=None,
    help="Edited body from a file (- for stdin).",
)
@pass_cli
@engine_errors
def accept_cmd(
    ctx: CliContext,
    candidate_id: str,
    name: str | None,
    title: str | None,
    description: str | None,
    fact_type: FactType | None,
    scope: Scope | None,
    body: str | None,
    body_file: Any,
) -> None:
    """Accept one candidate of a fresh scan: a fact, or a project SKILL.md (S11.5)."""
    if body is not None and body_file is not None:
        raise click.UsageError("give --body or --body-file, not both")
    if body_file is not None:
        body = str(body_file.read())  # ``-`` is stdin
    edits = Edits(name, title, description, fact_type, scope, body)
    accepted = ctx.catalog().apply(Accept(candidate_id, edits), Person("cli"))
    if accepted.fact is not None:
        fact = accepted.fact
        ctx.emit({"fact": fact_json(fact)}, f"saved {fact.reference} ({fact.id})")
    else:
        ctx.emit({"path": accepted.path}, f"created {accepted.path}")


def register(group: click.Group) -> None:
    """Attach ``suggest`` and ``accept``."""
    group.add_command(suggest_cmd)
    group.add_command(accept_cmd)
