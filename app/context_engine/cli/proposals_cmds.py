"""``context-engine proposals [list] | show | accept | dismiss``: writes kept for review (S15.2).

Accepting is the person's own action (S10.5): the write runs through the one write path, and a
fact changed since the proposal is a conflict (exit 1), never an overwrite.
"""

from __future__ import annotations

import click

from .output import CliContext, engine_errors, pass_cli


@click.group("proposals", invoke_without_command=True)
@click.pass_context
def proposals(ctx: click.Context) -> None:
    """Writes an agent asked for when no person could confirm them (bare: list)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_cmd)


@proposals.command("list")
@pass_cli
@engine_errors
def list_cmd(ctx: CliContext) -> None:
    """Every kept proposal: id, time, agent, session, the write and the policy's reason."""
    from ..proposals.review import store_for

    kept = store_for(ctx.paths()).entries()
    lines = [
        f"{p.id}  {p.created_at}  {p.agent} ({p.session})  {p.tool} {p.reference}\n"
        f"    why a person must confirm: {p.reason}"
        for p in kept
    ]
    text = "\n".join(lines) if lines else "No proposals."
    ctx.emit({"proposals": [p.to_json() for p in kept]}, text)


@proposals.command("show")
@click.argument("proposal_id")
@pass_cli
@engine_errors
def show_cmd(ctx: CliContext, proposal_id: str) -> None:
    """One proposal with the full content (or diff) that accepting would write."""
    from ..proposals.review import store_for

    p = store_for(ctx.paths()).get(proposal_id)
    text = (
        f"{p.id}  {p.created_at}  {p.agent} ({p.session})\n{p.tool} {p.reference}\n"
        f"why a person must confirm: {p.reason}\n\n{p.diff or p.content}"
    )
    ctx.emit(p.to_json(), text)


@proposals.command("accept")
@click.argument("proposal_id")
@pass_cli
@engine_errors
def accept_cmd(ctx: CliContext, proposal_id: str) -> None:
    """Make the proposed write now (a conflict if the fact changed since)."""
    from ..engine import ContextEngine
    from ..proposals.review import accept

    done = accept(ContextEngine(ctx.paths()), proposal_id)
    payload = {"id": done.proposal.id, "written": done.written, "result": done.result}
    ctx.emit(payload, done.result)


@proposals.command("dismiss")
@click.argument("proposal_id")
@pass_cli
@engine_errors
def dismiss_cmd(ctx: CliContext, proposal_id: str) -> None:
    """Drop a proposal; nothing is written."""
    from ..proposals.review import dismiss

    gone = dismiss(ctx.paths(), proposal_id)
    ctx.emit({"id": gone.id, "dismissed": True}, f"Dismissed {gone.id}; nothing was written.")

