"""Errors of the catalog layer: a missing capability and a lost connection (S11.6, S13.6).

Both are engine errors (exit 1 with a code on the CLI), and neither ever triggers a fallback to
local data: a remote catalog that cannot answer says so instead.
"""

from __future__ import annotations

from ..errors import ContextEngineError


class Unavailable(ContextEngineError):
    """The catalog does not offer this capability (e.g. a server started without it)."""

    code = "unavailable"

    def __init__(self, capability: str, message: str | None = None) -> None:
        super().__init__(message or f"{capability} is unavailable for this workspace")
        self.capability = capability


class Disconnected(ContextEngineError):
    """The remote workspace's connection is closed; call ``reconnect()`` to retry."""

    code = "disconnected"


class ProtocolError(ContextEngineError):
    """The other side sent something this protocol version does not allow."""

    code = "protocol_error"


class RemoteError(ContextEngineError):
    """An engine error raised on the server whose code has no local class; ``code`` is kept."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
