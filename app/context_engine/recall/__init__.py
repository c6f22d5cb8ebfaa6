"""Auto-recall (S8): tokenizer, pool, incremental BM25 index, gate, budgeted block and trace."""

from .engine import Recaller, RecallResult
from .trace import RecallTrace, TraceLog

__all__ = ["RecallResult", "RecallTrace", "Recaller", "TraceLog"]
