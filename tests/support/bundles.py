"""Stores with history for the bundle tests, and a file-by-file view of a home."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.transfer.progress import Cancelled


def workspace(tmp: Path) -> Path:
    """A git workspace under ``tmp`` (the same root for every home of a test)."""
    ws = tmp / "ws"
    (ws / ".git").mkdir(parents=True, exist_ok=True)
    return ws


def paths_for(home: Path, ws: Path) -> EnginePaths:
    """Engine paths of ``home`` for ``ws``."""
    return EnginePaths.resolve(home=home, workspace=ws)


def populate(paths: EnginePaths) -> Memory:
    """Facts in both stores, Chinese and English, with revisions, a restore and archives."""
    memory = Memory(paths)
    memory.save(name="release-target", title="Release target", type="project",
                description="Release branch for this project", body="Publish from main-v2.")
    memory.save(name="release-target", description="Release branch for this project",
                body="Publish from main-v3.")
    memory.save(name="release-target", description="Release branch (moved)",
                body="Publish from release/4.")
    fact = memory.resolve("release-target")
    memory.restore(fact.id, 1)
    memory.save(name="记忆召回", type="reference", description="召回的说明",
                body="自动召回每轮最多四条。")
    memory.save(name="prefers-tabs", type="user", scope="global",
                description="The user prefers tabs", body="Indent with tabs, width 4.")
    memory.save(name="prefers-tabs", scope="global", description="The user prefers tabs",
                body="Indent with tabs, width 8.")
    memory.save(name="old-note", type="feedback", scope="global", description="an old note",
                body="Soon forgotten.")
    memory.forget("global/old-note.md")
    memory.save(name="scratch", description="scratch", body="Forgotten twice.")
    memory.forget("project/scratch.md")
    return memory


def files_of(home: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``home`` except lock files and the derived fact index (any reader may
    refresh it): relative path → (bytes, mtime_ns)."""
    found: dict[str, tuple[bytes, int]] = {}
    for dirpath, _dirs, names in os.walk(home):
        for name in names:
            if name == ".lock" or Path(dirpath).parts[-2:] == ("context-center", "index"):
                continue
            path = Path(dirpath) / name
            found[str(path.relative_to(home))] = (path.read_bytes(), path.lstat().st_mtime_ns)
    return found


def store_files_of(home: Path) -> dict[str, tuple[bytes, int]]:
    """``files_of`` limited to the two stores (our own context-center files left out)."""
    return {k: v for k, v in files_of(home).items() if "/context-center/" not in f"/{k}"}


def cancel_after(calls: int) -> Callable[[], None]:
    """A ``check`` that cancels (raises ``Cancelled``) on its ``calls``-th call."""
    seen = [0]

    def check() -> None:
        seen[0] += 1
        if seen[0] >= calls:
            raise Cancelled("cancelled")

    return check
