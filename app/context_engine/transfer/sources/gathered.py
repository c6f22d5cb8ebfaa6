"""What one source scan collects: candidates, per-file diagnostics and the files it read."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import FactFormatError
from ...facts.model import Diagnostic
from ..candidate import Agent, Candidate, SourceScan
from .text import diagnostic


@dataclass(slots=True)
class Gathered:
    """The scan's running lists, in the order the files were read."""

    candidates: list[Candidate] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    def read(self, path: Path, reader: Callable[[Path], Iterable[Candidate]]) -> None:
        """Read one source file; a malformed one is skipped with a diagnostic, never changed."""
        self.files.append(path)
        try:
            self.candidates.extend(reader(path))
        except FactFormatError as exc:
            self.diagnostics.append(diagnostic(path, exc))

    def result(self, agent: Agent) -> SourceScan:
        """The scan's answer for ``agent``."""
        return SourceScan(agent, tuple(self.candidates), tuple(self.diagnostics),
                          tuple(self.files))
