"""``context-engine tool <memory|remember|forget> --args JSON`` — the agent-tool path (S12, S10).

It always prints the decision object ``{"decision", "reason", "written", "result"}`` and exits
0 when the tool ran, 1 when it was refused or failed. A person is asked on the terminal only
when the controller is ``interactive`` and stdin is a TTY; otherwise confirmation fails closed.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .. import bounded_json
from ..facts.memory import Memory
from ..policy.confirmation import ConfirmationService, FailClosedConfirmation, TerminalConfirmation
from ..policy.write_policy import CONTROLLER_KINDS, MODES, Controller, ControllerKind
from ..session.privacy import Scrubber
from ..tools.spec import TOOL_NAMES
from ..tools.write import run_agent_tool
from .output import CliContext, engine_errors, pass_cli


def stdin_is_tty() -> bool:
    """Whether a person can answer a prompt (a seam for tests)."""
    return sys.stdin.isatty()


def confirmation_for(controller: ControllerKind) -> ConfirmationService:
    """Terminal prompt for an interactive controller on a TTY; fail closed otherwise (S10.6)."""
    if controller == "interactive" and stdin_is_tty():
        return TerminalConfirmation()
    return FailClosedConfirmation()


def _parse_args(text: str) -> dict[str, Any]:
    try:
        value = bounded_json.loads(text, what="--args")
    except bounded_json.FrameError as exc:
        raise click.BadParameter(str(exc), param_hint="--args") from None
    if not isinstance(value, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--args")
    return value


@click.command("tool")
@click.argument("name", type=click.Choice(TOOL_NAMES))
@click.option(
    "--args",
    "args_json",
    required=True,
    help="The tool's arguments as a JSON object ('-' reads it from stdin).",
)
@click.option(
    "--controller",
    type=click.Choice(CONTROLLER_KINDS),
    default="interactive",
    show_default=True,
    help="Who is acting (S1).",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="ask",
    show_default=True,
    help="Approval mode; never bypasses the write policy (S10.4).",
)
@pass_cli
@engine_errors
def tool(ctx: CliContext, name: str, args_json: str, controller: str, mode: str) -> None:
    """Run an agent tool through the write policy and print its decision object."""
    args = _parse_args(sys.stdin.read() if args_json == "-" else args_json)
    paths = ctx.paths()
    who: ControllerKind = "subagent"
    for kind in CONTROLLER_KINDS:  # narrow the click string to the literal type
        if kind == controller:
            who = kind
    scrub = Scrubber.for_paths(paths)
    outcome = run_agent_tool(
        Memory(paths), name, args, Controller(who), mode, confirmation_for(who), clean=scrub
    )
    payload = outcome.as_json()
    payload["reason"] = scrub(outcome.reason)
    payload["result"] = scrub(outcome.result)
    click.echo(json.dumps(payload, ensure_ascii=False, indent=2 if ctx.json else None))
    sys.exit(0 if outcome.ran else 1)


def register(group: click.Group) -> None:
    """Attach ``tool`` to the top-level CLI."""
    group.add_command(tool)
