"""Pick the most recent sessions of a workspace across all sources (S11.1, S11.2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .model import ReadResult, ScanDiagnostic, SessionFile
from .readers import FINDERS
from .roots import SourceRoots

MAX_SESSIONS = 12


@dataclass(slots=True)
class RecentSessions:
    """The parsed sessions, newest first, and what went wrong while reading them."""

    sessions: list[tuple[SessionFile, ReadResult]] = field(default_factory=list)
    diagnostics: list[ScanDiagnostic] = field(default_factory=list)


def list_sessions(state: Path, root: Path, roots: SourceRoots) -> list[SessionFile]:
    """Every candidate session of every source, found by listing and ``stat`` only."""
    found: list[SessionFile] = []
    for _source, finder in FINDERS:
        found.extend(finder(state, root, roots))
    # Newest first; ties broken by path so two scans agree (ListSessions, §1.6).
    found.sort(key=lambda s: (-s.mtime_ns, s.location))
    return found


def load_recent(
    state: Path, root: Path, roots: SourceRoots, limit: int = MAX_SESSIONS
) -> RecentSessions:
    """Parse sessions newest first until ``limit`` of them have at least one user turn.

    Older sessions are never opened; a session of another workspace that can only be told
    apart by its header (Codex) has that header line read and nothing else.
    """
    recent = RecentSessions()
    for session in list_sessions(state, root, roots):
        if len(recent.sessions) >= limit:
            break
        try:
            if session.belongs is not None and not session.belongs(session):
                continue
            result = session.read(session)
        except Exception as exc:  # odd data in one file costs that session, never the scan
            recent.diagnostics.append(ScanDiagnostic("unreadable", session.path, repr(exc)))
            continue
        recent.diagnostics.extend(result.diagnostics)
        if result.corrupt_lines:
            recent.diagnostics.append(
                ScanDiagnostic(
                    "corrupt_lines",
                    session.path,
                    f"{result.corrupt_lines} unreadable line(s) skipped",
                    result.corrupt_lines,
                )
            )
        if result.turns:  # ListSessions drops sessions with no user turn (§1.6)
            recent.sessions.append((session, result))
    return recent
