"""``context-engine install|uninstall|doctor <agent>``: set the agents up in one command (S15.1)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..hooks.protocol import AGENTS, Agent
from .output import CliContext, engine_errors, pass_cli

SCOPE_OPTION = click.option(
    "--scope",
    type=click.Choice(["user", "project"]),
    default="user",
    show_default=True,
    help="user: every project (your home's settings); project: this workspace's settings.",
)


def _agent(name: str) -> Agent:
    return next(agent for agent in AGENTS if agent == name)


def _home(ctx: CliContext) -> Path | None:
    """An explicit --home goes into the commands we write; otherwise the agents' default."""
    return Path(ctx.home).absolute() if ctx.home else None


@click.command("install")
@click.argument("agent", type=click.Choice(AGENTS))
@SCOPE_OPTION
@click.option("--dry-run", is_flag=True, help="Show which files would change; write nothing.")
@click.option("--no-trust", is_flag=True, help="Codex: do not trust our hooks (do it in /hooks).")
@pass_cli
@engine_errors
def install_cmd(ctx: CliContext, agent: str, scope: str, dry_run: bool, no_trust: bool) -> None:
    """Add our hooks and MCP server to the agent's settings (merged, with a backup)."""
    from ..install.setup import install

    paths = ctx.paths()
    report = install(
        _agent(agent),
        "project" if scope == "project" else "user",
        paths.root,
        reasonix_home=_home(ctx),
        dry_run=dry_run,
        trust=not no_trust,
    )
    for line in report.lines:
        click.echo(line)
    for line in report.todo:
        click.echo(f"to do: {line}")
    if not dry_run:
        click.echo(f"check it with: context-engine doctor {agent}")


@click.command("uninstall")
@click.argument("agent", type=click.Choice(AGENTS))
@SCOPE_OPTION
@click.option("--dry-run", is_flag=True, help="Show which files would change; write nothing.")
@pass_cli
@engine_errors
def uninstall_cmd(ctx: CliContext, agent: str, scope: str, dry_run: bool) -> None:
    """Remove exactly what install added (untouched files come back byte-identical)."""
    from ..install.setup import uninstall

    paths = ctx.paths()
    report = uninstall(
        _agent(agent), "project" if scope == "project" else "user", paths.root, dry_run=dry_run
    )
    for line in report.lines:
        click.echo(line)


@click.command("doctor")
@click.argument("agent", type=click.Choice(AGENTS), required=False)
@click.option("--scope", type=click.Choice(["user", "project"]), help="Default: both.")
@click.option("--no-agent", is_flag=True, help="Do not run the agent's own `mcp list`.")
@pass_cli
@engine_errors
def doctor_cmd(ctx: CliContext, agent: str | None, scope: str | None, no_agent: bool) -> None:
    """Check the set-up: run each hook once, sizes against the agent's limit, `mcp list`."""
    from ..install.doctor import doctor
    from ..install.targets import Scope

    paths = ctx.paths()
    scopes: tuple[Scope, ...] | None = None
    if scope is not None:
        scopes = ("project",) if scope == "project" else ("user",)
    result = doctor(
        None if agent is None else (_agent(agent),),
        scopes,
        paths.root,
        paths.workspace,
        run_agents=not no_agent,
    )
    for line in result.lines:
        click.echo(line)
    if result.problems:
        click.echo(f"{len(result.problems)} problem(s) found.", err=True)
        sys.exit(1)
    click.echo("all good.")

