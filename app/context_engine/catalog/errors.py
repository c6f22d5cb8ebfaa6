"""The catalog layer's errors, defined in the engine's one exception tree (``errors.py``)."""

from __future__ import annotations

from ..errors import Disconnected, ProtocolError, RemoteError, Unavailable

__all__ = ["Disconnected", "ProtocolError", "RemoteError", "Unavailable"]
