"""Fact commands of ``context-engine`` and the S12 JSON shapes they print.

Commands: ``list``, ``read``, ``remember``, ``forget``, ``revisions``, ``restore``, ``archived``,
``recover``, ``migrate``. ``list``, ``read``, ``revisions``, ``archived``, ``restore`` and
``recover``, ``remember`` and ``forget`` read and write through the invocation's catalog
(``CliContext.catalog()``: the in-process ``LocalCatalog``, or ``RemoteCatalog`` under
``--remote``), so one definition serves both. Every write is ``apply(op, Person("cli"))``: the
command typed by the person is the confirmation (S10.5), locally and remotely alike.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..catalog.ops import Forget, Recover, Restore
from ..facts.archive import ArchivedEntry
from ..facts.model import FACT_TYPES, SCOPES, Fact
from ..facts.timestamps import format_timestamp
from ..upgrade.config_key import remove_retired_config_keys
from .output import CliContext, engine_errors, fail, pass_cli
from .reads import _stamp, fact_json, fact_line, list_facts, read_fact
from .saving import PERSON, remember_fact, warn, written

if TYPE_CHECKING:
    pass



def revisions_json(active: Fact, history: Iterable[Fact]) -> dict[str, Any]:
    """``{"fact": fact, "revisions": [...]}`` (newest first, active excluded)."""
    return {
        "fact": fact_json(active),
        "revisions": [
            {
                "revision": f.revision,
                "updated_at": _stamp(f.updated_at),
                "scope": f.scope,
                "type": f.type,
                "description": f.description,
            }
            for f in history
        ],
    }


def revisions_text(active: Fact, history: Iterable[Fact]) -> str:
    """History of one fact as text."""
    lines = [f"{active.reference} ({active.id}) active revision {active.revision}"]
    items = list(history)
    lines += [
        f"  r{f.revision}  {_stamp(f.updated_at) or '-'}  {f.scope}/{f.type}  {f.description}"
        for f in items
    ]
    if not items:
        lines.append("  (no earlier revisions)")
    return "\n".join(lines)


def archived_json(entries: Iterable[ArchivedEntry]) -> dict[str, Any]:
    """``{"archived": [{"path", "archived_at", "fact"}]}`` (newest first)."""
    return {
        "archived": [
            {
                "path": str(e.path),
                "archived_at": format_timestamp(e.archived_at),
                "fact": fact_json(e.fact) if e.fact else None,
            }
            for e in entries
        ]
    }


def archived_text(entries: Iterable[ArchivedEntry]) -> str:
    """The archive as text, newest first."""
    lines = []
    for e in entries:
        what = (
            fact_line(e.fact)
            if e.fact
            else f"(unreadable: {e.diagnostic and e.diagnostic.message})"
        )
        lines.append(f"{format_timestamp(e.archived_at)}  {e.path}\n  {what}")
    return "\n".join(lines) if lines else "no archived memories"


def _read_body(body: str | None, body_file: str | None) -> str | None:
    if body is not None and body_file is not None:
        raise click.UsageError("give either --body or --body-file, not both")
    if body_file is None:
        return body
    if body_file == "-":
        return sys.stdin.read()
    return Path(body_file).read_text(encoding="utf-8")


@click.command("list")
@click.option("--type", "fact_type", type=click.Choice(FACT_TYPES), help="Only this type.")
@click.option("--scope", type=click.Choice(SCOPES), help="Only this scope.")
@pass_cli
@engine_errors
def list_cmd(ctx: CliContext, fact_type: str | None, scope: str | None) -> None:
    """List active facts of both stores, sorted by name, scope and id."""
    list_facts(ctx, fact_type, scope)


@click.command("read")
@click.argument("ref")
@pass_cli
@engine_errors
def read_cmd(ctx: CliContext, ref: str) -> None:
    """Print one fact (REF: id, reference like project/x.md, or bare name)."""
    read_fact(ctx, ref)


@click.command("remember")
@click.option("--name", help="Fact name (slugged) or a reference like global/x.md.")
@click.option("--title", help="One-line title.")
@click.option("--description", help="One-line description.")
@click.option("--type", "fact_type", type=click.Choice(FACT_TYPES), help="Default: project.")
@click.option("--scope", type=click.Choice(SCOPES), help="Default: project (or the old scope).")
@click.option("--body", help="Body text.")
@click.option("--body-file", help="Read the body from a file ('-' = stdin).")
@click.option("--id", "fact_id", help="Update the fact with this id (may rename it).")
@click.option("--expected-revision", type=int, help="Fail unless this is the active revision.")
@pass_cli
@engine_errors
def remember_cmd(
    ctx: CliContext,
    name: str | None,
    title: str | None,
    description: str | None,
    fact_type: str | None,
    scope: str | None,
    body: str | None,
    body_file: str | None,
    fact_id: str | None,
    expected_revision: int | None,
) -> None:
    """Save a fact: create it, or update it by --id / name (an explicit user action)."""
    text = _read_body(body, body_file)
    if fact_id is None and name is None:
        raise click.UsageError("--name is required unless --id is given")
    if fact_id is None and text is None:
        raise click.UsageError("--body or --body-file is required for a new fact")
    remember_fact(ctx, name=name, title=title, description=description, body=text,
                  fact_type=fact_type, scope=scope, fact_id=fact_id,
                  expected_revision=expected_revision)


@click.command("forget")
@click.argument("ref")
@pass_cli
@engine_errors
def forget_cmd(ctx: CliContext, ref: str) -> None:
    """Archive a fact (an id: that identity; a reference: that scope; a name: every store)."""
    outcome = ctx.catalog().apply(Forget(ref), PERSON)
    warn(outcome)
    if not outcome.archived:  # like ``read`` of a missing ref: a failed operation (S12)
        fail(ctx, "not_found", f"nothing to forget: {ref}")
    text = "\n".join(f"archived {p}" for p in outcome.archived)
    ctx.emit({"archived": list(outcome.archived)}, text)


def show_revisions(ctx: CliContext, ref: str) -> None:
    """Shared by ``revisions`` and ``memory revisions``."""
    history = ctx.catalog().revisions(ref)
    active, earlier = history.active, history.revisions
    ctx.emit(revisions_json(active, earlier), revisions_text(active, earlier))


def do_restore(ctx: CliContext, ref: str, revision: int, expected: int | None) -> None:
    """Shared by ``restore`` and (locally) ``memory restore``."""
    outcome = ctx.catalog().apply(Restore(ref, revision, expected), PERSON)
    written(ctx, outcome, "restored" if outcome.written else "already at")


def show_archived(ctx: CliContext) -> None:
    """Shared by ``archived`` and ``memory archived``."""
    entries = ctx.catalog().archived()
    ctx.emit(archived_json(entries), archived_text(entries))


def do_recover(ctx: CliContext, archive_path: str) -> None:
    """Shared by ``recover`` and (locally) ``memory recover``."""
    written(ctx, ctx.catalog().apply(Recover(archive_path), PERSON), "recovered")


@click.command("revisions")
@click.argument("ref")
@pass_cli
@engine_errors
def revisions_cmd(ctx: CliContext, ref: str) -> None:
    """Show the earlier revisions of a fact, newest first."""
    show_revisions(ctx, ref)


@click.command("restore")
@click.argument("ref")
@click.argument("revision", type=int)
@click.option("--expected-revision", type=int, help="Fail unless this is the active revision.")
@pass_cli
@engine_errors
def restore_cmd(ctx: CliContext, ref: str, revision: int, expected_revision: int | None) -> None:
    """Make an earlier revision's content the newest revision."""
    do_restore(ctx, ref, revision, expected_revision)


