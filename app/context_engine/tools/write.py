"""The agent's ``remember`` and ``forget`` tools as ops for the catalog's one door (S9.2, S10).

A tool call becomes a ``Save`` or ``Forget`` op with an ``Agent`` actor; the catalog's
``apply`` runs the write policy, asks a person when it must, and writes. Bad arguments are
answered here with the tool's own error wording, before anything reaches the catalog.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from ..catalog.ops import Actor, Agent, Forget, Op, Save, WriteOutcome
from ..facts.refs import PATH_REF_ERROR, looks_like_path
from ..policy.write_policy import MODES, ToolArgumentError, parse_forget_args
from .spec import (
    FORGET_DESCRIPTION,
    FORGET_SCHEMA,
    FORGET_TOOL,
    REMEMBER_DESCRIPTION,
    REMEMBER_SCHEMA,
    REMEMBER_TOOL,
)

__all__ = [
    "FORGET_DESCRIPTION",
    "FORGET_SCHEMA",
    "PATH_REF_ERROR",
    "READ_ONLY_REASON",
    "REMEMBER_DESCRIPTION",
    "REMEMBER_SCHEMA",
    "canonical_args",
    "looks_like_path",
    "run_write_tool",
    "tool_op",
]

READ_ONLY_REASON = "read-only tool"


class WriteDoor(Protocol):
    """The part of a catalog a write tool needs: the one door."""

    def apply(self, op: Op, actor: Actor) -> WriteOutcome:
        """Run one op for one actor."""
        ...


def tool_op(tool: str, args: Mapping[str, object]) -> Save | Forget:
    """The op a ``remember`` or ``forget`` call asks for; bad arguments raise the tool's error."""
    if tool == REMEMBER_TOOL:
        return Save.from_args(args)
    if tool == FORGET_TOOL:
        return Forget(parse_forget_args(args))
    raise ToolArgumentError(f"unknown write tool: {tool}")


def canonical_args(tool: str, args: Mapping[str, object]) -> Mapping[str, object]:
    """The arguments as the policy sees them (what a one-time approval is bound to, S10.3)."""
    try:
        op = tool_op(tool, args)
    except ToolArgumentError:
        return args
    return op.args() if isinstance(op, Save) else {"name": op.ref}


def run_write_tool(
    catalog: WriteDoor, tool: str, args: Mapping[str, object], agent: Agent
) -> WriteOutcome:
    """Run ``remember`` or ``forget`` for ``agent`` through ``catalog.apply``."""
    try:
        if agent.mode not in MODES:
            raise ToolArgumentError("mode must be one of ask, auto, yolo")
        op = tool_op(tool, args)
    except ToolArgumentError as exc:
        return WriteOutcome("denied", exc.message, False, f"Error: {exc.message}", False)
    return catalog.apply(op, agent)
