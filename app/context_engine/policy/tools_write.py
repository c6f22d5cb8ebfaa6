"""Alias of ``context_engine.tools_write`` for hosts that import it from ``policy``."""

from __future__ import annotations

from ..tools_write import ToolOutcome, run_agent_tool, run_write_tool

__all__ = ["ToolOutcome", "run_agent_tool", "run_write_tool"]
