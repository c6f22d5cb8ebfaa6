"""``complete refs|archives`` and shell completion of refs and archive paths (S12).

Both come from one engine call, ``Catalog.complete``: in process for a local workspace, over
the remote protocol under ``--remote``. Shell completion uses click's own protocol
(``_CONTEXT_ENGINE_COMPLETE=bash_source|zsh_source|fish_source context-engine`` prints the
script); the ref and archive-path arguments named in ``registry.COMPLETED_ARGUMENTS`` complete
through :func:`completer`, attached when their command loads.
"""

from __future__ import annotations

from collections.abc import Callable

import click
from click.shell_completion import CompletionItem

from ..catalog.base import COMPLETION_KINDS, Catalog, CompletionKind
from ..errors import ContextEngineError
from ..paths import EnginePaths
from .output import CliContext, engine_errors, pass_cli


def _catalog_for_completion(ctx: click.Context) -> Catalog:
    """The catalog the command line being completed names (global options already parsed)."""
    params = ctx.find_root().params
    remote = params.get("remote")
    if remote:
        from ..catalog.remote import RemoteCatalog

        return RemoteCatalog(str(remote), timeout=10.0)
    from ..catalog.local import LocalCatalog

    paths = EnginePaths.resolve(home=params.get("home"), workspace=params.get("workspace"))
    return LocalCatalog(paths)


def completer(
    kind: CompletionKind,
) -> Callable[[click.Context, click.Parameter, str], list[CompletionItem]]:
    """A click ``shell_complete`` callback for refs or archive paths; errors complete nothing."""

    def complete(
        ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        try:
            catalog = _catalog_for_completion(ctx)
        except (ContextEngineError, OSError):
            return []
        try:
            items = catalog.complete(kind, incomplete)
        except (ContextEngineError, OSError):
            return []
        finally:
            catalog.close()
        return [CompletionItem(item) for item in items]

    return complete


@click.command("complete")
@click.argument("kind", type=click.Choice(COMPLETION_KINDS))
@click.option("--prefix", default="", help="Only candidates starting with this text.")
@pass_cli
@engine_errors
def complete_cmd(ctx: CliContext, kind: CompletionKind, prefix: str) -> None:
    """Completion candidates: refs (ids, then names) or archive paths, one per line."""
    items = ctx.catalog().complete(kind, prefix)
    ctx.emit({"kind": kind, "items": list(items)}, "\n".join(items) + ("\n" if items else ""))


def register(group: click.Group) -> None:
    """Attach ``complete`` to the top-level CLI (completers are attached by ``lazy.prepare``)."""
    group.add_command(complete_cmd)
