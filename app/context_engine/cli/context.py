"""The per-invocation context and output of a command, without click (S12, issue 14).

``click.echo``'s behaviour for text is kept exactly: where it could differ (ANSI codes to strip,
a stream that is not UTF-8, or click already loaded) the text goes through ``click.echo``
itself. So the plain read commands (``cli/fast.py``) can print without importing click, and
every command prints the same bytes either way.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from ..paths import EnginePaths
from .pipe import WIDE_OUTPUT, widen_pipe

if TYPE_CHECKING:
    from ..catalog.base import Catalog
    from ..catalog.local import LocalCatalog


def echo(text: str, *, nl: bool = True, err: bool = False) -> None:
    """``click.echo(text, nl=nl, err=err)``."""
    stream = sys.stderr if err else sys.stdout
    if "click" in sys.modules or "\x1b" in text or not _plain_utf8(stream):
        import click

        click.echo(text, nl=nl, err=err)
        return
    if stream is None:  # no standard stream attached (click prints nothing either)
        return
    out = f"{text}\n" if nl else text
    if out:
        stream.write(out)
    stream.flush()


def echo_bytes(data: bytes) -> None:
    """``echo(data.decode())``: UTF-8 text written as it is when the stream would encode it so.

    A listing of 100,000 facts is tens of megabytes: decoding and encoding it again would cost
    more than the query that printed it.
    """
    echo_parts([data])


def echo_parts(parts: list[bytes]) -> None:
    """``echo(b"".join(parts).decode())``, written part by part when the stream allows.

    The parts of a listing are its chunks (``PrintedFacts.parts``): joining them first would
    copy the whole listing once more.
    """
    stream = sys.stdout
    binary = getattr(stream, "buffer", None)
    if (
        "click" in sys.modules
        or binary is None
        or any(b"\x1b" in part for part in parts)
        or not _plain_utf8(stream)
    ):
        echo(b"".join(parts).decode("utf-8"))
        return
    stream.flush()
    if sum(map(len, parts)) >= WIDE_OUTPUT:
        widen_pipe(binary)
    for part in parts:
        binary.write(part)
    binary.write(b"\n")
    binary.flush()


class StreamedListing:
    """A listing written to standard output chunk by chunk, as the derived index prints it.

    ``head`` goes before the first chunk and ``separator`` between two; ``size`` counts the
    bytes written. Only where ``echo_parts`` would write the bytes as they are
    (``streamed_listing``), and only for text without ESC (JSON escapes it).
    """

    def __init__(self, binary: Any, head: bytes, separator: bytes) -> None:
        widen_pipe(binary)  # a listing streamed is a long one
        self._binary = binary
        self._head = head
        self._separator = separator
        self.size = 0

    def chunk(self, data: bytes) -> None:
        """One more chunk of the listing."""
        if self.size:
            self._write(self._separator)
        else:
            sys.stdout.flush()
            self._write(self._head)
        self._write(data)

    def finish(self, tail: bytes) -> None:
        """The listing's end."""
        self._write(tail)
        self._binary.flush()

    def _write(self, data: bytes) -> None:
        self._binary.write(data)
        self.size += len(data)


def streamed_listing(head: bytes, separator: bytes) -> StreamedListing | None:
    """A ``StreamedListing`` on standard output, or ``None`` where ``echo`` must judge the text."""
    stream = sys.stdout
    binary = getattr(stream, "buffer", None)
    if "click" in sys.modules or binary is None or not _plain_utf8(stream):
        return None
    return StreamedListing(binary, head, separator)


def _plain_utf8(stream: Any) -> bool:
    """A text stream click would write to as it is (its encoding UTF-8)."""
    encoding = getattr(stream, "encoding", None)
    return isinstance(encoding, str) and encoding.lower().replace("_", "-") in ("utf-8", "utf8")


class CliContext:
    """Global options of one invocation (they come before the command)."""

    __slots__ = ("_catalog", "home", "json", "remote", "workspace")

    def __init__(
        self, home: str | None, workspace: str | None, json: bool, remote: str | None = None
    ) -> None:
        self.home = home
        self.workspace = workspace
        self.json = json
        self.remote = remote  # --remote "<command>": only the remote catalog (issue 8)
        self._catalog: Catalog | None = None

    def paths(self) -> EnginePaths:
        """Resolve the engine paths for this invocation (refused under ``--remote``)."""
        if self.remote:
            from ..catalog.errors import Unavailable

            raise Unavailable("local", "this command needs local files; not available remotely")
        return EnginePaths.resolve(home=self.home, workspace=self.workspace)

    def catalog(self) -> Catalog:
        """The invocation's catalog: remote over ``remote``'s stdio, else in process.

        Created on first use, once per invocation, and closed when the invocation ends (the
        click invocation's close; without click, the caller's ``close_catalog``).
        Writes ask this terminal to confirm what a write policy requires (no TTY: refused).
        """
        if self._catalog is None:
            from ..policy.confirmation import default_confirmation

            confirmation = default_confirmation("interactive")
            catalog: Catalog
            if self.remote:
                from ..catalog.remote import RemoteCatalog

                catalog = RemoteCatalog(self.remote, confirmation=confirmation)
            else:
                from ..catalog.local import LocalCatalog

                catalog = LocalCatalog(self.paths(), confirmation=confirmation)
            self._catalog = catalog
            if "click" in sys.modules:
                import click

                click_ctx = click.get_current_context(silent=True)
                if click_ctx is not None:
                    click_ctx.find_root().call_on_close(self.close_catalog)
        return self._catalog

    def local(self) -> LocalCatalog:
        """The invocation's in-process catalog (refused under ``--remote``)."""
        from ..catalog.local import LocalCatalog

        self.paths()  # raises under --remote
        catalog = self.catalog()
        assert isinstance(catalog, LocalCatalog)
        return catalog

    def close_catalog(self) -> None:
        """Close the invocation's catalog if one was opened (idempotent)."""
        catalog, self._catalog = self._catalog, None
        if catalog is not None:
            catalog.close()

    def emit(self, payload: dict[str, Any], text: str | None = None) -> None:
        """Print one JSON object (``--json``) or the text form."""
        if self.json:
            from .pretty_json import dumps

            echo(dumps(payload))
        elif text is not None:
            echo(text, nl=not text.endswith("\n"))


def fail(ctx: CliContext, code: str, message: str) -> NoReturn:
    """Report a refused or failed operation and exit 1."""
    if ctx.json:
        echo(json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False))
    else:
        echo(f"context-engine: {message}", err=True)
    sys.exit(1)
