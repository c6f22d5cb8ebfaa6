"""Bounded frames for the MCP server: a bad, deep or huge line gets a JSON-RPC error.

The MCP library parses each stdin line itself and drops lines it cannot parse without an
answer. ``BoundedLines`` sits between stdin and the library: every line is checked with
``bounded_json`` first; a refused line (too large, too deep, or not JSON) is answered with
``-32700`` (carrying the request id when one is visible before any nesting) and never reaches
the library, and the next line is served.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .. import bounded_json

MAX_LINE = 64 * 1024 * 1024
PARSE_ERROR = -32700
_ID = re.compile(r'^\s*\{[^\[{]{0,512}?"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,256}")')


def visible_id(line: str) -> int | str | None:
    """The request id when it appears at the top level before any nested value."""
    match = _ID.match(line[:1024])
    if match is None:
        return None
    raw = match.group(1)
    return raw[1:-1] if raw.startswith('"') else int(raw)


class BoundedLines:
    """An async line source for ``stdio_server`` that refuses oversized or too-deep frames."""

    def __init__(self, source: io.TextIOBase, *, max_line: int = MAX_LINE) -> None:
        import anyio

        self._source = source
        self._max_line = max_line
        self._attached = anyio.Event()
        self._writer: Any = None

    def attach(self, write_stream: Any) -> None:
        """Where refusals are written (the server's own write stream: no torn frames)."""
        self._writer = write_stream
        self._attached.set()

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._readline(self._max_line + 1)
            if not line:
                raise StopAsyncIteration
            if len(line) > self._max_line:
                while line and not line.endswith("\n"):
                    line = await self._readline(1 << 20)
                await self._refuse(None, f"frame is larger than {self._max_line} characters")
                continue
            try:
                if line.strip():
                    bounded_json.loads(line, max_bytes=self._max_line * 4)
            except bounded_json.FrameError as exc:
                # The library drops an unparseable line without a word; JSON-RPC wants -32700.
                await self._refuse(visible_id(line), str(exc))
                continue
            return line

    async def _readline(self, limit: int) -> str:
        import anyio

        return await anyio.to_thread.run_sync(self._source.readline, limit)

    async def _refuse(self, request_id: int | str | None, message: str) -> None:
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        await self._attached.wait()
        error = types.JSONRPCError(
            jsonrpc="2.0", id=request_id, error=types.ErrorData(code=PARSE_ERROR, message=message)
        )
        await self._writer.send(SessionMessage(error))


@contextmanager
def claimed_stdio() -> Iterator[tuple[io.TextIOWrapper, io.TextIOWrapper]]:
    """The wire as private text streams; fd 0 reads EOF and fd 1 goes to stderr meanwhile, so
    stray output of handlers and children never lands on the wire (as ``stdio_server`` does)."""
    wire_in_fd, wire_out_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    wire_in = open(wire_in_fd, encoding="utf-8", errors="replace", newline="\n")  # noqa: SIM115
    wire_out = open(wire_out_fd, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
    try:
        yield wire_in, wire_out
    finally:
        wire_out.flush()
        os.dup2(wire_in_fd, 0)
        os.dup2(wire_out_fd, 1)
        wire_in.close()
        wire_out.close()
