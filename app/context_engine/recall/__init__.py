"""Auto-recall (S8): tokenizer, pool, incremental BM25 index, gate, budgeted block and trace.

The names below load on first use, so importing a light submodule (``recall.block`` for the
defaults, ``recall.service``) does not pull in the index and numpy (S12 start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine import Recaller, RecallResult
    from .trace import RecallTrace, TraceLog

__all__ = ["RecallResult", "RecallTrace", "Recaller", "TraceLog"]


def __getattr__(name: str) -> object:
    if name in ("Recaller", "RecallResult"):
        from . import engine

        return getattr(engine, name)
    if name in ("RecallTrace", "TraceLog"):
        from . import trace

        return getattr(trace, name)
    raise AttributeError(name)
