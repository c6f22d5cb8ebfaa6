"""Adapter from the fact store to recall: snapshots in, an up-to-date ``Recaller`` out.

Reading never writes or locks a store (``Memory.snapshot``), so recall cannot change one.
A snapshot that cannot be read at all leaves the index as it was and is reported, so the
turn still proceeds (S8.11).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..facts.memory import Memory
from ..facts.model import Diagnostic
from ..paths import EnginePaths
from .engine import Recaller
from .trace import TraceLog


@dataclass(frozen=True, slots=True)
class RefreshReport:
    """What one refresh did: facts re-indexed and whether the snapshot could be read."""

    changed: int
    error: str | None = None


class WorkspaceRecall:
    """One workspace's recall: the store, the incremental index and the trace log."""

    def __init__(self, paths: EnginePaths, memory: Memory | None = None) -> None:
        self.paths = paths
        self.memory = memory or Memory(paths)
        self.recaller = Recaller()
        self.traces = TraceLog(
            paths.workspace_data / "recall", stores=(paths.project_store, paths.global_store)
        )

    def refresh(self) -> RefreshReport:
        """Re-read both stores and apply only what changed since the last refresh."""
        try:
            snapshot = self.memory.snapshot()
        except Exception as exc:  # unreadable stores never fail the turn
            return RefreshReport(changed=0, error=type(exc).__name__)
        diagnostics: tuple[Diagnostic, ...] = snapshot.diagnostics
        return RefreshReport(changed=self.recaller.sync(snapshot.facts, diagnostics))
