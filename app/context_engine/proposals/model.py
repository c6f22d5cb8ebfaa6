"""One proposal: the agent's tool call, the policy's reason, and what a person would review."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Proposal:
    """A write kept for review instead of made (S15.2).

    ``revision_from`` is the active revision the write would replace when it was proposed
    (``None``: a new fact); accepting checks it again, so a fact changed since is a conflict.
    """

    id: str
    tool: str
    arguments: Mapping[str, Any]
    reason: str
    agent: str
    session: str
    created_at: str
    reference: str
    content: str
    revision_from: int | None
    digest: str
    diff: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A plain JSON object."""
        data = asdict(self)
        data["arguments"] = dict(self.arguments)
        data["extra"] = dict(self.extra)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Proposal:
        """Parse one stored proposal; raises ``ValueError`` on a malformed entry."""
        try:
            revision = data.get("revision_from")
            arguments = data["arguments"]
            if not isinstance(arguments, Mapping):
                raise ValueError("arguments must be an object")
            return cls(
                id=str(data["id"]),
                tool=str(data["tool"]),
                arguments=dict(arguments),
                reason=str(data["reason"]),
                agent=str(data.get("agent", "")),
                session=str(data.get("session", "")),
                created_at=str(data["created_at"]),
                reference=str(data.get("reference", "")),
                content=str(data.get("content", "")),
                revision_from=int(revision) if isinstance(revision, int) else None,
                digest=str(data["digest"]),
                diff=str(data.get("diff", "")),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed proposal: {exc}") from exc
