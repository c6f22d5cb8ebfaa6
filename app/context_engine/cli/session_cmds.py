"""``context-engine prefix``: the stable prefix exactly as a provider would receive it (S12, S7)."""

from __future__ import annotations

import click

from .output import CliContext, engine_errors, pass_cli


@click.command("prefix")
@pass_cli
@engine_errors
def prefix(ctx: CliContext) -> None:
    """Print the stable prefix: the memory block, then the instruction block."""
    from ..engine import ContextEngine

    text = ContextEngine(ctx.paths(), keep_index=False).stable_prefix()
    ctx.emit({"prefix": text}, text)


def register(group: click.Group) -> None:
    """Attach ``prefix`` to the top-level CLI."""
    group.add_command(prefix)
