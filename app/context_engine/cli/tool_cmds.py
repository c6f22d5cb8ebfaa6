"""``context-engine tool <memory|remember|forget> --args JSON`` — the agent-tool path (S12, S10).

It is ``ContextEngine.run_tool`` — the path every agent host takes: the ``memory`` tool reads
the engine's live (persisted) index, the write tools are an op for the catalog's one door with
an ``Agent`` actor. It always prints the decision object ``{"decision", "reason", "written",
"result"}`` and exits 0 when the tool ran, 1 when it was refused or failed. The engine's rule
decides who is asked (``default_confirmation``): a terminal prompt only for an ``interactive``
controller when stdin and stderr (where the prompt goes) are both a TTY; else fail closed.
A ``headless`` write that needs a person is kept as a proposal for review (S15.2), through the
MCP server's path (``proposals.unasked``); it is not written, so the exit code stays 1.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from .. import bounded_json
from ..policy.write_policy import CONTROLLER_KINDS, MODES, ControllerKind, Mode
from ..tools.spec import TOOL_NAMES
from .output import CliContext, engine_errors, pass_cli

if TYPE_CHECKING:
    from ..catalog.ops import WriteOutcome
    from ..engine import ContextEngine


def _parse_args(text: str) -> dict[str, Any]:
    try:
        value = bounded_json.loads(text, what="--args")
    except bounded_json.FrameError as exc:
        raise click.BadParameter(str(exc), param_hint="--args") from None
    if not isinstance(value, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--args")
    return value


def _run_or_keep(
    engine: ContextEngine, name: str, args: dict[str, Any], mode: Mode
) -> WriteOutcome:
    """A headless write: what needs a person is kept as a proposal, as the MCP server does."""
    from ..proposals.unasked import AskedNobody, keep_unasked, new_session

    asked = AskedNobody()
    outcome = engine.run_tool(name, args, controller="headless", confirmation=asked, mode=mode)
    if outcome.ran or asked.request is None:
        return outcome
    _, text = keep_unasked(engine, name, args, asked.request, outcome.reason,
                           agent="context-engine tool", session=new_session("tool"))
    return replace(outcome, result=text)


@click.command("tool")
@click.argument("name", type=click.Choice(TOOL_NAMES))
@click.option(
    "--args",
    "args_json",
    required=True,
    help="The tool's arguments as a JSON object ('-' reads it from stdin).",
)
@click.option("--controller", type=click.Choice(CONTROLLER_KINDS), default="interactive",
              show_default=True, help="Who is acting (S1).")
@click.option("--mode", type=click.Choice(MODES), default="ask", show_default=True,
              help="Approval mode; never bypasses the write policy (S10.4).")
@pass_cli
@engine_errors
def tool(ctx: CliContext, name: str, args_json: str, controller: str, mode: str) -> None:
    """Run an agent tool through the write policy and print its decision object."""
    from ..engine import ContextEngine

    args = _parse_args(sys.stdin.read() if args_json == "-" else args_json)
    who: ControllerKind = next((k for k in CONTROLLER_KINDS if k == controller), "subagent")
    how: Mode = next((m for m in MODES if m == mode), "ask")
    engine = ContextEngine(ctx.paths())
    if who == "headless" and name != "memory":
        outcome = _run_or_keep(engine, name, args, how)
    else:
        outcome = engine.run_tool(name, args, controller=who, mode=how)  # results come scrubbed
    payload = outcome.as_json()
    click.echo(json.dumps(payload, ensure_ascii=False, indent=2 if ctx.json else None))
    sys.exit(0 if outcome.ran else 1)


def register(group: click.Group) -> None:
    """Attach ``tool`` to the top-level CLI."""
    group.add_command(tool)
