"""The wire protocol of ``serve --stdio``: JSON-RPC 2.0 framing, handshake, versioning, errors.

A raw client writes newline-delimited JSON to a real server subprocess (docs/remote-protocol.md).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from typing import Any

import pytest
from context_engine.catalog import wire
from context_engine.remote import protocol as p
from support.fixtures import served_fixture  # noqa: F401 - pytest fixtures
from support.remote import Served

pytestmark = pytest.mark.timeout(60)


class Raw:
    """A line-at-a-time JSON-RPC peer over a subprocess's pipes."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n"), "one message per line"
        message: dict[str, Any] = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        return message

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=20)



@pytest.mark.slow
def test_handshake_versioning_and_errors(served: Served) -> None:
    raw = Raw(served.command("--no-watch", "--without", "suggestions"))
    try:
        raw.send(p.request(1, "facts/list"))
        assert raw.receive()["error"]["code"] == p.NOT_INITIALIZED
        raw.send(p.request(2, "initialize", {"protocolVersion": "2.0"}))
        refused = raw.receive()
        assert refused["id"] == 2 and refused["error"]["code"] == p.VERSION_MISMATCH
        raw.send(p.request(3, "initialize", {"protocolVersion": "1.7"}))  # same major: fine
        info = raw.receive()["result"]
        assert info["protocolVersion"] == p.PROTOCOL_VERSION
        assert "facts" in info["capabilities"] and "suggestions" not in info["capabilities"]
        assert info["workspace"]["root"] == str(served.paths.root)
        raw.send(b"{not json\n")
        assert raw.receive()["error"]["code"] == p.PARSE_ERROR
        raw.send(p.request(4, "no/such"))
        assert raw.receive()["error"]["code"] == p.METHOD_NOT_FOUND
        raw.send(p.request(5, "facts/read", {"ref": 7}))
        assert raw.receive()["error"]["code"] == p.INVALID_PARAMS
        raw.send(p.request(6, "facts/read", {"ref": "no-such-fact"}))
        missing = raw.receive()["error"]
        assert missing["code"] == p.ENGINE_ERROR and missing["data"]["code"] == "not_found"
        raw.send(p.request(7, "suggestions/scan"))
        unavailable = raw.receive()["error"]
        assert unavailable["code"] == p.UNAVAILABLE
        assert unavailable["data"] == {"code": "unavailable", "capability": "suggestions"}
        raw.send(p.request(8, "facts/list"))
        listed = raw.receive()
        assert listed["id"] == 8
        assert wire.decode_snapshot(listed["result"]) == served.local().list_facts()
        raw.send(p.request(9, "shutdown"))
        assert raw.receive() == {"jsonrpc": "2.0", "id": 9, "result": None}
    finally:
        code = raw.close()
    assert code == 0


@pytest.mark.slow
def test_a_confirmation_travels_to_the_client_and_only_true_approves(served: Served) -> None:
    raw = Raw(served.command("--no-watch"))
    try:
        raw.send(p.request(1, "initialize", {"protocolVersion": p.PROTOCOL_VERSION}))
        raw.receive()
        op = {"kind": "save", "name": "g", "description": "d", "body": "b", "type": "user",
              "scope": "global"}  # fmt: skip
        agent = {"kind": "agent", "controller": "interactive", "mode": "ask", "owns_store": True}
        args = {"op": op, "actor": agent}  # an agent's call: the server's policy asks
        raw.send(p.request(2, "write/apply", args))
        ask = raw.receive()
        assert ask["method"] == "confirm" and ask["params"]["request"]["scope"] == "global"
        raw.send(p.result(ask["id"], {"approved": "yes"}))  # not literally true: a no
        outcome = raw.receive()["result"]
        assert outcome["written"] is False and outcome["decision"] == "confirm"
        raw.send(p.request(3, "write/apply", args))
        ask = raw.receive()
        raw.send(p.result(ask["id"], {"approved": True}))
        outcome = raw.receive()["result"]
        assert outcome["written"] is True and outcome["fact"]["scope"] == "global"
    finally:
        raw.close()


def test_wire_round_trips_every_value(served: Served) -> None:
    local = served.local()
    local.recall("release build")
    snapshot = local.list_facts()
    assert wire.decode_snapshot(json.loads(json.dumps(wire.encode_snapshot(snapshot)))) == snapshot
    entries = local.archived()
    assert wire.decode_archived(wire.encode_archived(entries)) == entries
    history = local.revisions("project/release-target.md")
    assert wire.decode_history(wire.encode_history(history)) == history
    suggestions = local.suggestions()
    assert wire.decode_suggestions(wire.encode_suggestions(suggestions)) == suggestions
    trace = local.last_trace()
    assert wire.decode_trace(wire.encode_trace(trace)) == trace


def test_the_list_cache_equals_a_fresh_encoding_and_follows_edits(served: Served) -> None:
    from context_engine.facts.memory import Memory
    from context_engine.remote.list_cache import FactListCache

    cache = FactListCache()
    local = served.local()
    first = local.list_facts()
    assert json.loads(cache.encode(first)) == wire.encode_snapshot(first)
    assert json.loads(cache.encode(first)) == wire.encode_snapshot(first)  # from the cache
    Memory(served.paths).save(
        name="project/release-target", description="Edited after caching", body="new body"
    )
    second = local.list_facts()
    decoded = wire.decode_snapshot(json.loads(cache.encode(second)))
    assert decoded == second
    assert "Edited after caching" in {f.description for f in decoded.facts}


@pytest.mark.slow
def test_login_chatter_before_the_handshake_is_skipped(served: Served) -> None:
    from context_engine.catalog.remote import RemoteCatalog

    inner = " ".join(shlex.quote(a) for a in served.command("--no-watch"))
    remote = RemoteCatalog(["sh", "-c", f"echo 'Welcome to devbox'; echo '{{oops'; exec {inner}"])
    try:
        assert remote.state == "connected"
        assert remote.list_facts() == served.local().list_facts()
        assert any("ignored before initialize" in line for line in remote.client.stderr_tail)
    finally:
        remote.close()
