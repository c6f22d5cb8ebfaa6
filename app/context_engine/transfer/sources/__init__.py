"""Readers of other agents' memory files; each maps its files onto ``Candidate`` values."""

from __future__ import annotations

from ...paths import EnginePaths
from ...suggestions.roots import SourceRoots
from ..candidate import Agent, SourceScan


def scan_agent(agent: Agent, paths: EnginePaths, roots: SourceRoots | None = None) -> SourceScan:
    """Read ``agent``'s memories for this workspace and its user-level ones (never writes)."""
    roots = roots or SourceRoots.from_env()
    if agent == "claude-code":
        from .claude_code import scan

        return scan(roots.claude, paths)
    if agent == "codex":
        from .codex import scan as scan_codex

        return scan_codex(roots.codex, paths)
    from .gemini import scan as scan_gemini

    return scan_gemini(roots.gemini, paths)
