"""The hook process a running server answers stays as small as a process can be (issue 14)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from context_engine.hooks import relay
from context_engine.paths import EnginePaths
from support import APP_DIR
from support.store import git_paths

# None of these is needed to hand a turn to the server and print its answer.
NOT_NEEDED = (
    "typing",
    "dataclasses",
    "inspect",
    "hashlib",
    "socket",
    "click",
    "sqlite3",
    "context_engine.session.core",
    "context_engine.engine",
    "context_engine.facts.model",
    "context_engine.hooks.state",
)
ANSWER = '{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}}'


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[EnginePaths, list[dict[str, object]]]]:
    """A stand-in server on the workspace's relay socket that answers every call with ANSWER."""
    paths = git_paths(tmp_path)
    path = relay.socket_path(paths)
    assert path is not None and relay.private_dir(path.parent)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.fspath(path))
    listener.listen(4)
    seen: list[dict[str, object]] = []

    def loop() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                seen.append(json.loads(data))
                conn.sendall(json.dumps({"out": ANSWER}).encode() + b"\n")

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield paths, seen
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(5)
        path.unlink(missing_ok=True)


@pytest.mark.slow  # a whole process
def test_a_relayed_documented_hook_imports_only_what_relaying_needs(
    served: tuple[EnginePaths, list[dict[str, object]]],
) -> None:
    paths, seen = served
    payload = {"session_id": "s1", "cwd": str(paths.workspace),
               "hook_event_name": "UserPromptSubmit", "prompt": "where is the release?"}
    # The console script's own entry (``context-engine hook …``), with the import trace on.
    code = "from context_engine.cli.entry import main; main()"
    argv = [sys.executable, "-X", "importtime", "-c", code,
            "--home", str(paths.home), "hook", "claude-code", "UserPromptSubmit"]
    env = dict(os.environ, PYTHONPATH=str(APP_DIR), CONTEXT_ENGINE_HOOK_RELAY="1")
    done = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True,
                          env=env, check=True, timeout=60)
    assert done.stdout == ANSWER + "\n"
    assert len(seen) == 1 and seen[0]["stdin"] == json.dumps(payload)
    assert seen[0]["who"] == relay.identity(paths)
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "context_engine.hooks.relay" in imported
    assert sorted(name for name in NOT_NEEDED if name in imported) == []
