"""One transcript reader per agent format; each lists a workspace's sessions by stat only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..model import SessionFile
from ..roots import SourceRoots
from . import claude_code, codex, gemini, reasonix

Finder = Callable[[Path, Path, SourceRoots], list[SessionFile]]

# (state root, workspace root, roots) -> sessions of that workspace, not yet parsed.
FINDERS: tuple[tuple[str, Finder], ...] = (
    ("reasonix", reasonix.find_sessions),
    ("claude-code", claude_code.find_sessions),
    ("codex", codex.find_sessions),
    ("gemini", gemini.find_sessions),
)
