"""A local stand-in for the model APIs the agent CLIs call, recording every request.

One HTTP server on 127.0.0.1 speaks just enough of the Anthropic Messages API, the OpenAI
Responses API and the Gemini generateContent API (streamed as each CLI asks) for a headless
agent run: a ``script`` decides each reply — plain text, or one call of a tool the agent
offered. It also answers as the agents' HTTPS proxy and refuses every CONNECT, so nothing
leaves the machine; refused destinations are recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Recorded:
    """One request the stand-in received."""

    api: str  # "anthropic", "openai", "gemini", or "other"
    method: str
    path: str
    body: Any

    @property
    def text(self) -> str:
        """The whole body as text (JSON decoded, so escapes do not hide content)."""
        return _flatten(self.body)

    def tool_names(self) -> list[str]:
        """The names of the tools this request offers the model.

        A Responses API ``namespace`` tool (Codex groups each MCP server's tools in one, e.g.
        ``mcp__context_engine``) is listed as itself and as ``<namespace>__<tool>`` per member.
        """
        body = self.body if isinstance(self.body, dict) else {}
        tools = [t for t in body.get("tools", []) if isinstance(t, dict)]
        names = [str(t.get("name")) for t in tools]
        names += list(self.namespaced())
        for group in tools if self.api == "gemini" else []:
            names += [str(d.get("name")) for d in group.get("functionDeclarations", [])]
        return [n for n in names if n and n != "None"]

    def namespaced(self) -> dict[str, tuple[str, str]]:
        """``<namespace>__<tool>`` → (namespace, tool) for the members of namespace tools."""
        body = self.body if isinstance(self.body, dict) else {}
        found: dict[str, tuple[str, str]] = {}
        for group in body.get("tools", []) if self.api == "openai" else []:
            if not isinstance(group, dict) or group.get("type") != "namespace":
                continue
            space = str(group.get("name"))
            for member in group.get("tools", []):
                if isinstance(member, dict) and member.get("name"):
                    found[f"{space}__{member['name']}"] = (space, str(member["name"]))
        return found


def _flatten(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_flatten(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_flatten(v) for v in value)
    return "" if value is None else str(value)


@dataclass
class Reply:
    """What the model answers: text, or a call of ``tool`` with ``args``."""

    text: str = "Done."
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)


Script = Callable[[Recorded], Reply]


class StandIn:
    """The server; ``url`` is its base address, ``requests`` what it received."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[Recorded] = []
        self.refused: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> StandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def model_calls(self, api: str) -> list[Recorded]:
        """The requests that asked ``api``'s model for an answer."""
        return [r for r in self.requests if r.api == api and r.method == "POST"]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_CONNECT(self) -> None:  # the agents' HTTPS proxy: nothing goes out
                with outer._lock:
                    outer.refused.append(self.path)
                self.send_response(403)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._answer("GET")

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                self._answer("POST")

            def _answer(self, method: str) -> None:
                if self.path.startswith("http://"):  # a plain-HTTP proxy request: refuse
                    with outer._lock:
                        outer.refused.append(self.path)
                    self._send(403, "application/json", b"{}")
                    return
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                record = Recorded(_api(self.path), method, self.path, body)
                with outer._lock:
                    outer.requests.append(record)
                if method == "GET":
                    self._send(200, "application/json", json.dumps(_models(record)).encode())
                    return
                reply = outer.script(record) if record.api != "other" else Reply()
                streaming = "alt=sse" in self.path or (
                    isinstance(body, dict) and body.get("stream") is True
                )
                if record.api == "anthropic" and "count_tokens" in self.path:
                    self._send(200, "application/json", b'{"input_tokens": 10}')
                elif record.api == "anthropic":
                    self._anthropic(reply, streaming)
                elif record.api == "openai":
                    self._openai(reply, record)
                elif record.api == "gemini":
                    self._gemini(reply, body, streaming)
                else:
                    self._send(404, "application/json", b"{}")

            def _send(self, code: int, kind: str, data: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events: list[tuple[str | None, dict[str, Any]]]) -> None:
                chunks = []
                for name, data in events:
                    head = f"event: {name}\n" if name else ""
                    chunks.append(f"{head}data: {json.dumps(data)}\n\n")
                self._send(200, "text/event-stream", "".join(chunks).encode())

            def _typed(self, events: list[tuple[str, dict[str, Any]]]) -> None:
                """Events whose data repeats the event name as ``type`` (Anthropic, OpenAI)."""
                self._sse([(name, {"type": name, **fields}) for name, fields in events])

            def _anthropic(self, reply: Reply, streaming: bool) -> None:
                usage = {"input_tokens": 10, "output_tokens": 5}
                if reply.tool:
                    block: dict[str, Any] = {
                        "type": "tool_use",
                        "id": "toolu_standin",
                        "name": reply.tool,
                        "input": {},
                    }
                    delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.args)}
                    stop = "tool_use"
                    whole = {**block, "input": reply.args}
                else:
                    block = {"type": "text", "text": ""}
                    delta = {"type": "text_delta", "text": reply.text}
                    stop = "end_turn"
                    whole = {"type": "text", "text": reply.text}
                message = {
                    "id": "msg_standin",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-standin",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                }
                if not streaming:
                    done = {**message, "content": [whole], "stop_reason": stop}
                    self._send(200, "application/json", json.dumps(done).encode())
                    return
                self._typed(
                    [
                        ("message_start", {"message": message}),
                        ("content_block_start", {"index": 0, "content_block": block}),
                        ("content_block_delta", {"index": 0, "delta": delta}),
                        ("content_block_stop", {"index": 0}),
                        (
                            "message_delta",
                            {
                                "delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": 5},
                            },
                        ),
                        ("message_stop", {}),
                    ]
                )

            def _openai(self, reply: Reply, record: Recorded) -> None:
                if reply.tool:
                    item: dict[str, Any] = {
                        "type": "function_call",
                        "id": "fc_standin",
                        "call_id": "call_standin",
                        "name": reply.tool,
                        "arguments": json.dumps(reply.args),
                        "status": "completed",
                    }
                    member = record.namespaced().get(reply.tool)
                    if member is not None:  # a namespace member is called by name + namespace
                        item["namespace"], item["name"] = member
                else:
                    item = {
                        "type": "message",
                        "id": "msg_standin",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                    }
                usage = {
                    "input_tokens": 10,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 5,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 15,
                }
                response = {
                    "id": "resp_standin",
                    "object": "response",
                    "status": "in_progress",
                    "model": "gpt-standin",
                    "output": [],
                }
                self._typed(
                    [
                        ("response.created", {"response": response}),
                        ("response.output_item.added", {"output_index": 0, "item": item}),
                        ("response.output_item.done", {"output_index": 0, "item": item}),
                        (
                            "response.completed",
                            {
                                "response": {
                                    **response,
                                    "status": "completed",
                                    "output": [item],
                                    "usage": usage,
                                }
                            },
                        ),
                    ]
                )

            def _gemini(self, reply: Reply, body: Any, streaming: bool) -> None:
                config = body.get("generationConfig", {}) if isinstance(body, dict) else {}
                if config.get("responseMimeType") == "application/json" and not reply.tool:
                    part: dict[str, Any] = {
                        "text": json.dumps({"next_speaker": "user", "reasoning": "done"})
                    }
                elif reply.tool:
                    part = {"functionCall": {"name": reply.tool, "args": reply.args}}
                else:
                    part = {"text": reply.text}
                answer = {
                    "candidates": [
                        {
                            "content": {"role": "model", "parts": [part]},
                            "finishReason": "STOP",
                            "index": 0,
                        }
                    ],
                    "usageMetadata": {
                        "promptTokenCount": 10,
                        "candidatesTokenCount": 5,
                        "totalTokenCount": 15,
                    },
                    "modelVersion": "gemini-standin",
                }
                if streaming:
                    self._sse([(None, answer)])
                else:
                    self._send(200, "application/json", json.dumps(answer).encode())

        return Handler


def _api(path: str) -> str:
    if path.startswith("/v1/messages"):
        return "anthropic"
    if path.startswith("/v1/responses") or path.startswith("/v1/models"):
        return "openai"
    if "/models/" in path and ("generatecontent" in path.lower() or "counttokens" in path.lower()):
        return "gemini"
    return "other"


def _models(record: Recorded) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": "gpt-standin", "object": "model"}], "models": []}
