"""The S12 ``suggest`` object, shared by the CLI and the remote wire format."""

from __future__ import annotations

from typing import Any

from .model import Suggestions


def suggestions_json(result: Suggestions) -> dict[str, Any]:
    """The S12 ``suggest`` object."""
    return {
        "available": result.available,
        "memories": [
            {
                "id": m.id,
                "name": m.name,
                "title": m.title,
                "description": m.description,
                "type": m.type,
                "scope": m.scope,
                "reason": m.reason,
                "evidence": list(m.evidence),
                "body": m.body,
            }
            for m in result.memories
        ],
        "skills": [
            {
                "id": s.id,
                "name": s.name,
                "description": s.description,
                "evidence": list(s.evidence),
                "body": s.body,
            }
            for s in result.skills
        ],
    }
