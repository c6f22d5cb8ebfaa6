"""Approval notifications that leave the process (desktop, MCP): the tool name only (S7.4)."""

from __future__ import annotations

from .confirmation import ConfirmationRequest


def approval_notification(request: ConfirmationRequest) -> str:
    """Text for a notification outside the process; never the fact's name, reason or content."""
    return f"Reasonix is waiting for your approval of a `{request.tool}` memory call."
