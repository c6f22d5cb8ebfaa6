"""``memory`` under ``--remote``: the ``/memory`` family as text, from the remote catalog only.

``memory revisions`` and ``memory archived`` are the local subcommands themselves (they read
through ``CliContext.catalog()``); the summary, ``instructions``, ``recall``, ``restore`` and
``recover`` print differently for a remote workspace (the server's messages, no local paths).
"""

from __future__ import annotations

import click

from ..catalog.base import Catalog
from ..instructions.report import format_report
from .completion_cmds import completer
from .facts_cmds import fact_line
from .memory_cmds import memory_archived, memory_revisions
from .output import CliContext, engine_errors, fail, pass_cli


def remote_summary(catalog: Catalog) -> str:
    """Instructions, facts, archive count and where they live — all as the server sees them."""
    view = catalog.instructions()
    lines = ["Instructions:"]
    lines += [f"  {d.order}. [{d.scope}] {d.path}" for d in view.resolution.documents]
    if not view.resolution.documents:
        lines.append("  (none)")
    lines += [f"  ! {d.path}: {d.message}" for d in view.resolution.diagnostics]
    snapshot = catalog.list_facts()
    lines.append(f"Facts ({len(snapshot.facts)}):")
    lines += [f"  {fact_line(f)}" for f in snapshot.facts]
    if not snapshot.facts:
        lines.append("  (none)")
    lines += [f"  ! {d.path}: {d.message}" for d in snapshot.diagnostics]
    lines.append(f"Archive: {len(catalog.archived())} forgotten (context-engine memory archived)")
    lines.append(f"Stores: on the remote workspace {catalog.name}")
    return "\n".join(lines)


@click.group("memory", invoke_without_command=True)
@pass_cli
@click.pass_context
@engine_errors
def memory(click_ctx: click.Context, ctx: CliContext) -> None:
    """The /memory family as text, from the remote workspace."""
    if click_ctx.invoked_subcommand is None:
        click.echo(remote_summary(ctx.catalog()))


@memory.command("instructions")
@pass_cli
@engine_errors
def memory_instructions(ctx: CliContext) -> None:
    """/memory instructions."""
    click.echo(format_report(ctx.catalog().instructions().resolution), nl=False)


@memory.command("recall")
@pass_cli
@engine_errors
def memory_recall(ctx: CliContext) -> None:
    """/memory recall: the remote workspace's last recall trace."""
    trace = ctx.catalog().last_trace()
    click.echo(trace.to_text() if trace else "No recall has run in this workspace yet.\n", nl=False)


@memory.command("restore")
@click.argument("ref", shell_complete=completer("refs"))
@click.argument("revision", type=int)
@pass_cli
@engine_errors
def memory_restore(ctx: CliContext, ref: str, revision: int) -> None:
    """/memory restore REF REVISION."""
    outcome = ctx.catalog().restore(ref, revision)
    if not outcome.ran:
        fail(ctx, "refused", outcome.result)
    click.echo(outcome.result)


@memory.command("recover")
@click.argument("archive_path", shell_complete=completer("archives"))
@pass_cli
@engine_errors
def memory_recover(ctx: CliContext, archive_path: str) -> None:
    """/memory recover ARCHIVE-PATH (the server's path)."""
    outcome = ctx.catalog().recover(archive_path)
    if not outcome.ran:
        fail(ctx, "refused", outcome.result)
    click.echo(outcome.result)


memory.add_command(memory_revisions)
memory.add_command(memory_archived)
