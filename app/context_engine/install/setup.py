"""``install`` and ``uninstall`` of one agent at one scope (S15.1)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from ..hooks.protocol import Agent
from . import entries, files
from .targets import (
    CODEX_GRACE_DEFAULT_MS,
    CODEX_GRACE_KEY,
    CODEX_GRACE_MS,
    SPECS,
    Scope,
    config_files,
    hook_handler,
    mcp_entry,
)


@dataclass
class Report:
    """What a command did (or would do), for the person, and what they must still do."""

    lines: list[str] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)
    changed: list[Path] = field(default_factory=list)


def install(
    agent: Agent,
    scope: Scope,
    root: Path,
    *,
    reasonix_home: Path | None = None,
    dry_run: bool = False,
    trust: bool = True,
) -> Report:
    """Merge our hooks and MCP server into the agent's files, keeping a backup of each."""
    spec = SPECS[agent]
    target = config_files(agent, scope, root)
    report = Report()
    hooks = files.load(target.hooks)
    for event in spec.events:
        entries.add_hook(hooks.doc, event, hook_handler(spec, event, reasonix_home))
    same_file = target.mcp == target.hooks
    mcp = hooks if same_file else files.load(target.mcp)
    entries.set_server(mcp.doc, target.mcp_table, mcp_entry(agent, reasonix_home), mcp.is_toml)
    if agent == "codex":
        _codex_grace(report, entries.set_codex_grace(mcp.doc))
    verb = "would update" if dry_run else "updated"
    for loaded in (hooks,) if same_file else (hooks, mcp):
        if files.write(loaded, dry_run):
            report.changed.append(loaded.path)
            report.lines.append(f"{verb} {loaded.path}")
        else:
            report.lines.append(f"already installed in {loaded.path}")
    if agent == "codex" and not dry_run:
        _codex_trust(report, root, target.hooks, trust)
    if agent == "claude-code" and scope == "project":
        report.todo.append(
            "Claude Code asks once to approve the project's .mcp.json servers: accept "
            "context-engine when it asks (or run `claude mcp list`)."
        )
    return report


def _codex_grace(report: Report, theirs: int | None) -> None:
    if theirs is not None and theirs < CODEX_GRACE_MS:
        report.todo.append(
            f"Your Codex {CODEX_GRACE_KEY} = {theirs} is kept; Codex leaves an MCP server's "
            f"tools out of the first model step when it is not up by then (ours takes over "
            f"{CODEX_GRACE_DEFAULT_MS} ms on a busy machine): raise it to {CODEX_GRACE_MS}."
        )


def _codex_trust(report: Report, root: Path, hooks_file: Path, trust: bool) -> None:
    from .codex_trust import CodexUnavailable, trust_our_hooks

    manual = (
        "Codex runs a hook only after you trust it: start `codex`, open /hooks and trust the "
        "two context-engine hooks (or re-run install with codex on PATH)."
    )
    if not trust:
        report.todo.append(manual)
        return
    try:
        trusted = trust_our_hooks(root)
    except CodexUnavailable as exc:
        report.todo.append(f"{manual} ({exc})")
        return
    report.lines.append(
        f"trusted {trusted} context-engine hook(s) in Codex (review them with /hooks in codex)"
    )


def uninstall(agent: Agent, scope: Scope, root: Path, *, dry_run: bool = False) -> Report:
    """Take out exactly what install added; files nobody else changed come back byte-identical."""
    target = config_files(agent, scope, root)
    report = Report()
    hooks = files.load(target.hooks)
    entries.remove_hooks(hooks.doc)
    same_file = target.mcp == target.hooks
    mcp = hooks if same_file else files.load(target.mcp)
    before, _data, known = files.original_doc(target.mcp)
    entries.reset_server(mcp.doc, target.mcp_table, before if known else None)
    if agent == "codex":
        entries.drop_new_trust(mcp.doc, str(target.hooks), before if known else None)
        entries.reset_codex_grace(mcp.doc, before if known else None)
    made = {p.parent for p in (target.hooks, target.mcp) if files.folder_made(p)}
    for loaded in (hooks,) if same_file else (hooks, mcp):
        if dry_run:
            changed = loaded.render() != loaded.original
            report.lines.append(f"{'would update' if changed else 'nothing in'} {loaded.path}")
            continue
        outcome = files.restore(loaded)
        if outcome != "unchanged":
            report.changed.append(loaded.path)
        report.lines.append(f"{outcome}: {loaded.path}")
    for folder in made if not dry_run else ():
        with contextlib.suppress(OSError):  # only when nothing else is in it
            folder.rmdir()
    return report
