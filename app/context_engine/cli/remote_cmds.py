"""The commands that work on a remote workspace (``--remote``).

``list``, ``read``, ``search``, ``remember``, ``forget``, ``revisions``, ``restore``,
``archived``, ``recover``, ``recall``, ``suggest``, ``accept`` and ``complete`` are the local
commands themselves: they read and write through ``CliContext.catalog()`` (writes are
``apply(op, Person("cli"))`` there and on the server alike). Only ``instructions`` differs:
``--target`` is a path on the server, not one relative to this directory.
"""

from __future__ import annotations

import click

from ..instructions.report import format_report, resolution_payload
from .completion_cmds import complete_cmd
from .facts_cmds import (
    archived_cmd,
    forget_cmd,
    list_cmd,
    read_cmd,
    recover_cmd,
    remember_cmd,
    restore_cmd,
    revisions_cmd,
)
from .output import CliContext, engine_errors, pass_cli
from .recall_cmds import recall_cmd, search_cmd
from .suggest_cmds import accept_cmd, suggest_cmd


@click.command("instructions")
@click.option("--target", default=None, help="A path on the remote machine.")
@pass_cli
@engine_errors
def instructions_cmd(ctx: CliContext, target: str | None) -> None:
    """The remote workspace's instruction files with diagnostics."""
    view = ctx.catalog().instructions(target)
    ctx.emit(resolution_payload(view.resolution), format_report(view.resolution))


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
