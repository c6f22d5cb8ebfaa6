"""Trust our Codex hooks the way Codex's own /hooks screen does: through ``codex app-server``.

Codex skips command hooks the person has not trusted, silently. Its app-server lists hooks
(``hooks/list``, with each one's key, current hash and trust status) and writes config
(``config/batchWrite``); trusting is writing ``hooks.state."<key>".trusted_hash``. Only hooks
whose command is ours are touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..errors import ContextEngineError
from .targets import is_our_hook

TIMEOUT_S = 60


class CodexUnavailable(ContextEngineError):
    """Codex could not be asked (not installed, or its app-server failed)."""

    code = "unavailable"


def codex_binary() -> str | None:
    """``codex`` on PATH (or ``$CONTEXT_ENGINE_CODEX``)."""
    return os.environ.get("CONTEXT_ENGINE_CODEX") or shutil.which("codex")


class _AppServer:
    def __init__(self, binary: str, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [binary, "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            text=True,
        )
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        if method == "initialize":
            self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "initialized"}) + "\n")
            self.proc.stdin.flush()
        for line in self.proc.stdout:
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise CodexUnavailable(f"codex app-server: {message['error']}")
                return message.get("result")
        raise CodexUnavailable("codex app-server closed the connection")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def list_our_hooks(root: Path) -> list[dict[str, Any]]:
    """Codex's own view of our hooks for ``root``: key, hash and trust status."""
    found: list[dict[str, Any]] = _with_server(root, lambda server: _ours(server, root))
    return found


def trust_our_hooks(root: Path) -> int:
    """Trust every one of our hooks Codex sees for ``root``; how many were trusted."""

    def run(server: _AppServer) -> int:
        pending = [h for h in _ours(server, root) if h.get("trustStatus") != "trusted"]
        if pending:
            state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in pending}
            edit = {"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"}
            server.call("config/batchWrite", {"edits": [edit], "reloadUserConfig": True})
        return len(pending)

    count: int = _with_server(root, run)
    return count


def _ours(server: _AppServer, root: Path) -> list[dict[str, Any]]:
    result = server.call("hooks/list", {"cwds": [str(root)]})
    found: list[dict[str, Any]] = []
    for entry in (result or {}).get("data", []):
        found += [h for h in entry.get("hooks", []) if is_our_hook(h.get("command"))]
    return found


def _with_server(root: Path, work: Any) -> Any:
    binary = codex_binary()
    if binary is None:
        raise CodexUnavailable("codex is not on PATH")
    import threading

    server = _AppServer(binary, root)
    timer = threading.Timer(TIMEOUT_S, server.proc.kill)
    timer.start()
    try:
        server.call("initialize", {"clientInfo": {"name": "context-engine", "version": "1"}})
        return work(server)
    except (OSError, ValueError) as exc:
        raise CodexUnavailable(f"codex app-server failed: {exc}") from exc
    finally:
        timer.cancel()
        server.close()
