"""The read commands' work and output — ``list``, ``read``, ``recall``, the ``memory`` summary.

Click-free, so the click commands (``facts_cmds``, ``recall_cmds``, ``memory_cmds``) and the
plain command lines of ``cli/fast.py`` run the same code and print the same bytes (issue 14).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..facts.freshness import freshness
from ..facts.timestamps import format_timestamp
from .context import CliContext, echo, echo_bytes, echo_parts, streamed_listing

if TYPE_CHECKING:
    from ..catalog.base import Catalog
    from ..facts.listing import Listing
    from ..facts.model import Diagnostic, Fact
    from ..facts.printed_listing import PrintedFacts
    from ..instructions import Resolution
    from .listed import Clock


def _stamp(value: datetime | None) -> str | None:
    return format_timestamp(value) if value is not None else None


def fact_json(fact: Fact) -> dict[str, Any]:
    """The S12 *fact* object (shared by every command that prints a fact)."""
    return {
        "id": fact.id,
        "revision": fact.revision,
        "name": fact.name,
        "title": fact.title,
        "description": fact.description,
        "type": fact.type,
        "scope": fact.scope,
        "reference": fact.reference,
        "created_at": _stamp(fact.created_at),
        "updated_at": _stamp(fact.updated_at),
        "freshness": freshness(fact),
    }


def fact_line(fact: Fact) -> str:
    """One text line per fact: reference, id, revision, type, freshness, description."""
    return (
        f"{fact.reference}  {fact.id}  r{fact.revision}  {fact.type}  {freshness(fact)}"
        f"  — {fact.description}"
    )


def catalog_listing(catalog: Catalog) -> Listing:
    """Both stores' list fields: from the derived index locally, from the facts remotely."""
    from ..catalog.local import LocalCatalog
    from ..facts.listing import listing_of

    if isinstance(catalog, LocalCatalog):
        return catalog.listing()
    snapshot = catalog.list_facts()
    return listing_of(snapshot.facts, snapshot.diagnostics)


def printed_facts(
    catalog: Catalog, form: str, clock: Clock, sink: Callable[[bytes], None] | None = None
) -> PrintedFacts | None:
    """Both stores' facts printed by a local catalog's derived index, else ``None``."""
    from ..catalog.local import LocalCatalog

    if not isinstance(catalog, LocalCatalog):
        return None
    return catalog.printed_facts(form, *clock.edges(), sink)


_JSON_HEAD = b'{\n  "facts": [\n    '
_JSON_TAIL = b"\n  ]\n}"


def list_facts(ctx: CliContext, fact_type: str | None, scope: str | None) -> None:
    """``list``: active facts of both stores, sorted by name, scope and id."""
    from .listed import Clock, encoded_facts, listed_lines

    if ctx.json and fact_type is None and scope is None:
        clock = Clock()
        # Written chunk by chunk as the index prints them: the listing is never held whole
        # (tens of megabytes at 100,000 facts; docs/decisions.md, "list --json in chunks").
        streamed = streamed_listing(_JSON_HEAD, b",\n    ")
        sink = None if streamed is None else streamed.chunk
        printed = printed_facts(ctx.catalog(), "json", clock, sink)
        if streamed is not None and streamed.size:
            if printed is None:
                # Broken off after its beginning was written: the rest from a full parse.
                full = catalog_listing(ctx.catalog())
                from .pretty_json import dumps

                whole = (dumps({"facts": encoded_facts(full.facts, clock)}) + "\n").encode()
                if len(whole) <= streamed.size:
                    raise OSError("the listing changed while it was written")
                streamed.finish(whole[streamed.size :])
            else:
                streamed.finish(_JSON_TAIL + b"\n")
            return
        if printed is not None:
            if printed.total:
                echo_parts([_JSON_HEAD, *printed.parts(), _JSON_TAIL])
            else:
                echo_bytes(b'{\n  "facts": []\n}')
            return
    snapshot = catalog_listing(ctx.catalog())
    facts = [
        f
        for f in snapshot.facts
        if (fact_type is None or f.type == fact_type) and (scope is None or f.scope == scope)
    ]
    clock = Clock()
    if ctx.json:
        ctx.emit({"facts": encoded_facts(facts, clock)})
        return
    for diag in snapshot.diagnostics:
        echo(f"warning: {diag.path}: {diag.message}", err=True)
    from ..facts.copies import find_copies

    for copies in find_copies(snapshot.facts):  # never a fact listed twice silently
        echo(f"warning: {copies.message}", err=True)
    text = "\n".join(listed_lines(facts, clock)) if facts else "no memories"
    ctx.emit({}, text)


