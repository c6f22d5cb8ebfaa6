"""Materialise the agent-memory fixtures (tests/engine/data/imports) for one workspace.

Fixture files hold placeholders: ``@@WORKSPACE@@`` (the workspace root), ``@@SANITIZED@@``
(Claude Code's folder name for it), ``@@GEMINI_ID@@`` (Gemini's project slug) and secret-shaped
values built at run time (the repository holds no token-shaped literal).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from context_engine.suggestions.readers.claude_code import sanitize

from support.secrets import POSITIVES

DATA = Path(__file__).resolve().parents[1] / "engine" / "data" / "imports"
GEMINI_ID = "ws-project"
AGENT_DIRS = {"claude-code": "claude", "codex": "codex", "gemini": "gemini"}


def materialise(agent: str, target: Path, workspace: Path) -> Path:
    """Copy ``agent``'s fixture tree to ``target`` with placeholders filled; returns ``target``."""
    values = {
        "@@WORKSPACE@@": str(workspace),
        "@@SANITIZED@@": sanitize(str(workspace)),
        "@@GEMINI_ID@@": GEMINI_ID,
        "@@GH_TOKEN@@": POSITIVES["github_token"][0],
        "@@PASSWORD_LINE@@": POSITIVES["keyword_assignment"][1],
    }
    source = DATA / AGENT_DIRS[agent]
    for path in sorted(source.rglob("*")):
        rel = str(path.relative_to(source))
        for key, value in values.items():
            rel = rel.replace(key, value)
        out = target / rel
        if path.is_dir():
            out.mkdir(parents=True, exist_ok=True)
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace(key, value)
        out.write_text(text, encoding="utf-8")
    return target


def agent_env(agent: str, root: Path) -> dict[str, str]:
    """The environment variable that points ``agent`` at ``root`` (S12)."""
    if agent == "claude-code":
        return {"CLAUDE_CONFIG_DIR": str(root)}
    if agent == "codex":
        return {"CODEX_HOME": str(root)}
    return {"GEMINI_CLI_HOME": str(root.parent)}  # Gemini's root is $GEMINI_CLI_HOME/.gemini


def setup(agent: str, tmp: Path, workspace: Path) -> dict[str, str]:
    """Materialise ``agent``'s fixtures under ``tmp`` and return the env that finds them."""
    root = tmp / "agent" / (".gemini" if agent == "gemini" else AGENT_DIRS[agent])
    shutil.rmtree(root, ignore_errors=True)
    materialise(agent, root, workspace)
    return agent_env(agent, root)
