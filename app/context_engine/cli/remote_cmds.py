"""The commands that work on a remote workspace (``--remote``).

``list``, ``read``, ``revisions``, ``restore``, ``archived``, ``recover``, ``suggest``,
``accept`` and ``complete`` are the local commands themselves: they read and write through
``CliContext.catalog()``. The rest are catalog-backed twins because their local form differs:
``remember``/``forget`` locally are the person's own ``Memory`` writes, remotely they go through
the server's write policy, which asks this terminal to confirm what it requires (no TTY:
refused, nothing written); ``search`` prints the server's snippets, not the memory tool's
text; local ``recall`` survives a trace it cannot record; ``instructions --target`` is a path
on the server, not one relative to this directory. Same names and S12 output shapes (the
JSON and text helpers are the local ones); the data comes only from ``CliContext.catalog()``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..catalog.base import WriteOutcome
from ..facts.model import FACT_TYPES, SCOPES
from ..instructions.report import format_report, resolution_payload
from .completion_cmds import complete_cmd, completer
from .facts_cmds import (
    archived_cmd,
    fact_json,
    list_cmd,
    read_cmd,
    recover_cmd,
    restore_cmd,
    revisions_cmd,
)
from .output import CliContext, engine_errors, fail, pass_cli
from .suggest_cmds import accept_cmd, suggest_cmd

REFS = completer("refs")
ARCHIVES = completer("archives")


def _written(ctx: CliContext, outcome: WriteOutcome, verb: str) -> None:
    """``{"fact", "archived"}`` when written; exit 1 with the policy's reason when not."""
    if not outcome.ran:
        fail(ctx, "refused", outcome.result)
    payload = {
        "fact": fact_json(outcome.fact) if outcome.fact is not None else None,
        "archived": list(outcome.archived),
    }
    fact = outcome.fact
    text = f"{verb} {fact.reference} ({fact.id}, revision {fact.revision})" if fact else verb
    text = "\n".join([text, *(f"archived {p}" for p in outcome.archived)])
    ctx.emit(payload, text)


@click.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("--type", "fact_type", type=click.Choice(FACT_TYPES), default=None)
@click.option("--scope", type=click.Choice(SCOPES), default=None)
@click.option("--limit", type=int, default=8, show_default=True, help="Max results (≤ 20).")
@pass_cli
@engine_errors
def search_cmd(
    ctx: CliContext, query: tuple[str, ...], fact_type: str | None, scope: str | None, limit: int
) -> None:
    """BM25 search over the remote workspace's facts."""
    text = " ".join(query)
    hits = ctx.catalog().search(text, fact_type=fact_type, scope=scope, limit=limit)
    results = [{**fact_json(h.fact), "score": h.score, "snippet": h.snippet} for h in hits]
    lines = [f"{h.fact.reference}  {h.score:.3f}  {h.snippet}" for h in hits]
    ctx.emit({"query": text, "results": results}, "\n".join(lines) or "no matches")


@click.command("remember")
@click.option("--name", help="Fact name (slugged) or a reference like global/x.md.")
@click.option("--title", help="One-line title.")
@click.option("--description", help="One-line description.")
@click.option("--type", "fact_type", type=click.Choice(FACT_TYPES))
@click.option("--scope", type=click.Choice(SCOPES))
@click.option("--body", help="Body text.")
@click.option("--body-file", help="Read the body from a local file ('-' = stdin).")
@click.option("--id", "fact_id", help="Update the fact with this id.")
@click.option("--expected-revision", type=int, help="Fail unless this is the active revision.")
@pass_cli
@engine_errors
def remember_cmd(
    ctx: CliContext,
    name: str | None,
    title: str | None,
    description: str | None,
    fact_type: str | None,
    scope: str | None,
    body: str | None,
    body_file: str | None,
    fact_id: str | None,
    expected_revision: int | None,
) -> None:
    """Save a remote fact through the server's write policy (confirm when it asks)."""
    if body is not None and body_file is not None:
        raise click.UsageError("give either --body or --body-file, not both")
    if body_file is not None:  # the person's own file or stdin, not engine data
        body = sys.stdin.read() if body_file == "-" else Path(body_file).read_text("utf-8")
    args: dict[str, Any] = {
        "name": name,
        "title": title,
        "description": description,
        "type": fact_type,
        "scope": scope,
        "body": body,
        "id": fact_id,
        "expected_revision": expected_revision,
    }
    outcome = ctx.catalog().save({k: v for k, v in args.items() if v is not None})
    _written(ctx, outcome, "saved")


@click.command("forget")
@click.argument("ref", shell_complete=REFS)
@pass_cli
@engine_errors
def forget_cmd(ctx: CliContext, ref: str) -> None:
    """Archive a remote fact (every forget is confirmed by a person)."""
    outcome = ctx.catalog().forget(ref)
    if not outcome.ran:
        fail(ctx, "refused", outcome.result)
    text = "\n".join(f"archived {p}" for p in outcome.archived) or outcome.result
    ctx.emit({"archived": list(outcome.archived)}, text)


@click.command("instructions")
@click.option("--target", default=None, help="A path on the remote machine.")
@pass_cli
@engine_errors
def instructions_cmd(ctx: CliContext, target: str | None) -> None:
    """The remote workspace's instruction files with diagnostics."""
    view = ctx.catalog().instructions(target)
    ctx.emit(resolution_payload(view.resolution), format_report(view.resolution))


@click.command("recall")
@click.argument("message", nargs=-1, required=True)
@click.option("--limit", type=int, default=4, show_default=True, help="Max facts (≤ 8).")
@click.option("--budget", type=int, default=2400, show_default=True, help="Max characters.")
@pass_cli
@engine_errors
def recall_cmd(ctx: CliContext, message: tuple[str, ...], limit: int, budget: int) -> None:
    """Run recall on the remote workspace (the server records the trace)."""
    run = ctx.catalog().recall(" ".join(message), limit=limit, budget=budget)
    text = (run.block + "\n\n" if run.block else "") + run.trace.to_text()
    ctx.emit({"block": run.block, "trace": run.trace.to_dict()}, text)


def _remote_memory() -> click.Command:
    from .remote_memory import memory

    return memory


REMOTE_COMMANDS: dict[str, click.Command] = {
    command.name or "": command
    for command in (
        list_cmd,
        read_cmd,
        search_cmd,
        revisions_cmd,
        restore_cmd,
        archived_cmd,
        recover_cmd,
        remember_cmd,
        forget_cmd,
        instructions_cmd,
        recall_cmd,
        suggest_cmd,
        accept_cmd,
        complete_cmd,
        _remote_memory(),
    )
}
