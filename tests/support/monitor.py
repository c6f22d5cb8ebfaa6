"""Helpers for the store monitor tests: monitors turned on for one test, and always stopped.

The suite runs with ``CONTEXT_ENGINE_MONITOR=0`` (tests/conftest.py). A test that wants one
uses ``Monitors``: the monitor turned on, a private runtime directory of its own (so its
sockets never meet another test's), a short idle time, and at teardown every monitor it knows
of asked to stop, then killed by pid if it did not.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

import pytest
from context_engine.monitor import client, server


class Monitors:
    """The monitors of one test (subprocesses or threads), all stopped by ``close``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, idle: float = 60.0) -> None:
        self.runtime = tempfile.mkdtemp(prefix="cem-")  # short: a socket path has 100 bytes
        os.chmod(self.runtime, 0o700)
        monkeypatch.setenv(client.ENV, "1")
        monkeypatch.setenv("XDG_RUNTIME_DIR", self.runtime)
        monkeypatch.setenv(client.IDLE_ENV, str(idle))
        self.states: set[str] = set()
        self.pids: set[int] = set()
        self.threads: list[threading.Thread] = []

    def env(self, **extra: str) -> dict[str, str]:
        """An environment for child processes that use these monitors."""
        from support.index import child_env

        return {**child_env(), **extra}

    def spawn(self, state: Path | str) -> int:
        """A monitor process for ``state``, answering (its pid)."""
        self.states.add(str(state))
        pid = client.spawn(str(state))
        assert pid is not None
        self.pids.add(pid)
        return self.wait_up(state)

    def thread(self, state: Path | str, idle: float = 60.0) -> None:
        """A monitor for ``state`` in a thread of this process (fast tests)."""
        self.states.add(str(state))
        runner = threading.Thread(target=server.run, args=(str(state), idle), daemon=True)
        runner.start()
        self.threads.append(runner)
        self.wait_up(state)

    def wait_up(self, state: Path | str, timeout: float = 30.0) -> int:
        """The pid of the monitor of ``state`` once it answers."""
        self.states.add(str(state))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = client.status(str(state))
            if found is not None and isinstance(found.get("pid"), int):
                pid = int(found["pid"])
                if pid != os.getpid():
                    self.pids.add(pid)
                return pid
            time.sleep(0.02)
        raise AssertionError("the monitor did not come up")

    def close(self) -> None:
        """Stop every monitor (asked, then killed), and forget the runtime directory."""
        self.pids.update(client._spawned)  # started by the code under test, maybe not up yet
        saved = {key: os.environ.get(key) for key in ("XDG_RUNTIME_DIR", client.ENV)}
        os.environ["XDG_RUNTIME_DIR"] = self.runtime  # a test may have undone its patches
        os.environ[client.ENV] = "1"
        try:
            self._stop_all()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        shutil.rmtree(self.runtime, ignore_errors=True)

    def _stop_all(self) -> None:
        for state in self.states:
            found = client.status(state)
            pid = None if found is None else found.get("pid")
            if isinstance(pid, int) and pid != os.getpid():
                self.pids.add(pid)
            client.stop(state)
        for runner in self.threads:
            runner.join(5)
        for pid in self.pids:
            wait_gone(pid, 5.0)
            if alive(pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                wait_gone(pid, 5.0)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie child is reaped and counts as gone)."""
    with contextlib.suppress(ChildProcessError, OSError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def wait_gone(pid: int, timeout: float) -> bool:
    """True once ``pid`` has exited (within ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return not alive(pid)
