"""The client end of the remote protocol: runs a command, speaks JSON-RPC over its stdio.

``RpcClient`` starts any command whose stdin/stdout reach a ``context-engine serve --stdio``
(``ssh devbox context-engine serve --stdio --workspace ~/proj``, ``docker exec -i …``, or a
local subprocess), does the ``initialize`` handshake, and then:

* ``call()`` sends a request and waits for its response (engine errors come back as the same
  engine exception classes);
* a ``confirm`` request from the server is answered by the client's ``ConfirmationService`` on
  its own thread (a person may take minutes); an exception or a no answers ``approved: false``;
* a ``changes`` notification is handed to ``on_changes``;
* when the process exits or the pipe breaks, the state becomes ``disconnected``, every waiting
  call raises ``Disconnected`` and so does every later one, until ``reconnect()``.

Nothing here reads a local file: the only I/O is the child process's pipes.
"""

from __future__ import annotations

import collections
import shlex
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any, Literal

from ..catalog.errors import Disconnected, ProtocolError
from ..errors import ContextEngineError
from ..policy.confirmation import ConfirmationRequest, ConfirmationService, FailClosedConfirmation
from . import protocol as p

State = Literal["connected", "disconnected"]
DEFAULT_TIMEOUT = 120.0


def command_argv(command: str | Sequence[str]) -> list[str]:
    """A shell-like command line split into argv (no shell is run)."""
    return shlex.split(command) if isinstance(command, str) else list(command)


def request_from(data: dict[str, Any]) -> ConfirmationRequest:
    """The ``ConfirmationRequest`` a ``confirm`` request carries."""

    def opt_int(key: str) -> int | None:
        value = data.get(key)
        return int(value) if isinstance(value, int) else None

    return ConfirmationRequest(
        tool=str(data.get("tool", "")),
        reason=str(data.get("reason", "")),
        findings=tuple(str(f) for f in data.get("findings", ())),
        reference=str(data.get("reference", "")),
        scope=str(data.get("scope", "")),
        type=str(data.get("type", "")),
        content=str(data.get("content", "")),
        diff=str(data.get("diff", "")),
        revision_from=opt_int("revision_from"),
        revision_to=opt_int("revision_to"),
        digest=str(data.get("digest", "")),
    )


class _Call:
    __slots__ = ("done", "message")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.message: dict[str, Any] | None = None


