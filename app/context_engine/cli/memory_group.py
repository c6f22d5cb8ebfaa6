"""The ``memory`` command group: the ``/memory`` family as text (S12).

Each area module adds its subcommands to ``memory`` with ``@memory.command(...)``.
"""

from __future__ import annotations

import click


@click.group(invoke_without_command=True)
@click.pass_context
def memory(ctx: click.Context) -> None:
    """The /memory family as text: bare prints the summary."""
    if ctx.invoked_subcommand is None:
        group = ctx.command
        summary = group.commands.get("summary") if isinstance(group, click.Group) else None
        if summary is None:
            raise click.UsageError("memory summary is not available")
        ctx.invoke(summary)


def register(group: click.Group) -> None:
    """Attach the memory group to the top-level CLI."""
    group.add_command(memory)
