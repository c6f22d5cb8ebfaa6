"""Values shared by the suggestion readers, extractors, scanner and accept path (S11)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..facts.model import FactType, Scope

SOURCES: tuple[str, ...] = ("reasonix", "claude-code", "codex", "gemini")


@dataclass(frozen=True, slots=True)
class UserTurn:
    """One real user turn: what the person typed, with host-injected parts removed."""

    source: str
    session_id: str
    text: str
    explicit: bool = False  # an explicit memory note (e.g. Claude Code `#` shortcut)


@dataclass(frozen=True, slots=True)
class ScanDiagnostic:
    """A local-only problem found while reading one session file (never fatal)."""

    code: str
    path: Path
    message: str
    count: int = 1


@dataclass(slots=True)
class ReadResult:
    """The user turns of one session file and the lines that could not be read."""

    turns: list[UserTurn] = field(default_factory=list)
    corrupt_lines: int = 0
    diagnostics: list[ScanDiagnostic] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SessionFile:
    """A session found by listing and ``stat`` only; ``belongs`` is a cheap late check."""

    source: str
    session_id: str
    location: str  # the path as listed: a ``Path`` is built only for sessions we open
    mtime_ns: int
    read: Callable[[SessionFile], ReadResult] = field(compare=False)
    belongs: Callable[[SessionFile], bool] | None = field(default=None, compare=False)

    @property
    def path(self) -> Path:
        """The session file."""
        return Path(self.location)


@dataclass(frozen=True, slots=True)
class MemoryCandidate:
    """A proposed fact (S11.3): one statement with its reason, type and evidence."""

    id: str
    name: str
    title: str
    description: str
    type: FactType
    scope: Scope
    reason: str
    evidence: tuple[str, ...]
    body: str


@dataclass(frozen=True, slots=True)
class SkillCandidate:
    """A proposed skill (S11.4): a workflow repeated in at least two sessions."""

    id: str
    name: str
    description: str
    evidence: tuple[str, ...]
    body: str


@dataclass(frozen=True, slots=True)
class Suggestions:
    """Result of one scan; ``available`` is false for a workspace we may not read (S11.6)."""

    available: bool
    memories: tuple[MemoryCandidate, ...] = ()
    skills: tuple[SkillCandidate, ...] = ()
    diagnostics: tuple[ScanDiagnostic, ...] = ()
    sessions: tuple[str, ...] = ()  # "<source>:<session id>" of the sessions parsed
