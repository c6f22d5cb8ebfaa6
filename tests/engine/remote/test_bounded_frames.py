"""Bounded parsers: a 100,000-deep frame gets a clear error and the next request is served."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from context_engine import bounded_json
from context_engine.paths import EnginePaths
from context_engine.remote import protocol as p
from support.remote import make_served

pytestmark = pytest.mark.timeout(90)

APP = Path(__file__).resolve().parents[3] / "app"
DEEP = "[" * 100_000 + "]" * 100_000


def _lines(proc: subprocess.Popen[bytes], *messages: str) -> None:
    assert proc.stdin is not None
    for message in messages:
        proc.stdin.write(message.encode("utf-8") + b"\n")
    proc.stdin.flush()


def _receive(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.endswith(b"\n"), "the server answered (and did not die)"
    answer: dict[str, Any] = json.loads(line)
    return answer


def _finish(proc: subprocess.Popen[bytes]) -> int:
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        return proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.slow
def test_serve_stdio_answers_a_deep_frame_then_serves(tmp_path: Path) -> None:
    served = make_served(tmp_path / "server")
    argv = served.command("--no-watch", "--without", "suggestions")
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        _lines(proc, '{"jsonrpc":"2.0","id":1,"method":"facts/list","params":' + DEEP + "}")
        refused = _receive(proc)
        assert refused["error"]["code"] == p.PARSE_ERROR
        assert "deeper than 64 levels" in refused["error"]["message"]
        _lines(
            proc, json.dumps(p.request(2, "initialize", {"protocolVersion": p.PROTOCOL_VERSION}))
        )
        answer = _receive(proc)
        assert answer["id"] == 2 and "result" in answer
    finally:
        assert _finish(proc) == 0


def _mcp(paths: EnginePaths) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(APP), CONTEXT_ENGINE_HOOK_RELAY="0")
    argv = [sys.executable, "-m", "context_engine", "--home", str(paths.home)]
    argv += ["--workspace", str(paths.workspace), "mcp"]
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)


@pytest.mark.slow
def test_mcp_answers_a_deep_frame_then_serves(tmp_path: Path) -> None:
    workspace = tmp_path / "proj"
    (workspace / ".git").mkdir(parents=True)
    proc = _mcp(EnginePaths.resolve(home=tmp_path / "home", workspace=workspace))
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    try:
        _lines(proc, json.dumps(init))
        assert _receive(proc)["id"] == 1
        _lines(proc, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        _lines(proc, '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":' + DEEP + "}")
        refused = _receive(proc)
        assert refused["id"] == 2 and refused["error"]["code"] == -32700
        assert "deeper than 64 levels" in refused["error"]["message"]
        _lines(proc, '{"jsonrpc":"2.0","id":4,"method":"tools/list",')  # plain bad JSON
        bad = _receive(proc)
        assert bad["id"] == 4 and bad["error"]["code"] == -32700
        assert "not valid JSON" in bad["error"]["message"]
        _lines(proc, json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))
        listed = _receive(proc)
        assert listed["id"] == 3 and {t["name"] for t in listed["result"]["tools"]} >= {"memory"}
    finally:
        _finish(proc)


def test_hook_stdin_too_deep_says_so_and_adds_nothing(tmp_path: Path) -> None:
    workspace = tmp_path / "proj"
    (workspace / ".git").mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(APP), CONTEXT_ENGINE_HOOK_RELAY="0")
    argv = [sys.executable, "-m", "context_engine", "--home", str(tmp_path / "home")]
    argv += ["hook", "claude-code", "UserPromptSubmit"]
    payload = '{"session_id":"s","cwd":' + json.dumps(str(workspace)) + ',"x":' + DEEP + "}"
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "{}"
    assert "hook input nests deeper than 64 levels" in done.stderr
    assert "Traceback" not in done.stderr


def test_tool_args_too_deep_is_a_clear_usage_error(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(APP))
    argv = [sys.executable, "-m", "context_engine", "--home", str(tmp_path / "home")]
    argv += ["--workspace", str(tmp_path), "tool", "memory", "--args", '{"a":' + DEEP[:20000] + "}"]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert "--args nests deeper than 64 levels" in done.stderr
    assert "Traceback" not in done.stderr


def test_bounded_loads_counts_brackets_outside_strings_only() -> None:
    assert bounded_json.loads('{"a": "' + "[" * 500 + '"}') == {"a": "[" * 500}
    assert bounded_json.loads('["\\"[[[[", 1]', max_depth=1) == ['"[[[[', 1]
    exact = "[" * 64 + "]" * 64
    assert bounded_json.loads(exact) == json.loads(exact)
    with pytest.raises(bounded_json.FrameError) as info:
        bounded_json.loads("[" + exact + "]")
    assert info.value.code == bounded_json.TOO_DEEP
    with pytest.raises(bounded_json.FrameError) as info:
        bounded_json.loads("[1]" + " " * 100, max_bytes=50)
    assert info.value.code == bounded_json.TOO_LARGE
    with pytest.raises(bounded_json.FrameError) as info:
        bounded_json.loads("[1,")
    assert info.value.code == bounded_json.INVALID_JSON


def test_oversized_line_is_refused_and_the_next_message_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    monkeypatch.setattr(p, "MAX_LINE", 1000)
    data = b'{"jsonrpc":"2.0","id":1,"method":"x","params":["' + b"a" * 5000 + b'"]}\n'
    data += json.dumps(p.request(2, "shutdown")).encode() + b"\n"
    channel = p.LineChannel(io.BytesIO(data), io.BytesIO())
    with pytest.raises(p.ProtocolError):
        channel.receive()
    message = channel.receive()
    assert message is not None and message["id"] == 2
