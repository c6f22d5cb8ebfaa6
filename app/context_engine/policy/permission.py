"""One-time write permission bound to the exact tool arguments (S10.3).

A permission is granted for one tool and one canonical-JSON digest of its arguments, and is
consumed by exactly one write; a replay with the same arguments needs a new decision.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from ..errors import PolicyRefused


def argument_digest(tool: str, args: Mapping[str, object]) -> str:
    """sha256 of the canonical JSON of ``[tool, args]`` (sorted keys, no spaces)."""
    canonical = json.dumps(
        [tool, dict(args)], sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Permission:
    """Leave to perform one write of exactly these arguments."""

    def __init__(self, tool: str, args: Mapping[str, object]) -> None:
        self.tool = tool
        self.digest = argument_digest(tool, args)
        self._used = False

    @property
    def used(self) -> bool:
        """True once a write consumed it."""
        return self._used

    def consume(self, tool: str, args: Mapping[str, object]) -> None:
        """Spend the permission on this write; refuse a replay or different arguments."""
        if self._used:
            raise PolicyRefused(
                "the write permission was already used; a new write needs a new decision"
            )
        if tool != self.tool or argument_digest(tool, args) != self.digest:
            raise PolicyRefused("the write permission was granted for different arguments")
        self._used = True
