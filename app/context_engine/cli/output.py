"""Shared CLI plumbing: the per-invocation context, JSON/text output and error exits (S12)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from ..errors import ContextEngineError
from ..paths import EnginePaths

if TYPE_CHECKING:
    from ..catalog.base import Catalog
    from ..catalog.local import LocalCatalog

P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class CliContext:
    """Global options of one invocation (they come before the command)."""

    home: str | None
    workspace: str | None
    json: bool
    remote: str | None = None  # --remote "<command>": only the remote catalog (issue 8)
    _catalog: Catalog | None = field(default=None, init=False, repr=False, compare=False)

    def paths(self) -> EnginePaths:
        """Resolve the engine paths for this invocation (refused under ``--remote``)."""
        if self.remote:
            from ..catalog.errors import Unavailable

            raise Unavailable("local", "this command needs local files; not available remotely")
        return EnginePaths.resolve(home=self.home, workspace=self.workspace)

    def catalog(self) -> Catalog:
        """The invocation's catalog: remote over ``remote``'s stdio, else in process.

        Created on first use, once per invocation, and closed when the invocation ends.
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

            click.echo(dumps(payload))
        elif text is not None:
            click.echo(text, nl=not text.endswith("\n"))


pass_cli = click.make_pass_decorator(CliContext)


def fail(ctx: CliContext, code: str, message: str) -> None:
    """Report a refused or failed operation and exit 1."""
    if ctx.json:
        click.echo(json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False))
    else:
        click.echo(f"context-engine: {message}", err=True)
    sys.exit(1)


def engine_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn engine errors into exit 1 with a one-line message (S12)."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except ContextEngineError as exc:
            ctx = click.get_current_context().find_object(CliContext)
            fail(ctx or CliContext(None, None, False), exc.code, exc.message)
            raise AssertionError("unreachable") from exc
        except OSError as exc:
            ctx = click.get_current_context().find_object(CliContext)
            fail(ctx or CliContext(None, None, False), "io_error", str(exc))
            raise AssertionError("unreachable") from exc

    return wrapper
