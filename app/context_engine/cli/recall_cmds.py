"""``recall``, ``search`` and ``memory recall`` (S8, S9.1, S12)."""

from __future__ import annotations

import click

from ..defaults import RECALL_BUDGET as DEFAULT_BUDGET
from ..defaults import RECALL_LIMIT as DEFAULT_LIMIT
from ..facts.model import FACT_TYPES, SCOPES
from ..tools.memory import DEFAULT_LIMIT as SEARCH_LIMIT
from ..tools.memory import search_text
from .memory_group import memory
from .output import CliContext, engine_errors, pass_cli
from .reads import fact_json, recall_message  # fact_json: the one S12 fact shape


@click.command("recall")
@click.argument("message", nargs=-1, required=True)
@click.option(
    "--limit", type=int, default=DEFAULT_LIMIT, show_default=True, help="Max facts (≤ 8)."
)
@click.option(
    "--budget", type=int, default=DEFAULT_BUDGET, show_default=True, help="Max characters (≥ 480)."
)
@pass_cli
@engine_errors
def recall_cmd(ctx: CliContext, message: tuple[str, ...], limit: int, budget: int) -> None:
    """Run auto-recall on MESSAGE: print the block and the trace, and record the trace."""
    recall_message(ctx, " ".join(message), limit, budget)


@click.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("--type", "fact_type", type=click.Choice(FACT_TYPES), default=None)
@click.option("--scope", type=click.Choice(SCOPES), default=None)
@click.option(
    "--limit", type=int, default=SEARCH_LIMIT, show_default=True, help="Max results (≤ 20)."
)
@pass_cli
@engine_errors
def search_cmd(
    ctx: CliContext, query: tuple[str, ...], fact_type: str | None, scope: str | None, limit: int
) -> None:
    """BM25 search over both stores, as the memory tool's ``search`` sees it (S9.1)."""
    text = " ".join(query)
    hits = ctx.catalog().search(text, fact_type=fact_type, scope=scope, limit=limit)
    found = [(h.fact, h.score, h.snippet) for h in hits]
    results = [{**fact_json(h.fact), "score": h.score, "snippet": h.snippet} for h in hits]
    ctx.emit({"query": text, "results": results}, search_text(text, found))


@memory.command("recall")
@pass_cli
@engine_errors
def memory_recall(ctx: CliContext) -> None:
    """/memory recall: the last recall trace of this workspace."""
    trace = ctx.catalog().last_trace()
    if trace is None:
        ctx.emit({"trace": None}, "No recall has run in this workspace yet.\n")
        return
    ctx.emit({"trace": trace.to_dict()}, trace.to_text())


def register(group: click.Group) -> None:
    """Attach ``recall`` and ``search`` (``memory recall`` rides the memory group)."""
    group.add_command(recall_cmd)
    group.add_command(search_cmd)
