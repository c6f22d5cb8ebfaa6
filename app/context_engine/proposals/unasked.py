"""A write that needs a person when none can be asked is kept as a proposal (S15.2).

The one path for every surface that has no person to ask: the MCP server (a client without
elicitation, or a headless agent that answers for nobody) and ``context-engine tool
--controller headless``. The call first runs with a fail-closed confirmation that remembers
what a person was wanted for; that request is then kept for review (never a possible secret).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engine import ContextEngine
    from ..policy.confirmation import ConfirmationRequest
    from .model import Proposal


class AskedNobody:
    """Fail-closed confirmation that remembers the request a person was wanted for."""

    def __init__(self) -> None:
        self.request: ConfirmationRequest | None = None

    def confirm(self, request: ConfirmationRequest) -> bool:
        """Refuse, keeping the request."""
        self.request = request
        return False


def new_session(surface: str) -> str:
    """A session id for the proposals one process keeps (``mcp-…``, ``tool-…``)."""
    return f"{surface}-{secrets.token_hex(4)}"


def keep_unasked(
    engine: ContextEngine,
    tool: str,
    args: Mapping[str, Any],
    request: ConfirmationRequest,
    reason: str,
    *,
    agent: str,
    session: str,
) -> tuple[Proposal | None, str]:
    """Keep the call for review; the proposal (None: a possible secret, refused) and the
    scrubbed text the caller is told."""
    from .review import keep, kept_text

    proposal = keep(engine.paths, tool, args, request, agent=agent, session=session)
    return proposal, engine.scrub(kept_text(proposal, reason))