@click.command("archived")
@pass_cli
@engine_errors
def archived_cmd(ctx: CliContext) -> None:
    """List forgotten facts of both stores, newest first."""
    show_archived(ctx)


@click.command("recover")
@click.argument("archive_path")
@pass_cli
@engine_errors
def recover_cmd(ctx: CliContext, archive_path: str) -> None:
    """Bring an archived fact back (its id kept, at a new revision)."""
    do_recover(ctx, archive_path)


@click.command("migrate")
@pass_cli
@engine_errors
def migrate_cmd(ctx: CliContext) -> None:
    """Upgrade legacy fact files of both stores and retired config keys (idempotent, S5)."""
    catalog = ctx.local()
    count = catalog.migrate()
    for notice in remove_retired_config_keys(catalog.paths):  # S5.4: one-time notice, on stderr
        click.echo(notice, err=True)
    held = catalog.memory.migration_skipped
    skipped = [d for scope in ("project", "global") for d in held.get(scope, [])]
    for diagnostic in skipped:  # local only: the user must see which files need a hand edit
        click.echo(f"{diagnostic.path}: {diagnostic.code}: {diagnostic.message}", err=True)
    payload: dict[str, object] = {"migrated": count}
    if skipped:  # only when there is something to say: the usual answer keeps its shape
        payload["skipped"] = [
            {"file": str(d.path), "code": d.code, "message": d.message} for d in skipped
        ]
    ctx.emit(payload, f"migrated {count} file(s)")


def register(group: click.Group) -> None:
    """Attach the fact commands to the top-level CLI."""
    for command in (
        list_cmd,
        read_cmd,
        remember_cmd,
        forget_cmd,
        revisions_cmd,
        restore_cmd,
        archived_cmd,
        recover_cmd,
        migrate_cmd,
    ):
        group.add_command(command)
