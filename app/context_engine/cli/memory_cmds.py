"""``memory`` (bare: the summary) (S12); ``--json`` gives the summary as one object.

``memory revisions|restore|archived|recover`` are the top-level commands themselves (the
registry points the ``memory`` group's entries at them), so they behave the same.
"""

from __future__ import annotations

import click

from .memory_group import memory
from .output import CliContext, engine_errors, pass_cli
from .reads import summary

__all__ = ["page", "summary", "summary_cmd"]


@memory.command("summary")
@pass_cli
@engine_errors
def summary_cmd(ctx: CliContext) -> None:
    """Instructions, facts (id, revision, scope, type, freshness), archive and store locations."""
    payload, text = summary(ctx.catalog())
    if ctx.json:
        ctx.emit(payload, text)
    else:
        page(text)


def page(text: str) -> None:
    """Through a pager on a terminal like git (``$PAGER``, else ``less -FRX``); plain if piped."""
    import os
    import sys

    if not sys.stdout.isatty():
        click.echo(text)
        return
    os.environ.setdefault("LESS", "FRX")  # short output prints and exits, as with git
    click.echo_via_pager(text)


def register(group: click.Group) -> None:
    """The subcommands ride the ``memory`` group (registered by ``memory_group``)."""
    del group
