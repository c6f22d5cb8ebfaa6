"""``memory`` under ``--remote``: the ``/memory`` family as text, from the remote catalog only.

The summary (``summary_text``), ``memory revisions``, ``restore``, ``archived`` and ``recover``
are the top-level commands over ``CliContext.catalog()``; ``instructions`` and ``recall``
print only what the server sends (no ``--target`` relative to this directory).
"""

from __future__ import annotations

import click

from ..instructions.report import format_report
from .facts_cmds import archived_cmd, recover_cmd, restore_cmd, revisions_cmd
from .memory_cmds import summary
from .output import CliContext, engine_errors, pass_cli


@click.group("memory", invoke_without_command=True)
@pass_cli
@click.pass_context
@engine_errors
def memory(click_ctx: click.Context, ctx: CliContext) -> None:
    """The /memory family as text, from the remote workspace."""
    if click_ctx.invoked_subcommand is None:
        payload, text = summary(ctx.catalog())
        ctx.emit(payload, text)


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


memory.add_command(revisions_cmd)
memory.add_command(restore_cmd)
memory.add_command(recover_cmd)
memory.add_command(archived_cmd)
