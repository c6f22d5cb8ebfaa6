"""Where each agent keeps its history; every root can be overridden (tests, S12)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


def _env_dir(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name, "").strip()
    if not value:
        return None
    return Path(os.path.expandvars(value)).expanduser()


@dataclass(frozen=True, slots=True)
class SourceRoots:
    """Roots of the four history sources; ``None`` for ``state`` means the engine state root."""

    state: Path | None
    claude: Path
    codex: Path
    gemini: Path

    @classmethod
    def from_env(
        cls,
        state: Path | None = None,
        env: Mapping[str, str] | None = None,
        user_home: Path | None = None,
    ) -> SourceRoots:
        """Defaults: ``CLAUDE_CONFIG_DIR``/``~/.claude``, ``CODEX_HOME``/``~/.codex``,
        ``GEMINI_CLI_HOME/.gemini``/``~/.gemini`` (transcripts.md §4.1, §5.1, §6.1)."""
        env = os.environ if env is None else env
        home = user_home if user_home is not None else Path.home()
        claude = _env_dir(env, "CLAUDE_CONFIG_DIR") or home / ".claude"
        codex = _env_dir(env, "CODEX_HOME") or home / ".codex"
        gemini_home = _env_dir(env, "GEMINI_CLI_HOME")
        gemini = (gemini_home or home) / ".gemini"
        return cls(state=state, claude=claude, codex=codex, gemini=gemini)
