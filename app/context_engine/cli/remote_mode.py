"""``--remote "<command>"``: the CLI on a remote workspace's catalog, failing closed (S13.6).

Under ``--remote`` the group resolves a command to its catalog-backed twin in
``remote_cmds``; a command with no twin (it would need local files: ``prefix``, ``note``,
``tool``, sessions, hooks …) fails with ``unavailable`` instead of running locally, and
``CliContext.paths()`` refuses, so nothing reaches the local store, sessions or instruction
files — not even by accident.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from .output import CliContext, fail

if TYPE_CHECKING:
    from ..catalog.base import Catalog


@contextmanager
def open_catalog(ctx: CliContext) -> Iterator[Catalog]:
    """The invocation's catalog (``CliContext.catalog()``; closed when the invocation ends)."""
    yield ctx.catalog()


def _unsupported(name: str) -> click.Command:
    @click.command(name, context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    @click.pass_context
    def command(ctx: click.Context, args: tuple[str, ...]) -> None:
        obj = ctx.find_object(CliContext) or CliContext(None, None, False)
        fail(obj, "unavailable", f"`{name}` is not available for a remote workspace")

    return command


class RemoteAwareGroup(click.Group):
    """A group that swaps in the catalog-backed commands when ``--remote`` is given."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The remote twin under ``--remote``; never the local command."""
        local = super().get_command(ctx, cmd_name)
        if not (ctx.params or {}).get("remote"):
            return local
        from .remote_cmds import REMOTE_COMMANDS

        twin = REMOTE_COMMANDS.get(cmd_name)
        if twin is not None:
            return twin
        return _unsupported(cmd_name) if local is not None else None
