"""Where each agent keeps its hook and MCP settings, and what we put there (S15.1)."""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..hooks.protocol import Agent, supported_events

Scope = Literal["user", "project"]
SCOPES: tuple[Scope, ...] = ("user", "project")
SERVER_NAME = "context-engine"
# Hook context the agents pass to the model whole (Claude Code and Codex cut the rest).
CONTEXT_LIMIT = 10_000
# Codex (0.171) gives an MCP server that is not ``required`` a startup grace (default 1000 ms)
# at the first model step, then leaves its tools out of that step; ours needs 1.2 s and more to
# import the MCP SDK on a busy machine, so ``codex exec`` never offered them. The grace only
# waits as long as servers need; 10 s is Codex's own start-up timeout for a server.
# ``required = true`` would instead stop Codex whenever ours cannot start.
CODEX_GRACE_KEY = "mcp_optional_startup_grace_ms"
CODEX_GRACE_DEFAULT_MS = 1000
CODEX_GRACE_MS = 10_000
# Our hook command, recognised on uninstall: ``<python> -I -m context_engine.hooks …``.
HOOK_MARK = " -I -m context_engine.hooks "


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """One agent: its binary, events, limit and the unit of its hook timeout."""

    agent: Agent
    binary: str
    limit: int
    timeout: int  # in the agent's own unit (Gemini: milliseconds)
    timeout_unit: str

    @property
    def events(self) -> tuple[str, ...]:
        """The hook events we register."""
        return supported_events(self.agent)


SPECS: dict[Agent, AgentSpec] = {
    "claude-code": AgentSpec("claude-code", "claude", CONTEXT_LIMIT, 30, "s"),
    "codex": AgentSpec("codex", "codex", CONTEXT_LIMIT, 30, "s"),
    "gemini": AgentSpec("gemini", "gemini", CONTEXT_LIMIT, 30_000, "ms"),
}


@dataclass(frozen=True, slots=True)
class ConfigFiles:
    """The files one agent reads at one scope: hooks (JSON) and MCP servers (JSON or TOML)."""

    hooks: Path
    mcp: Path
    mcp_table: str  # "mcpServers" (JSON) or "mcp_servers" (Codex TOML)

    @property
    def mcp_is_toml(self) -> bool:
        """Codex keeps MCP servers in ``config.toml``."""
        return self.mcp.suffix == ".toml"


def user_home() -> Path:
    """The person's home directory (``$HOME``)."""
    return Path(os.environ.get("HOME") or Path.home())


def config_files(agent: Agent, scope: Scope, root: Path) -> ConfigFiles:
    """The agent's own settings files at ``scope`` (``root``: the workspace root)."""
    home = user_home()
    if agent == "claude-code":
        if scope == "project":
            return ConfigFiles(root / ".claude" / "settings.json", root / ".mcp.json", "mcpServers")
        configured = os.environ.get("CLAUDE_CONFIG_DIR")
        if configured:
            base = Path(configured)
            return ConfigFiles(base / "settings.json", base / ".claude.json", "mcpServers")
        return ConfigFiles(home / ".claude" / "settings.json", home / ".claude.json", "mcpServers")
    if agent == "codex":
        base = root / ".codex" if scope == "project" else codex_home()
        return ConfigFiles(base / "hooks.json", base / "config.toml", "mcp_servers")
    base = root / ".gemini" if scope == "project" else home / ".gemini"
    return ConfigFiles(base / "settings.json", base / "settings.json", "mcpServers")


def codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    configured = os.environ.get("CODEX_HOME")
    return Path(configured) if configured else user_home() / ".codex"


def interpreter() -> str:
    """This installation's Python, absolute (the agent's PATH may not have ours)."""
    return str(Path(sys.executable).absolute())


def _home_args(reasonix_home: Path | None) -> list[str]:
    return ["--home", str(reasonix_home)] if reasonix_home is not None else []


def hook_command(agent: Agent, event: str, reasonix_home: Path | None = None) -> str:
    """The fast hook entry as a shell command line (``-I``: no cwd or env on the import path)."""
    words = [*_home_args(reasonix_home), agent, event]
    tail = " ".join(shlex.quote(word) for word in words)
    return f"{shlex.quote(interpreter())}{HOOK_MARK}{tail}"


def is_our_hook(command: object) -> bool:
    """True for a hook command ``install`` wrote."""
    return isinstance(command, str) and HOOK_MARK in f"{command} "


def hook_handler(spec: AgentSpec, event: str, reasonix_home: Path | None) -> dict[str, Any]:
    """One hook handler object in the agent's JSON shape."""
    handler: dict[str, Any] = {
        "type": "command",
        "command": hook_command(spec.agent, event, reasonix_home),
        "timeout": spec.timeout,
    }
    if spec.agent == "gemini":
        handler["name"] = f"context-engine-{event}"
    return handler


def mcp_entry(agent: Agent, reasonix_home: Path | None) -> dict[str, Any]:
    """Our MCP server entry (stdio, this interpreter)."""
    entry: dict[str, Any] = {
        "command": interpreter(),
        "args": ["-I", "-m", "context_engine", *_home_args(reasonix_home), "mcp"],
    }
    if agent == "claude-code":
        # Claude Code 2.1 connects MCP servers in the background (``claude -p`` included) and
        # may defer their tools behind tool search; ``alwaysLoad`` servers are connected before
        # the first turn (at most MCP_CONNECT_TIMEOUT_MS, 5 s) and their tools always offered.
        entry = {"type": "stdio", **entry, "alwaysLoad": True}
    return entry
