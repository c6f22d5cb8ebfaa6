"""Which outside folders the watcher may watch: only what this workspace and home need."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from context_engine.paths import EnginePaths, reasonix_home


def claude_dir_to_watch(paths: EnginePaths, claude: Path,
                        env: Mapping[str, str] | None = None) -> Path | None:
    """Claude Code's folder, unless ``--home`` points away from the person's own home.

    A given home (tests, demos, a second profile) must never make the app watch the real
    ``~/.claude``: only an explicit ``CLAUDE_CONFIG_DIR`` or a folder inside that home counts.
    """
    env = os.environ if env is None else env
    if env.get("CLAUDE_CONFIG_DIR", "").strip():
        return claude
    try:
        claude.relative_to(paths.home)
        return claude
    except ValueError:
        pass
    default_home = reasonix_home(dict(env))
    return claude if paths.home == default_home.expanduser().resolve() or \
        paths.home == default_home else None
