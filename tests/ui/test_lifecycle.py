"""The app's process life (S13.1): Ctrl+C and SIGTERM end it cleanly, ``--demo`` leaves no
temporary directory behind, and ``--smoke`` quits by itself after the first painted frame."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def app_env(tmp_path: Path) -> dict[str, str]:
    """A private HOME and TMPDIR, offscreen, running this checkout's sources."""
    return dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), TMPDIR=str(tmp_path),
                XDG_CONFIG_HOME=str(tmp_path / "config"),
                PYTHONPATH=os.pathsep.join([str(ROOT / "app"), str(ROOT / "ui")]))


def demo_dirs(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob("context-center-demo-*"))


def test_smoke_quits_after_the_first_frame_and_removes_the_demo(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "context_center", "--demo", "--smoke"],
        env=app_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "first frame painted" in done.stdout
    assert "Traceback" not in done.stderr
    assert demo_dirs(tmp_path) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_app_cleanly(tmp_path: Path, signum: int) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "context_center", "--demo"], env=app_env(tmp_path),
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not demo_dirs(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert demo_dirs(tmp_path), "the demo was never generated"
        time.sleep(3)  # the window is up and loading
        assert process.poll() is None, process.communicate()[1]
        process.send_signal(signum)
        code = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        _, stderr = process.communicate(timeout=10)
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert demo_dirs(tmp_path) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_it_starts_stops_the_app_cleanly(tmp_path: Path, signum: int) -> None:
    """Before the event loop's handler exists (PySide6 still importing): noted, then a clean
    stop — exit 0, the demo removed, no traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "context_center", "--demo"], env=app_env(tmp_path),
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not demo_dirs(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert demo_dirs(tmp_path), "the demo was never generated"
        process.send_signal(signum)  # the demo is being generated: long before the window
        code = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        _, stderr = process.communicate(timeout=10)
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert demo_dirs(tmp_path) == []
