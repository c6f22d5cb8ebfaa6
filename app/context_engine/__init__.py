"""Context Engine v2: standing instructions, typed memory and budgeted recall for coding agents."""

from .engine import ContextEngine, Session
from .errors import ContextEngineError
from .facts.model import Diagnostic, Fact
from .paths import EnginePaths
from .session.core import TurnResult

__all__ = [
    "ContextEngine",
    "ContextEngineError",
    "Diagnostic",
    "EnginePaths",
    "Fact",
    "Session",
    "TurnResult",
]
