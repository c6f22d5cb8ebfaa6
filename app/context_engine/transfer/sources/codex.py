"""Codex memories under ``$CODEX_HOME/memories/`` (openai/codex ``core/src/memories``).

* ``MEMORY.md``: the handbook, blocks ``# Task Group: <title>`` with a ``scope:`` line and an
  ``applies_to: cwd=<path>; …`` line. A block for this workspace is a project candidate; a block
  bound to another cwd is someone else's and skipped; a block bound to none is user-level.
* ``raw_memories.md``: ``## Thread `<id>` `` entries, each with header lines (``cwd:`` …) and a
  ``---`` block of ``description``/``task``/``task_group``/``cwd``/``keywords``, then the body.
  Only threads that ran in this workspace are candidates.
* ``memory_summary.md``: ``## User Profile`` (one user fact) and ``## General Tips`` (one
  feedback fact each), both user-level; ``## What's in Memory`` is an index and skipped.

Provenance lines holding local paths (``applies_to``, ``### rollout_summary_files``) are left
out of bodies: a fact body is provider-visible.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath, PureWindowsPath

from ...facts.model import FactType, Scope, one_line
from ...paths import EnginePaths
from ..candidate import Candidate, SourceScan
from .gathered import Gathered
from .text import bullets, clip, first_line, name_from, read_text

_GROUP = re.compile(r"^# Task Group:\s*(.+?)\s*$")
_THREAD = re.compile(r"^## Thread `([^`]+)`\s*$")
_SECTION = re.compile(r"^##\s+(.+?)\s*$")
_CWD = re.compile(r"cwd=([^;\n]+)")
_DROPPED_SUBSECTIONS = ("rollout_summary_files",)


def _norm(path: str) -> str:
    text = path.strip().strip("`'\"")
    if re.match(r"^[A-Za-z]:[\\/]", text):
        return str(PureWindowsPath(text)).lower()
    return str(PurePosixPath(os.path.normpath(text)))


def in_workspace(cwd: str, paths: EnginePaths) -> bool:
    """True when ``cwd`` is this workspace's root or lies inside it."""
    root = _norm(str(paths.root))
    where = _norm(cwd)
    return where == root or where.startswith(root.rstrip("/") + "/")


def _blocks(lines: list[str], heading: re.Pattern[str]) -> list[tuple[int, str, list[str]]]:
    """(line number, heading text, body lines) for every heading match, in order."""
    blocks: list[tuple[int, str, list[str]]] = []
    for number, line in enumerate(lines, 1):
        match = heading.match(line)
        if match:
            blocks.append((number, match.group(1), []))
        elif blocks:
            blocks[-1][2].append(line)
    return blocks


def _without_provenance(lines: list[str]) -> str:
    kept: list[str] = []
    skipping = False
    for line in lines:
        sub = re.match(r"^###\s+(.+?)\s*$", line)
        if sub:
            skipping = sub.group(1).strip().lower() in _DROPPED_SUBSECTIONS
        elif re.match(r"^#{1,2}\s", line):
            skipping = False
        if skipping or line.startswith("applies_to:"):
            continue
        kept.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def _scope_for(cwds: list[str], paths: EnginePaths) -> Scope | None:
    """project for this workspace, global when bound to none, None for another workspace."""
    if not cwds:
        return "global"
    if any(in_workspace(c, paths) for c in cwds):
        return "project"
    return None


def _candidate(
    fact_type: FactType, scope: Scope, title: str, description: str, body: str,
    source: Path, line: int,
) -> Candidate | None:
    name = name_from(title) or name_from(description)
    if not name or not body:
        return None
    return Candidate("codex", fact_type, scope, name, one_line(title), clip(description), body,
                     source, line)


def _handbook(path: Path, paths: EnginePaths) -> list[Candidate]:
    found: list[Candidate] = []
    for number, title, lines in _blocks(read_text(path).split("\n"), _GROUP):
        applies = next((ln for ln in lines if ln.startswith("applies_to:")), "")
        scope = _scope_for(_CWD.findall(applies), paths)
        if scope is None:
            continue
        summary = next((ln[len("scope:"):] for ln in lines if ln.startswith("scope:")), "")
        body = _without_provenance(lines)
        made = _candidate("project", scope, title, summary or first_line(body), body, path,
                          number)
        if made:
            found.append(made)
    return found


def _raw(path: Path, paths: EnginePaths) -> list[Candidate]:
    found: list[Candidate] = []
    for number, _thread, lines in _blocks(read_text(path).split("\n"), _THREAD):
        fields: dict[str, str] = {}
        fences = [i for i, ln in enumerate(lines) if ln.strip() == "---"]
        header = lines[: fences[0]] if fences else lines
        inner = lines[fences[0] + 1 : fences[1]] if len(fences) >= 2 else []
        body_lines = lines[fences[1] + 1 :] if len(fences) >= 2 else []
        for ln in [*header, *inner]:
            key, sep, value = ln.partition(":")
            if sep and key.strip() and " " not in key.strip():
                fields.setdefault(key.strip(), value.strip())
        cwd = fields.get("cwd", "")
        if not cwd or not in_workspace(cwd, paths):
            continue
        title = fields.get("task") or fields.get("task_group") or ""
        body = "\n".join(body_lines).strip()
        made = _candidate("project", "project", title, fields.get("description", ""), body,
                          path, number)
        if made:
            found.append(made)
    return found


def _summary(path: Path) -> list[Candidate]:
    found: list[Candidate] = []
    for number, title, lines in _blocks(read_text(path).split("\n"), _SECTION):
        key = title.strip().lower()
        if key == "user profile":
            body = "\n".join(lines).strip()
            made = _candidate("user", "global", "User profile (Codex)", first_line(body), body,
                              path, number)
            if made:
                found.append(made)
        elif key == "general tips":
            for line, item in bullets(lines, number + 1):
                made = _candidate("feedback", "global", "", item, item, path, line)
                if made:
                    found.append(made)
    return found


def scan(root: Path, paths: EnginePaths) -> SourceScan:
    """Candidates from ``<root>/memories``: handbook, raw memories, then the summary."""
    memories = root / "memories"
    gathered = Gathered()
    readers = (
        ("MEMORY.md", lambda p: _handbook(p, paths)),
        ("raw_memories.md", lambda p: _raw(p, paths)),
        ("memory_summary.md", _summary),
    )
    for name, reader in readers:
        path = memories / name
        if not path.is_symlink() and path.is_file():
            gathered.read(path, reader)
    return gathered.result("codex")
