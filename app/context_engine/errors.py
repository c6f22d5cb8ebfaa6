"""One exception tree for the engine.

ContextEngineError                 base; ``code`` is the stable machine-readable name
├── InvalidName                    a name that slugs to nothing (S3.7)
├── PathEscape                     a path built from a name/ref/archive path leaves its root (S2.5)
├── FactNotFound                   an id or ref that resolves to nothing (S4.1)
├── RevisionConflict               expected_revision differs from the active one (S4.2)
├── ModifiedExternally             the file changed on disk since it was read (RELIABILITY C6)
├── AlreadyExists                  create-only write of an active name (S4.2)
├── NameInUse                      rename onto a name held by another id (S4.2)
├── ArchiveNotFound                recover of anything but an archive entry of ours (S4.8)
├── AlreadyActive                  recover of an id or name that is active (S4.8)
├── FactFormatError                a fact file that cannot be read or parsed (S3.4)
├── StoreIOError                   an OS error before the commit point; the store is unchanged
│   └── DurabilityUnknown          committed, but the directory fsync failed (RELIABILITY §1)
├── LockTimeout                    the store lock could not be taken in time
├── PolicyRefused                  the write policy refused a write (S10)
├── Unavailable                    the catalog does not offer a capability (S11.6, S13.6)
├── Disconnected                   a remote catalog's connection is closed
├── ProtocolError                  the other side broke the remote protocol
└── RemoteError                    a server error whose code has no local class (code kept)

Catalog errors never trigger a fallback to local data: a remote catalog that cannot answer
says so instead (exit 1 with the code on the CLI).
"""

from __future__ import annotations

import re

_ABSOLUTE_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:[\\/]|/)[^\s\"'()]+")


class ContextEngineError(Exception):
    """Base of every error the engine raises on purpose."""

    code = "error"

    def __init_subclass__(cls, *, code: str | None = None, **kwargs: object) -> None:
        """Each subclass names its stable ``code`` in its class line."""
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidName(ContextEngineError, code="invalid_name"):
    """A fact name that slugs to nothing."""


class PathEscape(ContextEngineError, code="path_escape"):
    """A path that would resolve outside its store or boundary."""


class FactNotFound(ContextEngineError, code="not_found"):
    """No active fact for the given id or ref."""


class RevisionConflict(ContextEngineError, code="revision_conflict"):
    """The active revision is not the expected one."""

    def __init__(self, expected: int, found: int) -> None:
        super().__init__(f"memory revision conflict: expected {expected}, found {found}")
        self.expected = expected
        self.found = found


class ModifiedExternally(ContextEngineError, code="modified_externally"):
    """The fact file changed on disk after the caller read it."""


class AlreadyExists(ContextEngineError, code="already_exists"):
    """A create-only write found the name already active."""


class NameInUse(ContextEngineError, code="name_in_use"):
    """A rename onto a name that another id holds."""


class ArchiveNotFound(ContextEngineError, code="archive_not_found"):
    """The recover path is not an archive entry of this engine's stores."""


class AlreadyActive(ContextEngineError, code="already_active"):
    """Recover refused: the id or name is active."""


class FactFormatError(ContextEngineError, code="format_error"):
    """A fact file that cannot be decoded or parsed; ``reason`` is a short code."""

    def __init__(self, reason: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.line = line


class StoreIOError(ContextEngineError, code="io_error"):
    """An OS error before the commit point: nothing changed."""

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


class DurabilityUnknown(StoreIOError, code="durability_unknown"):
    """The write is visible but its directory fsync failed."""

    def __init__(self, message: str, revision: int, errno: int | None = None) -> None:
        super().__init__(message, errno)
        self.revision = revision


class LockTimeout(ContextEngineError, code="lock_timeout"):
    """The per-store lock stayed busy past the timeout."""


class PolicyRefused(ContextEngineError, code="refused"):
    """The write policy refused the operation."""



class Unavailable(ContextEngineError, code="unavailable"):
    """The catalog does not offer this capability (e.g. a server started without it)."""

    def __init__(self, capability: str, message: str | None = None) -> None:
        super().__init__(message or f"{capability} is unavailable for this workspace")
        self.capability = capability


class Disconnected(ContextEngineError, code="disconnected"):
    """The remote workspace's connection is closed; call ``reconnect()`` to retry."""


class ProtocolError(ContextEngineError, code="protocol_error"):
    """The other side sent something this protocol version does not allow."""


class RemoteError(ContextEngineError):
    """An engine error raised on the server whose code has no local class; ``code`` is kept."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def public_message(exc: ContextEngineError) -> str:
    """An error message safe for the provider: store I/O details and paths are dropped."""
    if isinstance(exc, StoreIOError | LockTimeout):
        return "the memory store could not be written right now"
    if isinstance(exc, FactFormatError):
        return "an existing memory file could not be read"
    return _ABSOLUTE_PATH.sub("<path>", exc.message).rstrip(".")
