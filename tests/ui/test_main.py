"""``context-center --demo`` starts, shows a window and keeps running (S13.1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from context_center.__main__ import parse_args

ROOT = Path(__file__).resolve().parents[2]


def test_parse_args():
    args = parse_args(["--workspace", "/w", "--home", "/h", "--demo"])
    assert (args.workspace, args.home, args.demo) == ("/w", "/h", True)
    assert parse_args([]).demo is False


@pytest.mark.slow
def test_demo_command_runs_until_stopped(tmp_path: Path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), TMPDIR=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / "config"),
               PYTHONPATH=os.pathsep.join([str(ROOT / "app"), str(ROOT / "ui")]))
    process = subprocess.Popen(
        [sys.executable, "-m", "context_center", "--demo"], env=env, cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=6)  # still running: the event loop is up, nothing crashed
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert "Traceback" not in stderr, stderr
