"""Who wrote each revision through the door: a journal in our own data dirs, never in a store.

The fact files and ``.revisions/`` snapshots stay byte-compatible with Reasonix (no key is
added to them); each write that ``LocalCatalog.apply`` runs appends one JSON line
``{"id", "scope", "revision", "by"}`` to ``<data>/journal/<scope>-writes.jsonl`` (0600, beside
the derived index). A revision with no line was written by another program (Reasonix, an
editor) or before the journal existed: "not through this engine" is all that is known then.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from ..filemodes import append_private
from ..paths import EnginePaths
from .ops import Actor, Agent

MAX_READ = 8 * 1024 * 1024  # bytes read back at most (the newest), however long it grows


def journal_path(paths: EnginePaths, scope: str) -> Path:
    """The journal of ``scope``'s store (the global one is shared, like its index)."""
    data = paths.global_data if scope == "global" else paths.workspace_data
    return data / "journal" / f"{scope}-writes.jsonl"


def actor_words(actor: Actor) -> str:
    """How a history names the writer: the app, the CLI, an agent's tool."""
    if isinstance(actor, Agent):
        return f"an agent's tool ({actor.controller})"
    return "the app" if actor.surface == "app" else "the CLI"


def record(paths: EnginePaths, scope: str, fact_id: str, revision: int, actor: Actor) -> None:
    """Append one line; best effort (the write itself has already succeeded)."""
    line = json.dumps({"id": fact_id, "scope": scope, "revision": revision,
                       "by": actor_words(actor)}, ensure_ascii=False) + "\n"
    with contextlib.suppress(OSError):  # best effort: the write itself has succeeded
        append_private(journal_path(paths, scope), line)  # one short O_APPEND write


def writers(paths: EnginePaths, scope: str, fact_id: str) -> dict[int, str]:
    """revision → who wrote it, for the revisions of ``fact_id`` the journal knows."""
    target = journal_path(paths, scope)
    try:
        with open(target, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_READ:
                handle.seek(size - MAX_READ)
                handle.readline()  # skip the cut line
            data = handle.read()
    except OSError:
        return {}
    needle = fact_id.encode("utf-8")
    found: dict[int, str] = {}
    for raw in data.splitlines():
        if needle not in raw:
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("id") == fact_id and \
                isinstance(entry.get("revision"), int) and isinstance(entry.get("by"), str):
            found[entry["revision"]] = entry["by"]
    return found
