"""``memory`` (bare: the summary) (S12); ``--json`` gives the summary as one object.

``memory revisions|restore|archived|recover`` are the top-level commands themselves (the
registry points the ``memory`` group's entries at them), so they behave the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..catalog.base import Catalog
from ..catalog.local import LocalCatalog
from ..instructions.report import resolution_payload
from .facts_cmds import catalog_listing
from .listed import Clock, encoded_facts, listed_lines
from .memory_group import memory

if TYPE_CHECKING:
    from ..facts.listing import Listing
    from ..instructions import Resolution
from .output import CliContext, engine_errors, pass_cli


def summary(catalog: Catalog) -> tuple[dict[str, Any], str]:
    """The summary as the ``--json`` object and as text, for a local or a remote catalog.

    Instructions in effect, active facts, archive count, store locations (a remote catalog
    names its workspace instead of paths) and diagnostics.
    """
    view = catalog.instructions()
    resolution = view.resolution
    lines = ["Instructions:"]
    lines += [f"  {doc.order}. [{doc.scope}] {doc.path}" for doc in view.resolution.documents]
    if not view.resolution.documents:
        lines.append("  (none)")
    lines += [f"  ! {d.path}: {d.message}" for d in view.resolution.diagnostics]
    snapshot = catalog_listing(catalog)
    clock = Clock()
    lines.append(f"Facts ({len(snapshot.facts)}):")
    lines += [f"  {line}" for line in listed_lines(snapshot.facts, clock)]
    if not snapshot.facts:
        lines.append("  (none)")
    lines += [f"  ! {d.path}: {d.message}" for d in snapshot.diagnostics]
    local = catalog if isinstance(catalog, LocalCatalog) else None
    archived = local.archive_count() if local else len(catalog.archived())  # local: no parse
    lines.append(f"Archive: {archived} forgotten (context-engine memory archived)")
    if local is None:
        lines.append(f"Stores: on the remote workspace {catalog.name}")
        remote = {"remote": catalog.name}
        return _payload(resolution, snapshot, clock, archived, remote), "\n".join(lines)
    lines.append("Stores:")
    stores = {"project": str(local.paths.project_store), "global": str(local.paths.global_store)}
    lines.append(f"  project {stores['project']}")
    lines.append(f"  global  {stores['global']}")
    return _payload(resolution, snapshot, clock, archived, stores), "\n".join(lines)


def _payload(
    resolution: Resolution,
    snapshot: Listing,
    clock: Clock,
    archived: int,
    stores: dict[str, str],
) -> dict[str, Any]:
    return {
        "instructions": resolution_payload(resolution),
        "facts": encoded_facts(snapshot.facts, clock),
        "diagnostics": [{"path": str(d.path), "message": d.message} for d in snapshot.diagnostics],
        "archived": archived,
        "stores": stores,
    }


@memory.command("summary")
@pass_cli
@engine_errors
def summary_cmd(ctx: CliContext) -> None:
    """Instructions, facts (id, revision, scope, type, freshness), archive and store locations."""
    payload, text = summary(ctx.catalog())
    if ctx.json:
        ctx.emit(payload, text)
    else:
        page(text)


def page(text: str) -> None:
    """Through a pager on a terminal like git (``$PAGER``, else ``less -FRX``); plain if piped."""
    import os
    import sys

    if not sys.stdout.isatty():
        click.echo(text)
        return
    os.environ.setdefault("LESS", "FRX")  # short output prints and exits, as with git
    click.echo_via_pager(text)


def register(group: click.Group) -> None:
    """The subcommands ride the ``memory`` group (registered by ``memory_group``)."""
    del group
