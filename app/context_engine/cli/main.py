"""Entry point of ``context-engine``: global options, then one command module per area."""

from __future__ import annotations

import importlib

import click

from .output import CliContext
from .remote_mode import RemoteAwareGroup

# Each module defines ``register(group)``; areas are added here as they land.
COMMAND_MODULES: tuple[str, ...] = (
    "memory_group",
    "instructions_cmds",
    "suggest_cmds",
    "recall_cmds",
    "tool_cmds",
    "facts_cmds",
    "memory_cmds",
    "session_cmds",
    "agent_cmds",
    "serve_cmd",
    "completion_cmds",  # after the fact and memory commands: it adds their shell completers
)


@click.group(cls=RemoteAwareGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
    """Instructions, memory and recall for coding agents (Context Engine v2)."""
    if remote and (home or workspace):
        raise click.UsageError("give the workspace in the --remote command, not --home/--workspace")
    ctx.obj = CliContext(home=home, workspace=workspace, json=as_json, remote=remote)


for _module in COMMAND_MODULES:
    importlib.import_module(f"{__package__}.{_module}").register(cli)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="context-engine")
