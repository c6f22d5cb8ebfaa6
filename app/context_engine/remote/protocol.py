"""Wire format of the remote catalog: JSON-RPC 2.0, one message per line (issue 8).

Framing is newline-delimited JSON: every message is one UTF-8 JSON object on one line (JSON
text never needs a raw newline: ``json.dumps`` escapes them), so a plain ``ssh`` pipe, a
container exec or a local subprocess carries it unchanged, and a reader needs no header
parsing. The protocol version is agreed in ``initialize``; a server refuses a client whose
major version differs. Documented with examples in ``docs/remote-protocol.md``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import IO, Any

from .. import bounded_json
from ..catalog.errors import Disconnected, ProtocolError, RemoteError, Unavailable
from ..errors import (
    AlreadyActive,
    AlreadyExists,
    ArchiveNotFound,
    ContextEngineError,
    DurabilityUnknown,
    FactFormatError,
    FactNotFound,
    InvalidName,
    LockTimeout,
    ModifiedExternally,
    NameInUse,
    PathEscape,
    PolicyRefused,
    RevisionConflict,
    StoreIOError,
)

JSONRPC = "2.0"
PROTOCOL_VERSION = "1.0"
MAX_LINE = 64 * 1024 * 1024  # one message; a 10,000-fact list is a few MB

# JSON-RPC 2.0 codes, then ours (-32000..-32099 is the server-defined range).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
ENGINE_ERROR = -32001
UNAVAILABLE = -32002
NOT_INITIALIZED = -32003
VERSION_MISMATCH = -32004

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RawJson:
    """A result already serialised as JSON text: spliced into the response unchanged."""

    text: str


def encode_line(message: Message) -> str:
    """One message as one line of JSON (a ``RawJson`` result is spliced in as is)."""
    result = message.get("result")
    if isinstance(result, RawJson):
        head = {k: v for k, v in message.items() if k != "result"}
        return _dumps(head)[:-1] + ',"result":' + result.text + "}\n"
    return _dumps(message) + "\n"


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def major(version: str) -> str:
    """``"1"`` for ``"1.0"``: only a major change breaks compatibility."""
    return version.split(".", 1)[0]


def request(id_: int | str, method: str, params: dict[str, Any] | None = None) -> Message:
    """A request (expects a response with the same id)."""
    return {"jsonrpc": JSONRPC, "id": id_, "method": method, "params": params or {}}


def notification(method: str, params: dict[str, Any] | None = None) -> Message:
    """A notification (no id, no response)."""
    return {"jsonrpc": JSONRPC, "method": method, "params": params or {}}


def result(id_: int | str | None, value: Any) -> Message:
    """A success response."""
    return {"jsonrpc": JSONRPC, "id": id_, "result": value}


def error(
    id_: int | str | None, code: int, message: str, data: dict[str, Any] | None = None
) -> Message:
    """An error response."""
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": JSONRPC, "id": id_, "error": body}


def error_for(id_: int | str | None, exc: ContextEngineError) -> Message:
    """An engine error as a response: ``data.code`` is the engine's stable code."""
    data: dict[str, Any] = {"code": exc.code}
    if isinstance(exc, Unavailable):
        data["capability"] = exc.capability
        return error(id_, UNAVAILABLE, exc.message, data)
    if isinstance(exc, RevisionConflict):
        data.update(expected=exc.expected, found=exc.found)
    elif isinstance(exc, FactFormatError):
        data.update(reason=exc.reason, line=exc.line)
    elif isinstance(exc, DurabilityUnknown):
        data.update(revision=exc.revision)
    return error(id_, ENGINE_ERROR, exc.message, data)


_SIMPLE: dict[str, type[ContextEngineError]] = {
    cls.code: cls
    for cls in (
        InvalidName,
        PathEscape,
        FactNotFound,
        ModifiedExternally,
        AlreadyExists,
        NameInUse,
        ArchiveNotFound,
        AlreadyActive,
        LockTimeout,
        PolicyRefused,
        Disconnected,
    )
}


def exception_from(body: dict[str, Any]) -> ContextEngineError:
    """The engine error an error response stands for (same class where one exists)."""
    message = str(body.get("message", "remote error"))
    raw = body.get("data")
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    code = str(data.get("code", ""))
    if body.get("code") == UNAVAILABLE or code == Unavailable.code:
        return Unavailable(str(data.get("capability", "")), message)
    if code == RevisionConflict.code:
        return RevisionConflict(int(data.get("expected", 0)), int(data.get("found", 0)))
    if code == FactFormatError.code:
        return FactFormatError(str(data.get("reason", "")), message, data.get("line"))
    if code == DurabilityUnknown.code:
        return DurabilityUnknown(message, int(data.get("revision", 0)))
    if code == StoreIOError.code:
        return StoreIOError(message)
    if code in _SIMPLE:
        return _SIMPLE[code](message)
    return RemoteError(code or f"rpc_{body.get('code')}", message)


class LineChannel:
    """One JSON object per line over a pair of byte streams; writes are serialised."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = threading.Lock()

    def send(self, message: Message) -> None:
        """Write one message; ``Disconnected`` when the other side is gone."""
        data = encode_line(message).encode("utf-8")
        with self._lock:
            try:
                self._writer.write(data)
                self._writer.flush()
            except (OSError, ValueError) as exc:
                raise Disconnected("the remote workspace closed the connection") from exc

    def receive(self) -> Message | None:
        """The next message, ``None`` at end of stream; ``ProtocolError`` for a bad line."""
        while True:
            try:
                line = self._reader.readline(MAX_LINE + 1)
            except (OSError, ValueError):
                return None
            if not line:
                return None
            if len(line) > MAX_LINE:
                self._skip_rest_of_line(line)
                raise ProtocolError("message larger than the protocol allows")
            if not line.strip():
                continue
            try:
                message = bounded_json.loads(line, max_bytes=MAX_LINE, what="message")
            except bounded_json.FrameError as exc:
                raise ProtocolError(str(exc)) from None
            if not isinstance(message, dict) or message.get("jsonrpc") != JSONRPC:
                raise ProtocolError("not a JSON-RPC 2.0 message")
            return message

    def _skip_rest_of_line(self, head: bytes) -> None:
        """Drop the rest of an oversized line so the next message starts clean."""
        chunk = head
        while chunk and not chunk.endswith(b"\n"):
            try:
                chunk = self._reader.readline(1 << 20)
            except (OSError, ValueError):
                return

    def close(self) -> None:
        """Close the write side (the peer sees end of stream)."""
        with self._lock:
            try:
                self._writer.close()
            except (OSError, ValueError):
                return
