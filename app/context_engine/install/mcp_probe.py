"""``doctor``: start the configured MCP server once, as an agent would, and time its handshake."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROTOCOL = "2025-06-18"
OUR_TOOLS = ("memory", "remember", "forget")


@dataclass
class Handshake:
    """How long ``initialize`` + ``tools/list`` took, the tools listed, or what went wrong."""

    seconds: float = 0.0
    tools: list[str] = field(default_factory=list)
    error: str = ""


def handshake(command: str, args: list[str], cwd: Path, timeout_s: float = 30.0) -> Handshake:
    """Spawn ``command args`` on stdio, initialize, list the tools, close; never raises."""
    started = time.perf_counter()
    try:
        child = subprocess.Popen(
            [command, *args],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    except OSError as exc:
        return Handshake(error=f"cannot start it: {exc.strerror or exc}")
    answers: queue.Queue[str] = queue.Queue()
    errors: queue.Queue[str] = queue.Queue()  # drained, so a chatty stderr never blocks it
    for stream, sink in ((child.stdout, answers), (child.stderr, errors)):
        threading.Thread(target=_pump, args=(stream, sink), daemon=True).start()
    try:
        _send(child, {"id": 1, "method": "initialize", "params": _init_params()})
        if _answer(answers, 1, started + timeout_s) is None:
            return Handshake(error=_failure(child, errors, "no answer to initialize", timeout_s))
        _send(child, {"method": "notifications/initialized"})
        _send(child, {"id": 2, "method": "tools/list"})
        listed = _answer(answers, 2, started + timeout_s)
        if listed is None:
            return Handshake(error=_failure(child, errors, "no answer to tools/list", timeout_s))
        seconds = time.perf_counter() - started
        tools = [str(t.get("name")) for t in listed.get("result", {}).get("tools", [])]
        return Handshake(seconds=seconds, tools=tools)
    except (BrokenPipeError, OSError):
        return Handshake(error=_failure(child, errors, "it closed its input", timeout_s))
    finally:
        _stop(child)


def _init_params() -> dict[str, Any]:
    client = {"name": "context-engine-doctor", "version": "1"}
    return {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": client}


def _send(child: subprocess.Popen[str], message: dict[str, Any]) -> None:
    assert child.stdin is not None
    child.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    child.stdin.flush()


def _pump(stream: Any, answers: queue.Queue[str]) -> None:
    for line in stream:
        answers.put(line)
    answers.put("")


def _answer(answers: queue.Queue[str], wanted: int, deadline: float) -> dict[str, Any] | None:
    """The JSON-RPC response with id ``wanted`` (other lines skipped), or None at EOF/deadline."""
    while (left := deadline - time.perf_counter()) > 0:
        try:
            line = answers.get(timeout=left)
        except queue.Empty:
            return None
        if not line:
            return None
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == wanted:
            return message
    return None


def _failure(
    child: subprocess.Popen[str], errors: queue.Queue[str], what: str, timeout_s: float
) -> str:
    try:
        child.wait(timeout=1)
    except subprocess.TimeoutExpired:
        return f"{what} within {timeout_s:.0f} s"
    time.sleep(0.05)  # let the stderr pump catch the last lines
    lines = [line.strip() for line in list(errors.queue) if line.strip()]
    return f"{what}: it exited ({lines[-1] if lines else f'exit {child.returncode}'})"


def _stop(child: subprocess.Popen[str]) -> None:
    try:
        if child.stdin is not None:
            child.stdin.close()  # end of input: the server shuts down
    except OSError:
        pass
    try:
        child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
