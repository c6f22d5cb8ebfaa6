"""Zero-config suggestions: memory and skill candidates from recent sessions (S11)."""

from .model import MemoryCandidate, ScanDiagnostic, SkillCandidate, Suggestions, UserTurn
from .roots import SourceRoots
from .scanner import scan

__all__ = [
    "MemoryCandidate",
    "ScanDiagnostic",
    "SkillCandidate",
    "SourceRoots",
    "Suggestions",
    "UserTurn",
    "scan",
]
