"""``--remote "<command>"``: the CLI on a remote workspace's catalog, failing closed (S13.6).

Under ``--remote`` the group resolves a command through ``remote_cmds.REMOTE_COMMANDS``: most
are the local commands themselves, which read and write through ``CliContext.catalog()`` (a
``RemoteCatalog`` here), a few are twins whose remote form differs. A command not listed (it
would need local files: ``prefix``, ``note``, ``tool``, sessions, hooks …) fails with
``unavailable`` instead of running locally, and ``CliContext.paths()`` refuses, so nothing
reaches the local store, sessions or instruction files — not even by accident.
"""

from __future__ import annotations

import click

from .output import CliContext, fail


def _unsupported(name: str) -> click.Command:
    @click.command(name, context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    @click.pass_context
    def command(ctx: click.Context, args: tuple[str, ...]) -> None:
        obj = ctx.find_object(CliContext) or CliContext(None, None, False)
        fail(obj, "unavailable", f"`{name}` is not available for a remote workspace")

    return command


class RemoteAwareGroup(click.Group):
    """A group that offers only the catalog-backed commands when ``--remote`` is given."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Under ``--remote``: the catalog-backed command, never one that reads local files."""
        local = super().get_command(ctx, cmd_name)
        if not (ctx.params or {}).get("remote"):
            return local
        from .remote_cmds import REMOTE_COMMANDS

        twin = REMOTE_COMMANDS.get(cmd_name)
        if twin is not None:
            return twin
        return _unsupported(cmd_name) if local is not None else None