class RpcClient:
    """One connection to a remote catalog server (see module docstring)."""

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        confirmation: ConfirmationService | None = None,
        on_changes: Callable[[list[str]], None] | None = None,
        on_state: Callable[[State], None] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.argv = command_argv(command)
        self.confirmation: ConfirmationService = confirmation or FailClosedConfirmation()
        self.on_changes = on_changes
        self.on_state = on_state
        self.timeout = timeout
        self.info: dict[str, Any] = {}
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self._lock = threading.Lock()
        self._calls: dict[int, _Call] = {}
        self._next = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: p.LineChannel | None = None
        self._state: State = "disconnected"
        self._generation = 0
        self._greeted = False

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """``connected`` or ``disconnected``."""
        return self._state

    def connect(self) -> dict[str, Any]:
        """Start the command and do the handshake; returns the server's ``initialize`` result."""
        if not self.argv:
            raise Disconnected("no remote command given")
        try:
            process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            raise Disconnected(f"cannot start {self.argv[0]}: {exc.strerror or exc}") from exc
        assert process.stdin is not None and process.stdout is not None
        with self._lock:
            self._generation += 1
            generation = self._generation
            self._process = process
            self._channel = p.LineChannel(process.stdout, process.stdin)
            self._state = "connected"
            self._greeted = False
        channel = self._channel
        threading.Thread(
            target=self._read, args=(channel, generation), name="rpc-reader", daemon=True
        ).start()
        if process.stderr is not None:
            threading.Thread(
                target=self._drain, args=(process.stderr,), name="rpc-stderr", daemon=True
            ).start()
        try:
            info = self.call(
                "initialize",
                {"protocolVersion": p.PROTOCOL_VERSION, "client": {"name": "context-engine"}},
            )
        except ContextEngineError:
            self.close()
            raise
        if not isinstance(info, dict) or p.major(str(info.get("protocolVersion"))) != p.major(
            p.PROTOCOL_VERSION
        ):
            self.close()
            raise ProtocolError("the server speaks another protocol version")
        self.info = info
        self._greeted = True
        self._notify_state("connected")
        return info

    def reconnect(self) -> dict[str, Any]:
        """Close whatever is left of the old connection and connect again."""
        self.close()
        return self.connect()

    def close(self) -> None:
        """Close our end of the pipe (the server stops at end of input) and reap the process."""
        with self._lock:
            process, channel = self._process, self._channel
            self._process = None
            self._channel = None
            self._generation += 1
        if channel is not None:
            channel.close()
        if process is not None:
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                process.terminate()
                try:
                    process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self._lost("the remote workspace was closed")

    @property
    def pid(self) -> int | None:
        """The child process id (tests kill it to simulate a dropped connection)."""
        process = self._process
        return process.pid if process is not None else None

    # -- calls ---------------------------------------------------------------------------------

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        *,
        patient: bool = False,
    ) -> Any:
        """Send a request and return its result; engine errors are raised as themselves.

        ``patient`` waits as long as the connection lives: a write may wait for a person.
        """
        with self._lock:
            channel = self._channel
            if channel is None or self._state != "connected":
                raise Disconnected("the remote workspace is disconnected")
            self._next += 1
            id_ = self._next
            pending = _Call()
            self._calls[id_] = pending
        try:
            channel.send(p.request(id_, method, params))
            limit = None if patient else (self.timeout if timeout is None else timeout)
            if not pending.done.wait(limit):
                raise Disconnected(f"the remote workspace did not answer {method} in time")
        finally:
            with self._lock:
                self._calls.pop(id_, None)
        message = pending.message
        if message is None:
            raise Disconnected("the remote workspace disconnected")
        if "error" in message:
            body = message["error"] if isinstance(message["error"], dict) else {}
            raise p.exception_from(body)
        return message.get("result")

    # -- reader side ---------------------------------------------------------------------------

    def _read(self, channel: p.LineChannel, generation: int) -> None:
        while True:
            try:
                message = channel.receive()
            except ProtocolError as exc:
                if not self._greeted:
                    # Before the handshake, a login shell's chatter (motd, rc-file echoes) is
                    # skipped; after it, a bad line means the stream is corrupt: disconnect.
                    self.stderr_tail.append(f"ignored before initialize: {exc.message}")
                    continue
                message = None
            if message is None:
                break
            if "method" in message:
                self._on_server_message(channel, message)
                continue
            id_ = message.get("id")
            with self._lock:
                pending = self._calls.get(id_) if isinstance(id_, int) else None
            if pending is not None:
                pending.message = message
                pending.done.set()
        with self._lock:
            current = generation == self._generation
        if current:
            self._lost("the remote workspace disconnected")

    def _on_server_message(self, channel: p.LineChannel, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if "id" not in message:
            if method == "changes" and self.on_changes is not None:
                areas = params.get("areas", []) if params else []
                self.on_changes([str(a) for a in areas])
            return
        if method == "confirm":
            threading.Thread(
                target=self._answer_confirm,
                args=(channel, message["id"], params or {}),
                name="rpc-confirm",
                daemon=True,
            ).start()
            return
        self._reply(channel, p.error(message["id"], p.METHOD_NOT_FOUND, f"unknown: {method}"))

    def _answer_confirm(self, channel: p.LineChannel, id_: Any, params: dict[str, Any]) -> None:
        approved = False
        try:
            data = params.get("request")
            if isinstance(data, dict):
                approved = self.confirmation.confirm(request_from(data)) is True
        except Exception:  # a broken front end is a "no": nothing may be written without a yes
            approved = False
        self._reply(channel, p.result(id_, {"approved": approved}))

    def _reply(self, channel: p.LineChannel, message: p.Message) -> None:
        try:
            channel.send(message)
        except ContextEngineError:
            return

    def _drain(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            self.stderr_tail.append(raw.decode("utf-8", "replace").rstrip())

    def _lost(self, reason: str) -> None:
        with self._lock:
            was = self._state
            self._state = "disconnected"
            calls = list(self._calls.values())
        for pending in calls:
            pending.done.set()  # message stays None → Disconnected
        if was == "connected":
            self._notify_state("disconnected")

    def _notify_state(self, state: State) -> None:
        if self.on_state is not None:
            self.on_state(state)
