"""Context Engine v2: standing instructions, typed memory and budgeted recall for coding agents."""

from .errors import ContextEngineError
from .facts.model import Diagnostic, Fact
from .paths import EnginePaths

__all__ = ["ContextEngineError", "Diagnostic", "EnginePaths", "Fact"]
