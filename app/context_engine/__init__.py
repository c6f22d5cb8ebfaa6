"""Context Engine v2: standing instructions, typed memory and budgeted recall for coding agents.

The public names load on first use (PEP 562), so importing one submodule — the command line,
a hook, the paths — does not pull in the whole engine (recall, numpy, policy).
"""

from __future__ import annotations

import importlib

# Not ``typing.TYPE_CHECKING``: importing ``typing`` costs a hook relay process ~10 ms (issue 14).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .engine import ContextEngine, Session
    from .errors import ContextEngineError
    from .facts.model import Diagnostic, Fact
    from .paths import EnginePaths
    from .session.core import TurnResult

# public name -> the module that defines it
_PUBLIC: dict[str, str] = {
    "ContextEngine": ".engine",
    "Session": ".engine",
    "ContextEngineError": ".errors",
    "Diagnostic": ".facts.model",
    "Fact": ".facts.model",
    "EnginePaths": ".paths",
    "TurnResult": ".session.core",
}

# The one place the version is written (pyproject.toml reads it; ``--version`` prints it).
__version__ = "0.1.0"

__all__ = [
    "ContextEngine",
    "ContextEngineError",
    "Diagnostic",
    "EnginePaths",
    "Fact",
    "Session",
    "TurnResult",
]


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first access."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the lazy public ones included."""
    return sorted(set(globals()) | set(__all__))
