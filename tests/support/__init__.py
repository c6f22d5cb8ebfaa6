"""Shared test fixtures and helpers, one place for every test package (engine and ui).

``support.store`` (temporary homes, trees, worker processes), ``support.remote`` (a served
workspace), ``support.recall`` (sample facts), ``support.instructions`` (recording file systems),
``support.secrets`` (sensitive samples), ``support.suggest`` (agent session homes),
``support.quality`` (the recall quality set and its metrics).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from context_engine.paths import EnginePaths

ROOT = Path(__file__).resolve().parents[2]
APP_DIR = ROOT / "app"
UI_DIR = ROOT / "ui"
TESTS_DIR = ROOT / "tests"
DATA = TESTS_DIR / "engine" / "data"

# A low-risk project fact (S10.1: written without asking), used by tool and CLI tests.
RELEASE = {
    "name": "release-target",
    "description": "Release target for this project",
    "type": "project",
    "body": "Release artifacts are published from main-v2.",
}


def release_with(**changes: object) -> dict[str, object]:
    """``RELEASE`` with fields changed; a ``None`` value leaves that field out."""
    args: dict[str, object] = dict(RELEASE)
    for key, value in changes.items():
        if value is None:
            args.pop(key, None)
        else:
            args[key] = value
    return args


def cli_argv(paths: EnginePaths, *args: str) -> list[str]:
    """``python -m context_engine --home HOME --workspace WS ARGS…`` for ``paths``."""
    where = ["--home", str(paths.home), "--workspace", str(paths.workspace)]
    return [sys.executable, "-m", "context_engine", *where, *args]
