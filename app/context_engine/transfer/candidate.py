"""What an import proposes: one candidate fact per memory found in another agent's files."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from ..facts.model import Diagnostic, FactType, Scope

Agent = Literal["claude-code", "codex", "gemini"]
AGENTS: tuple[Agent, ...] = ("claude-code", "codex", "gemini")

# ``new``: would be written; ``exists``: already here (same content or a duplicate the write
# policy would flag); ``repeat``: the same memory was found earlier in this scan.
Status = Literal["new", "exists", "repeat"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One memory found in a source, mapped onto our fields, with its evidence."""

    agent: Agent
    type: FactType
    scope: Scope
    name: str
    title: str
    description: str
    body: str
    source: Path
    line: int

    @property
    def evidence(self) -> str:
        """``<source file>:<line>`` (shown locally; never written into a fact)."""
        return f"{self.source}:{self.line}"

    def edited(self, **changes: str) -> Candidate:
        """A copy with some of type, scope, name, title, description or body replaced."""
        return replace(self, **changes)  # type: ignore[arg-type]  # reason: the edited fields are this dataclass's own


@dataclass(frozen=True, slots=True)
class Planned:
    """A candidate with the plan's verdict: its status, what it duplicates, its secrets."""

    candidate: Candidate
    status: Status
    reason: str = ""
    findings: tuple[str, ...] = ()  # sensitive rule ids (S10.2); never the matched text

    @property
    def flagged(self) -> bool:
        """True when the sensitive-content detector matched something."""
        return bool(self.findings)


@dataclass(frozen=True, slots=True)
class SourceScan:
    """What one agent's files gave: candidates in file order, and unreadable files."""

    agent: Agent
    candidates: tuple[Candidate, ...]
    diagnostics: tuple[Diagnostic, ...]
    files: tuple[Path, ...]  # every file read, for the "nothing found" message
