"""Entry point of ``context-engine``: global options, then one command module per area.

Commands are imported only when they run (``lazy.LazyGroup`` over ``registry.TOP_LEVEL``), so
``--help``, ``--version`` and completion of command names start without the engine.
"""

from __future__ import annotations

import click

from .. import __version__
from .lazy import LazyGroup
from .output import CliContext
from .registry import SHORT_HELP, TOP_LEVEL
from .remote_mode import RemoteAwareGroup


class RootGroup(RemoteAwareGroup, LazyGroup):
    """The top-level group: lazily loaded commands, and only the catalog's under ``--remote``."""


@click.group(
    cls=RootGroup,
    entries=TOP_LEVEL,
    short_help_table=SHORT_HELP,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="context-engine")
@click.option(
    "--home", type=click.Path(file_okay=False), help="Reasonix home (also the state root)."
)
@click.option(
    "--workspace", type=click.Path(file_okay=False), help="Workspace directory (default: cwd)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option(
    "--remote",
    metavar="COMMAND",
    help='Use only the catalog served by COMMAND, e.g. "ssh devbox context-engine serve --stdio".',
)
@click.pass_context
def cli(
    ctx: click.Context, home: str | None, workspace: str | None, as_json: bool, remote: str | None
) -> None:
    """Instructions, memory and recall for coding agents (Context Engine v2).

    Global options may also follow the command (``context-engine list --json``).
    """
    if remote and (home or workspace):
        raise click.UsageError("give the workspace in the --remote command, not --home/--workspace")
    ctx.obj = CliContext(home=home, workspace=workspace, json=as_json, remote=remote)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="context-engine")


if __name__ == "__main__":
    main()
