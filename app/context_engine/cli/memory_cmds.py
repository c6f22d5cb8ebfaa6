"""``memory`` (bare: the summary) and ``memory revisions|restore|archived|recover`` (S12).

Every one honours ``--json``: the summary as one object, the others with the same shapes as
their top-level twins (``revisions``, ``restore``, ``archived``, ``recover``).
"""

from __future__ import annotations

from typing import Any

import click

from ..facts.archive import list_entries
from ..facts.memory import Memory
from ..instructions import resolve_instructions
from ..instructions.report import resolution_payload
from ..paths import EnginePaths
from .facts_cmds import (
    do_recover,
    do_restore,
    fact_json,
    fact_line,
    show_archived,
    show_revisions,
)
from .memory_group import memory
from .output import CliContext, engine_errors, pass_cli


def summary(paths: EnginePaths) -> tuple[dict[str, Any], str]:
    """The summary as the ``--json`` object and as text.

    Instructions in effect, active facts, archive count, store locations and diagnostics.
    """
    lines = ["Instructions:"]
    resolution = resolve_instructions(paths)
    lines += [f"  {doc.order}. [{doc.scope}] {doc.path}" for doc in resolution.documents]
    if not resolution.documents:
        lines.append("  (none)")
    lines += [f"  ! {d.path}: {d.message}" for d in resolution.diagnostics]
    store = Memory(paths)
    snapshot = store.snapshot()
    lines.append(f"Facts ({len(snapshot.facts)}):")
    lines += [f"  {fact_line(f)}" for f in snapshot.facts]
    if not snapshot.facts:
        lines.append("  (none)")
    lines += [f"  ! {d.path}: {d.message}" for d in snapshot.diagnostics]
    archived = sum(len(list_entries(s.root)) for s in store.stores.all())  # count, no parse
    lines.append(f"Archive: {archived} forgotten (context-engine memory archived)")
    lines.append("Stores:")
    lines.append(f"  project {paths.project_store}")
    lines.append(f"  global  {paths.global_store}")
    payload: dict[str, Any] = {
        "instructions": resolution_payload(resolution),
        "facts": [fact_json(f) for f in snapshot.facts],
        "diagnostics": [{"path": str(d.path), "message": d.message} for d in snapshot.diagnostics],
        "archived": archived,
        "stores": {"project": str(paths.project_store), "global": str(paths.global_store)},
    }
    return payload, "\n".join(lines)


@memory.command("summary")
@pass_cli
@engine_errors
def summary_cmd(ctx: CliContext) -> None:
    """Instructions, facts (id, revision, scope, type, freshness), archive and store locations."""
    payload, text = summary(ctx.paths())
    ctx.emit(payload, text)


@memory.command("revisions")
@click.argument("ref")
@pass_cli
@engine_errors
def memory_revisions(ctx: CliContext, ref: str) -> None:
    """/memory revisions REF: earlier revisions, newest first."""
    show_revisions(ctx, ref)


@memory.command("restore")
@click.argument("ref")
@click.argument("revision", type=int)
@pass_cli
@engine_errors
def memory_restore(ctx: CliContext, ref: str, revision: int) -> None:
    """/memory restore REF REVISION: that content becomes the newest revision."""
    do_restore(ctx, ref, revision, None)


@memory.command("archived")
@pass_cli
@engine_errors
def memory_archived(ctx: CliContext) -> None:
    """/memory archived: forgotten facts, newest first."""
    show_archived(ctx)


@memory.command("recover")
@click.argument("archive_path")
@pass_cli
@engine_errors
def memory_recover(ctx: CliContext, archive_path: str) -> None:
    """/memory recover ARCHIVE-PATH: bring a forgotten fact back."""
    do_recover(ctx, archive_path)


def register(group: click.Group) -> None:
    """The subcommands ride the ``memory`` group (registered by ``memory_group``)."""
    del group
