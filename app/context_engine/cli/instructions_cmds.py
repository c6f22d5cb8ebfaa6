"""``instructions``, ``memory instructions`` and ``note`` (S6, S12)."""

from __future__ import annotations

from pathlib import Path

import click

from ..instructions import quick_add, resolve_instructions
from ..instructions.report import format_report, resolution_payload
from .memory_group import memory
from .output import CliContext, engine_errors, pass_cli

_TARGET = click.option(
    "--target",
    type=click.Path(),
    default=None,
    help="Path whose instructions to resolve (relative to the current directory; "
    "default: the workspace).",
)


def _show(ctx: CliContext, target: str | None) -> None:
    paths = ctx.paths()
    resolution = resolve_instructions(paths, Path(target) if target else None)
    ctx.emit(resolution_payload(resolution), format_report(resolution))


@click.command("instructions")
@_TARGET
@pass_cli
@engine_errors
def instructions_cmd(ctx: CliContext, target: str | None) -> None:
    """Which instruction files govern a path, in precedence order, with diagnostics."""
    _show(ctx, target)


@memory.command("instructions")
@_TARGET
@pass_cli
@engine_errors
def memory_instructions(ctx: CliContext, target: str | None) -> None:
    """/memory instructions: precedence, real paths, imports and diagnostics."""
    _show(ctx, target)


@click.command("note")
@click.argument("text", nargs=-1, required=True)
@pass_cli
@engine_errors
def note_cmd(ctx: CliContext, text: tuple[str, ...]) -> None:
    """Append a note to the workspace root's instruction file (quick add, S6.8)."""
    path = quick_add(ctx.paths(), " ".join(text))
    ctx.emit({"path": str(path)}, f"remembered → {path}")


def register(group: click.Group) -> None:
    """Attach the instruction commands (``memory instructions`` rides the memory group)."""
    group.add_command(instructions_cmd)
    group.add_command(note_cmd)
