"""``import claude-code|codex|gemini|bundle`` and ``export --out FILE`` (SPEC S15.3).

Start-up stays light: the transfer package (and everything it reads) is imported inside the
commands, never when ``context-engine --help`` builds the command list.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .output import CliContext, engine_errors, fail, pass_cli

if TYPE_CHECKING:
    from ..transfer.candidate import Planned, SourceScan
    from ..transfer.restore import RestoreReport
    from ..transfer.writing import ImportReport

AGENT_LABELS = {"claude-code": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}
SCOPE_CHOICES = ("project", "global", "all")


class TerminalProgress:
    """``label: done/total`` on stderr, redrawn at most ten times a second."""

    def __init__(self, label: str, enabled: bool) -> None:
        self.label = label
        self.enabled = enabled
        self._last = 0.0
        self._shown = False

    def __call__(self, done: int, total: int, _what: str) -> None:
        """Redraw the line (the final call, done == total, always draws)."""
        if not self.enabled:
            return
        now = time.monotonic()
        final = total > 0 and done >= total
        if not final and now - self._last < 0.1:
            return
        self._last = now
        count = f"{done}/{total}" if total else str(done)
        click.echo(f"\r{self.label}: {count}", err=True, nl=False)
        self._shown = True

    def close(self) -> None:
        """End the progress line."""
        if self._shown:
            click.echo("", err=True)


def _progress(label: str, flag: bool) -> TerminalProgress:
    return TerminalProgress(label, flag or sys.stderr.isatty())


def planned_json(index: int, item: Planned) -> dict[str, Any]:
    """One candidate as JSON (local output: the source path is shown, never written)."""
    c = item.candidate
    return {
        "index": index, "status": item.status, "reason": item.reason,
        "flagged": item.flagged, "findings": list(item.findings), "agent": c.agent,
        "type": c.type, "scope": c.scope, "name": c.name, "title": c.title,
        "description": c.description, "body": c.body, "source": str(c.source), "line": c.line,
    }


def _candidates_text(label: str, scan: SourceScan, planned: tuple[Planned, ...]) -> list[str]:
    new = sum(1 for p in planned if p.status == "new")
    flagged = sum(1 for p in planned if p.status == "new" and p.flagged)
    lines = [f"{label}: {len(planned)} candidates ({new} new, {flagged} of them flagged, "
             f"{len(planned) - new} already here) from {len(scan.files)} files"]
    for i, p in enumerate(planned):
        c = p.candidate
        mark = "flagged" if p.status == "new" and p.flagged else p.status
        lines.append(f"  [{i}] {mark:8} {c.scope}/{c.type:9} {c.name} — {c.description}")
        lines.append(f"        from {c.evidence}")
        if p.reason:
            lines.append(f"        {p.reason}")
        if p.flagged:
            lines.append(f"        may contain a secret ({', '.join(p.findings)}); written only"
                         f" with --allow-flagged {c.name}")
    for d in scan.diagnostics:
        where = f"{d.path}:{d.line}" if d.line else str(d.path)
        lines.append(f"  skipped {where}: {d.message}")
    return lines


def _import_agent(ctx: CliContext, agent: str, dry_run: bool, yes: bool, scope: str,
                  allow_flagged: tuple[str, ...], progress_flag: bool) -> None:
    from ..catalog.local import LocalCatalog
    from ..transfer.plan import plan
    from ..transfer.sources import scan_agent
    from ..transfer.writing import import_candidates

    if dry_run and yes:
        raise click.UsageError("--dry-run and --yes exclude each other")
    paths = ctx.paths()
    scan = scan_agent(agent, paths)  # type: ignore[arg-type]  # reason: click.Choice limits it to the agent names
    candidates = [c for c in scan.candidates if scope in ("all", c.scope)]
    catalog = LocalCatalog(paths)  # the CLI's catalog, local only
    planned = plan(candidates, catalog.memory.snapshot().facts)
    payload: dict[str, Any] = {
        "agent": agent,
        "candidates": [planned_json(i, p) for i, p in enumerate(planned)],
        "diagnostics": [{"path": str(d.path), "line": d.line, "code": d.code,
                         "message": d.message} for d in scan.diagnostics],
        "written": [],
        "dry_run": not yes,
    }
    lines = _candidates_text(AGENT_LABELS[agent], scan, planned)
    if not yes:
        hint = "(--dry-run)" if dry_run else "— run again with --yes to write the new ones"
        lines.append(f"Nothing written {hint}.")
        ctx.emit(payload, "\n".join(lines) + "\n")
        return
    allow = {i for i, p in enumerate(planned) if p.candidate.name in allow_flagged}
    bar = _progress("import", progress_flag)
    try:
        report = import_candidates(catalog, candidates, allow_flagged=allow, progress=bar)
    except KeyboardInterrupt:
        bar.close()
        fail(ctx, "cancelled", "import cancelled; facts written before the cancel are complete "
             "and a new run skips them")
        return
    bar.close()
    payload["written"] = [{"name": f.name, "reference": f.reference, "id": f.id}
                          for f in report.written]
    payload["failed"] = [{"name": c.name, "message": m} for c, m in report.failed]
    lines.extend(_report_text(report))
    ctx.emit(payload, "\n".join(lines) + "\n")
    if report.failed:
        sys.exit(1)


def _report_text(report: ImportReport) -> list[str]:
    lines = [f"Wrote {len(report.written)} facts:"] if report.written else ["Wrote nothing."]
    lines.extend(f"  {f.reference}" for f in report.written)
    lines.extend(f"  failed {c.name}: {m}" for c, m in report.failed)
    return lines


def _agent_command(agent: str) -> click.Command:
    @click.command(agent, help=f"Import {AGENT_LABELS[agent]} memories (lists them first).")
    @click.option("--dry-run", is_flag=True, help="List the candidates; write nothing.")
    @click.option("--yes", is_flag=True, help="Write the new candidates (a person's action).")
    @click.option("--scope", type=click.Choice(SCOPE_CHOICES), default="all",
                  help="Only candidates of this scope.")
    @click.option("--allow-flagged", multiple=True, metavar="NAME",
                  help="Write this flagged (secret-looking) candidate anyway; repeatable.")
    @click.option("--progress", "progress_flag", is_flag=True,
                  help="Show progress on stderr even when it is not a terminal.")
    @pass_cli
    @engine_errors
    def command(ctx: CliContext, dry_run: bool, yes: bool, scope: str,
                allow_flagged: tuple[str, ...], progress_flag: bool) -> None:
        _import_agent(ctx, agent, dry_run, yes, scope, allow_flagged, progress_flag)

    return command


def _restore_json(report: RestoreReport) -> dict[str, Any]:
    return {
        "written": report.written,
        "placed": report.placed,
        "scopes": [
            {"scope": p.scope, "mode": p.mode, "files": len(p.place), "same": p.same,
             "conflicts": [{"kind": c.kind, "path": c.path, "detail": c.detail,
                            "target": c.target, "resolution": c.resolution}
                           for c in p.conflicts + [r[0] for r in p.revise]]}
            for p in report.plans
        ],
        "revised": [{"reference": f.reference, "revision": f.revision} for f in report.revised],
    }


def _restore_text(report: RestoreReport) -> str:
    from ..transfer.restore import describe

    lines = describe(report)
    if not report.written:
        lines.append("Nothing written — run again with --yes to import"
                     " (conflicts: --on-conflict skip|revision, or --revise PATH for one).")
    return "\n".join(lines) + "\n"


@click.command("bundle")
@click.argument("bundle_file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Check the bundle and show the plan; write nothing.")
@click.option("--yes", is_flag=True, help="Restore or merge it (a person's action).")
@click.option("--on-conflict", type=click.Choice(("skip", "revision")), default="skip",
              help="A fact that differs here: skip it, or save it as a new revision.")
@click.option("--revise", multiple=True, metavar="PATH",
              help="Keep this one conflict (e.g. project/x.md) as a new revision; repeatable.")
@click.option("--progress", "progress_flag", is_flag=True, help="Show progress on stderr.")
@pass_cli
@engine_errors
def bundle_cmd(ctx: CliContext, bundle_file: Path, dry_run: bool, yes: bool, on_conflict: str,
               revise: tuple[str, ...], progress_flag: bool) -> None:
    """Restore an exported bundle (empty home: byte-identical; else a merge)."""
    from ..transfer.restore import restore_bundle

    if dry_run and yes:
        raise click.UsageError("--dry-run and --yes exclude each other")
    bar = _progress("import bundle", progress_flag)
    try:
        report = restore_bundle(ctx.paths(), bundle_file, write=yes,
                                on_conflict=on_conflict,  # type: ignore[arg-type]  # reason: click.Choice limits it to skip/revision
                                revise=revise, progress=bar)
    except KeyboardInterrupt:
        bar.close()
        fail(ctx, "cancelled", "import cancelled; the stores are unchanged")
        return
    bar.close()
    ctx.emit(_restore_json(report), _restore_text(report))


@click.command("export")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The bundle file to write (tar.gz).")
@click.option("--scope", type=click.Choice(SCOPE_CHOICES), default="all",
              help="Which store(s) to export.")
@click.option("--progress", "progress_flag", is_flag=True, help="Show progress on stderr.")
@pass_cli
@engine_errors
def export_cmd(ctx: CliContext, out: Path, scope: str, progress_flag: bool) -> None:
    """Write both stores (facts, revisions, archive) to a portable bundle."""
    from ..transfer.export import export_bundle

    scopes = ("project", "global") if scope == "all" else (scope,)
    bar = _progress("export", progress_flag)
    try:
        report = export_bundle(ctx.paths(), out, scopes=scopes, progress=bar)
    except KeyboardInterrupt:
        bar.close()
        fail(ctx, "cancelled", "export cancelled; no bundle was written")
        return
    bar.close()
    summary = ", ".join(
        f"{s}: {c['fact']} facts, {c['revision']} revisions, {c['archive']} archived"
        for s, c in report.counts.items()
    )
    note = "".join(f"skipped {name}: a bundle cannot hold this file name\n"
                   for name in report.skipped)
    ctx.emit({"path": str(report.path), "files": report.files, "bytes": report.bytes,
              "counts": report.counts, "skipped": list(report.skipped)},
             f"Wrote {report.path} ({report.files} files; {summary})\n{note}")


@click.group("import")
def import_group() -> None:
    """Bring memories in: from Claude Code, Codex, Gemini CLI, or an exported bundle."""


for _agent in AGENT_LABELS:
    import_group.add_command(_agent_command(_agent))
import_group.add_command(bundle_cmd)
