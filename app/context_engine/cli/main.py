"""Entry point of ``context-engine``: global options, then one command module per area."""

from __future__ import annotations

import importlib

import click

from .output import CliContext

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
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--home", type=click.Path(file_okay=False), help="Reasonix home (also the state root).")
@click.option("--workspace", type=click.Path(file_okay=False), help="Workspace directory (default: cwd).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.pass_context
def cli(ctx: click.Context, home: str | None, workspace: str | None, as_json: bool) -> None:
    """Instructions, memory and recall for coding agents (Context Engine v2)."""
    ctx.obj = CliContext(home=home, workspace=workspace, json=as_json)


for _module in COMMAND_MODULES:
    importlib.import_module(f"{__package__}.{_module}").register(cli)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="context-engine")
