"""Keep a write for review, and a person's accept or dismiss of it (S15.2).

Accepting is the person's explicit action: the call runs again as ``interactive`` through the
same write tool and policy, and the confirmation it asks for is answered yes only when the
write is exactly the one proposed against exactly the revision seen then. Anything else — the
fact changed, appeared or went since — is a conflict, and nothing is written.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..errors import ContextEngineError
from .model import Proposal
from .store import ProposalStore

if TYPE_CHECKING:
    from ..engine import ContextEngine
    from ..paths import EnginePaths
    from ..policy.confirmation import ConfirmationRequest

KEPT_TEXT = (
    "Kept for review, not written: {reason}. No person could be asked, so the write was kept "
    "as proposal {id}; a person can accept it in Context Center (Suggestions) or with "
    "`context-engine proposals accept {id}`."
)
SECRET_TEXT = (
    "Refused: {reason}. It may hold a secret, so it was neither written nor kept for review."
)


class ProposalConflict(ContextEngineError):
    """The fact a proposal would change is not the one it was proposed against any more."""

    code = "conflict"


def store_for(paths: EnginePaths) -> ProposalStore:
    """The workspace's proposals (``<workspace data>/proposals.json``)."""
    return ProposalStore(paths.workspace_data)


def keep(
    paths: EnginePaths,
    tool: str,
    args: Mapping[str, Any],
    request: ConfirmationRequest,
    *,
    agent: str,
    session: str,
) -> Proposal | None:
    """Keep the call as a proposal; ``None`` when it may hold a secret (never kept)."""
    if request.findings:
        return None
    proposal = Proposal(
        id=f"prop-{secrets.token_hex(6)}",
        tool=tool,
        arguments=dict(args),
        reason=request.reason,
        agent=agent,
        session=session,
        created_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        reference=request.reference,
        content=request.content,
        revision_from=request.revision_from,
        digest=request.digest,
        diff=request.diff,
    )
    return store_for(paths).add(proposal)


def kept_text(proposal: Proposal | None, reason: str) -> str:
    """What the agent is told: kept for review (or refused outright for a possible secret)."""
    if proposal is None:
        return SECRET_TEXT.format(reason=reason)
    return KEPT_TEXT.format(reason=reason, id=proposal.id)


class _ExactlyProposed:
    """Yes only to the proposed write, against the revision seen when it was proposed."""

    def __init__(self, proposal: Proposal) -> None:
        self.proposal = proposal
        self.mismatch = False

    def confirm(self, request: ConfirmationRequest) -> bool:
        p = self.proposal
        same = (
            request.digest == p.digest
            and request.revision_from == p.revision_from
            and request.content == p.content
            and request.reference == p.reference
        )
        self.mismatch = not same
        return same


@dataclass(frozen=True, slots=True)
class Accepted:
    """The result of accepting one proposal."""

    proposal: Proposal
    written: bool
    result: str


def accept(engine: ContextEngine, proposal_id: str) -> Accepted:
    """Make the proposed write now, as the person's own action; a changed fact is a conflict."""
    store = store_for(engine.paths)
    proposal = store.get(proposal_id)
    approval = _ExactlyProposed(proposal)
    outcome = _write(engine, proposal, approval)
    if approval.mismatch:
        raise ProposalConflict(
            f"{proposal.reference or 'the fact'} changed since proposal {proposal.id} was kept; "
            "nothing was written (dismiss it, or ask the agent again)"
        )
    if not outcome.ran:
        raise ProposalConflict(f"proposal {proposal.id} was not written: {outcome.result}")
    store.remove(proposal.id)
    return Accepted(proposal, outcome.written, outcome.result)


def _write(engine: ContextEngine, proposal: Proposal, approval: _ExactlyProposed) -> Any:
    """The one place a proposal is written: the write tool through the catalog's door."""
    return engine.run_tool(
        proposal.tool, proposal.arguments, controller="interactive", confirmation=approval
    )


def dismiss(paths: EnginePaths, proposal_id: str) -> Proposal:
    """Drop a proposal unwritten."""
    return store_for(paths).remove(proposal_id)