def read_fact(ctx: CliContext, ref: str) -> None:
    """``read``: one fact (an id, a reference like project/x.md, or a bare name)."""
    fact = ctx.catalog().read(ref).fact
    header = fact_line(fact)
    title = f"\n{fact.display_title}" if fact.title else ""
    ctx.emit({"fact": fact_json(fact), "body": fact.body}, f"{header}{title}\n\n{fact.body}\n")


def recall_message(ctx: CliContext, message: str, limit: int, budget: int) -> None:
    """``recall``: auto-recall on ``message``; the block and the trace (which it records)."""
    run = ctx.catalog().recall(message, limit=limit, budget=budget)
    text = (run.block + "\n\n" if run.block else "") + run.trace.to_text()
    ctx.emit({"block": run.block, "trace": run.trace.to_dict()}, text)


def summary(catalog: Catalog) -> tuple[dict[str, Any], str]:
    """The summary as the ``--json`` object and as text, for a local or a remote catalog.

    Instructions in effect, active facts, archive count, store locations (a remote catalog
    names its workspace instead of paths) and diagnostics.
    """
    from .listed import Clock, listed_lines

    view = catalog.instructions()
    snapshot = catalog_listing(catalog)
    clock = Clock()
    head, archived, stores, tail = _summary_parts(
        catalog, view.resolution, len(snapshot.facts), snapshot.diagnostics
    )
    lines = [*head, *(f"  {line}" for line in listed_lines(snapshot.facts, clock))]
    if not snapshot.facts:
        lines.append("  (none)")
    lines += tail
    return _payload(view.resolution, snapshot, clock, archived, stores), "\n".join(lines)


def summary_printed(catalog: Catalog) -> list[bytes] | None:
    """``summary``'s text (UTF-8, in parts to write in turn), its fact lines printed by the
    derived index; else ``None``."""
    from .listed import Clock

    view = catalog.instructions()
    printed = printed_facts(catalog, "lines", Clock())
    if printed is None:
        return None
    head, _, _, tail = _summary_parts(catalog, view.resolution, printed.total, printed.diagnostics)
    facts = printed.parts() if printed.total else [b"  (none)"]
    return ["\n".join(head).encode() + b"\n", *facts, b"\n" + "\n".join(tail).encode()]


def _summary_parts(
    catalog: Catalog, resolution: Resolution, count: int, diagnostics: Sequence[Diagnostic]
) -> tuple[list[str], int, dict[str, str], list[str]]:
    """The summary's text lines before and after the fact lines, its archive count and stores."""
    from ..catalog.local import LocalCatalog

    lines = ["Instructions:"]
    lines += [f"  {doc.order}. [{doc.scope}] {doc.path}" for doc in resolution.documents]
    if not resolution.documents:
        lines.append("  (none)")
    lines += [f"  ! {d.path}: {d.message}" for d in resolution.diagnostics]
    lines.append(f"Facts ({count}):")
    tail = [f"  ! {d.path}: {d.message}" for d in diagnostics]
    local = catalog if isinstance(catalog, LocalCatalog) else None
    archived = local.archive_count() if local else len(catalog.archived())  # local: no parse
    tail.append(f"Archive: {archived} forgotten (context-engine memory archived)")
    if local is None:
        tail.append(f"Stores: on the remote workspace {catalog.name}")
        return lines, archived, {"remote": catalog.name}, tail
    tail.append("Stores:")
    stores = {"project": str(local.paths.project_store), "global": str(local.paths.global_store)}
    tail.append(f"  project {stores['project']}")
    tail.append(f"  global  {stores['global']}")
    return lines, archived, stores, tail


def _payload(
    resolution: Resolution,
    snapshot: Listing,
    clock: Clock,
    archived: int,
    stores: dict[str, str],
) -> dict[str, Any]:
    from ..instructions.report import resolution_payload
    from .listed import encoded_facts

    return {
        "instructions": resolution_payload(resolution),
        "facts": encoded_facts(snapshot.facts, clock),
        "diagnostics": [{"path": str(d.path), "message": d.message} for d in snapshot.diagnostics],
        "archived": archived,
        "stores": stores,
    }
