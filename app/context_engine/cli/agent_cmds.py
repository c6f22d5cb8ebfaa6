"""``context-engine mcp`` and ``context-engine hook <agent> [event]``: serve other agents.

Both keep their imports inside the command: a hook is one short process per prompt.
"""

from __future__ import annotations

import sys

import click

from ..hooks.protocol import AGENTS, Agent
from .output import CliContext, pass_cli


@click.command("mcp")
@pass_cli
def mcp(ctx: CliContext) -> None:
    """Serve the memory, remember and forget tools over MCP on stdin/stdout."""
    from ..engine import ContextEngine
    from ..tools.mcp_server import EngineToolHost, run_stdio

    with ContextEngine(ctx.paths(), watch=True) as engine:
        run_stdio(EngineToolHost(engine))


@click.command("hook")
@click.argument("agent", type=click.Choice(AGENTS))
@click.argument("event", required=False)
@click.option(
    "--with-instructions",
    is_flag=True,
    help="SessionStart also adds the # Instructions block (REASONIX.md, AGENTS.md, …).",
)
@pass_cli
def hook(ctx: CliContext, agent: str, event: str | None, with_instructions: bool) -> None:
    """Answer one agent hook: JSON on stdin, the context to add as JSON on stdout.

    Events: SessionStart (the memory block) and UserPromptSubmit — BeforeAgent for Gemini
    CLI — (recall block and turn-tail notes). The event defaults to the payload's
    hook_event_name. Always exits 0; on any problem it adds nothing.
    """
    from ..hooks.runner import run

    chosen: Agent = "claude-code"
    for name in AGENTS:  # narrow the click string to the literal type
        if name == agent:
            chosen = name
    code = run(
        chosen, event, home=ctx.home, workspace=ctx.workspace, with_instructions=with_instructions
    )
    sys.exit(code)


def register(group: click.Group) -> None:
    """Attach ``mcp`` and ``hook`` to the top-level CLI."""
    group.add_command(mcp)
    group.add_command(hook)
