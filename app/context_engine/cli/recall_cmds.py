"""``recall``, ``search`` and ``memory recall`` (S8, S9.1, S12)."""

from __future__ import annotations

import click

from ..facts.model import FACT_TYPES, SCOPES
from ..recall.block import DEFAULT_BUDGET, DEFAULT_LIMIT
from ..recall.snippet import make_snippet
from ..recall.source import WorkspaceRecall
from ..recall.tokenize import tokens
from ..recall.trace import TraceLog
from ..tools.memory import DEFAULT_LIMIT as SEARCH_LIMIT
from ..tools.memory import TOOL_SNIPPET, run_memory_tool
from .facts_cmds import fact_json  # the one S12 fact shape
from .memory_group import memory
from .output import CliContext, engine_errors, pass_cli


def _trace_log(ctx: CliContext) -> TraceLog:
    """The workspace's trace log (under its own data directory, never a store)."""
    paths = ctx.paths()
    return TraceLog(
        paths.workspace_data / "recall", stores=(paths.project_store, paths.global_store)
    )


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
    workspace = WorkspaceRecall(ctx.paths())
    workspace.refresh()
    result = workspace.recaller.recall(" ".join(message), limit=limit, budget=budget)
    try:
        workspace.traces.record(result.trace)
    except OSError as exc:  # recording is best-effort; the recall itself succeeded
        click.echo(f"context-engine: trace not recorded: {exc.strerror or exc}", err=True)
    text = (result.block + "\n\n" if result.block else "") + result.trace.to_text()
    ctx.emit({"block": result.block, "trace": result.trace.to_dict()}, text)


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
    workspace = WorkspaceRecall(ctx.paths())
    workspace.refresh()
    text = " ".join(query)
    args: dict[str, object] = {"operation": "search", "query": text, "limit": limit}
    if fact_type:
        args["type"] = fact_type
    if scope:
        args["scope"] = scope
    output = run_memory_tool(workspace.recaller, args)
    hits = workspace.recaller.search(
        text, fact_type=fact_type, scope=scope, limit=max(1, min(limit, 20))
    )
    terms = list(dict.fromkeys(tokens(text)))
    results = [
        {
            **fact_json(h.fact),
            "score": h.score,
            "snippet": make_snippet(
                "\n".join(p for p in (h.fact.description, h.fact.body) if p.strip()),
                text,
                terms,
                TOOL_SNIPPET,
            ),
        }
        for h in hits
    ]
    ctx.emit({"query": text, "results": results}, output)


@memory.command("recall")
@pass_cli
@engine_errors
def memory_recall(ctx: CliContext) -> None:
    """/memory recall: the last recall trace of this workspace."""
    trace = _trace_log(ctx).last()
    if trace is None:
        ctx.emit({"trace": None}, "No recall has run in this workspace yet.\n")
        return
    ctx.emit({"trace": trace.to_dict()}, trace.to_text())


def register(group: click.Group) -> None:
    """Attach ``recall`` and ``search`` (``memory recall`` rides the memory group)."""
    group.add_command(recall_cmd)
    group.add_command(search_cmd)
