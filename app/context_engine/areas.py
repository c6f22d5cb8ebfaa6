"""The one change classifier: which area of a workspace a changed path belongs to.

Shared by the server's watcher (``remote/watcher.py``, it pushes ``changed`` to remote windows)
and the app's watcher bridge (``context_center/services/watcher.py``), so both react to the
same files: a fact is a ``<name>.md`` directly in a store; temp, partial and lock files of
atomic writers, MEMORY.md, other files and subfolders of a store are nobody's change.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .instructions.model import LOCAL_NAMES, NORMAL_NAMES
from .paths import EnginePaths

AREAS = ("facts", "archive", "instructions", "sessions", "traces")
INSTRUCTION_NAMES = frozenset(NORMAL_NAMES + LOCAL_NAMES)


# Our derived SQLite files (fact indexes, write state, recall state) and their companions.
_DERIVED = (".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal")


def is_ignored(name: str) -> bool:
    """Temp, partial and lock files of atomic writers, the derived MEMORY.md, our SQLite files.

    The SQLite files live in the trace folder's tree (``<workspace data>/index``, ``cache``):
    a first read that builds the derived index writes them thousands of times a second, and
    none of it is anyone's change to show.
    """
    return (
        name.startswith(".tmp-")
        or name.endswith((".partial", ".lock", ".tmp", "~", *_DERIVED))
        or name in {".lock", "MEMORY.md"}
    )


def event_paths(event: object) -> list[str]:
    """The paths a watchdog event names: its source, and the destination of a move.

    Opens and reads without a write are nobody's change (an empty list). An atomic replace
    arrives as moved(tmp → fact.md): the destination is what matters.
    """
    if getattr(event, "event_type", "") in ("opened", "closed_no_write"):
        return []
    paths = [os.fsdecode(getattr(event, "src_path", ""))]
    dest = getattr(event, "dest_path", "")
    if dest:
        paths.append(os.fsdecode(dest))
    return paths


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def instruction_chain(paths: EnginePaths) -> list[Path]:
    """The home, the workspace root and each folder down to the workspace (S6 discovery)."""
    chain = [paths.home, paths.root]
    if _under(paths.workspace, paths.root):
        current = paths.root
        for part in paths.workspace.relative_to(paths.root).parts:
            current = current / part
            chain.append(current)
    return list(dict.fromkeys(chain))


class WatchTargets:
    """Which directories to watch and which area a path under each belongs to."""

    def __init__(
        self,
        stores: Iterable[Path],
        instruction_dirs: Iterable[Path],
        session_dirs: Iterable[Path],
        trace_dirs: Iterable[Path] = (),
        boundaries: Iterable[Path] = (),
    ) -> None:
        self.stores = tuple(Path(p) for p in stores)
        self.instruction_dirs = tuple(Path(p) for p in instruction_dirs)
        self.session_dirs = tuple(Path(p) for p in session_dirs)
        self.trace_dirs = tuple(Path(p) for p in trace_dirs)
        # A missing folder is watched through its nearest existing ancestor, but never above
        # these (watching / recursively would flood the observer).
        self.boundaries = tuple(Path(p) for p in boundaries)
        self.files: dict[Path, str] = {}  # exact files of an area (imported instruction files)

    @classmethod
    def of(cls, paths: EnginePaths, extra_sessions: Iterable[Path] = ()) -> WatchTargets:
        """Both stores, the instruction chain, the sessions and the workspace's trace folder."""
        return cls(
            stores=(paths.project_store, paths.global_store),
            instruction_dirs=instruction_chain(paths),
            session_dirs=(paths.sessions_dir, *extra_sessions),
            trace_dirs=(paths.workspace_data,),
            boundaries=(paths.state, paths.home, paths.root),
        )

    def classify(self, path: str | Path) -> str | None:
        """The area of ``path``, or ``None`` when it is irrelevant or a temp/lock file."""
        p = Path(path)
        if is_ignored(p.name):
            return None
        for store in self.stores:
            if _under(p, store) and p != store:
                rel = p.relative_to(store).parts
                if rel[0] in (".archive", ".revisions"):
                    return "archive"
                if len(rel) == 1 and p.suffix == ".md":
                    return "facts"
                return None
        for folder in self.session_dirs:
            if _under(p, folder):
                return "sessions"
        for folder in self.trace_dirs:
            if _under(p, folder):
                return "traces"
        if p.name in INSTRUCTION_NAMES and p.parent in self.instruction_dirs:
            return "instructions"
        return self.files.get(p)

    def roots(self) -> list[tuple[Path, bool]]:
        """(directory, recursive) pairs for the observer, deduplicated."""
        wanted = [(p, True) for p in self.stores + self.session_dirs + self.trace_dirs]
        wanted += [(p, False) for p in self.instruction_dirs]
        out: dict[Path, bool] = {}
        for folder, recursive in wanted:
            existing = self._nearest_existing(folder)
            if existing is None:
                continue
            # An ancestor stands in for a folder that does not exist yet: watch it deeply.
            out[existing] = out.get(existing, False) or recursive or existing != folder
        return list(out.items())

    def _nearest_existing(self, folder: Path) -> Path | None:
        for candidate in (folder, *folder.parents):
            if self.boundaries and not any(_under(candidate, b) for b in self.boundaries):
                return None
            if candidate.is_dir():
                return candidate
        return None
