"""The ``memory`` command group: the ``/memory`` family as text (S12).

Each area module adds its subcommands to ``memory`` with ``@memory.command(...)``; the group
imports a module only when one of its subcommands runs (``registry.MEMORY``).
"""

from __future__ import annotations

import click

from .lazy import LazyGroup
from .registry import MEMORY, MEMORY_SHORT_HELP


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    entries=MEMORY,
    short_help_table=MEMORY_SHORT_HELP,
    path=("memory",),
)
@click.pass_context
def memory(ctx: click.Context) -> None:
    """The /memory family as text: bare prints the summary."""
    if ctx.invoked_subcommand is None:
        group = ctx.command
        summary = group.get_command(ctx, "summary") if isinstance(group, click.Group) else None
        if summary is None:
            raise click.UsageError("memory summary is not available")
        ctx.invoke(summary)


def register(group: click.Group) -> None:
    """Attach the memory group to the top-level CLI."""
    group.add_command(memory)
