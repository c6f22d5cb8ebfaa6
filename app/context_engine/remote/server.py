"""``context-engine serve --stdio``: one workspace's catalog over JSON-RPC 2.0 on stdin/stdout.

The main thread reads messages; requests run one at a time on a worker thread against a
``LocalCatalog``, so a write waiting for a person's answer never blocks the reader (the answer
is itself a message). A write the policy wants confirmed becomes a ``confirm`` request to the
client; anything but an explicit ``{"approved": true}`` in time — a refusal, an error, a
timeout, a closed connection — is a no, and nothing is written. Change notifications come from
a watcher on this side. See ``docs/remote-protocol.md``.
"""

from __future__ import annotations

import queue
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import IO, Any

from ..catalog import wire
from ..catalog.base import WATCH
from ..catalog.errors import ProtocolError, Unavailable
from ..catalog.local import LocalCatalog
from ..defaults import RECALL_BUDGET as DEFAULT_BUDGET
from ..defaults import RECALL_LIMIT as DEFAULT_LIMIT
from ..errors import ContextEngineError
from ..policy.confirmation import ConfirmationRequest
from . import protocol as p
from .list_cache import FactListCache
from .watcher import ServerWatcher


def engine_version() -> str:
    """The installed package version (``unknown`` when run from a source tree)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("context-center")
    except PackageNotFoundError:
        return "unknown"


Handler = Callable[[dict[str, Any]], Any]
DEFAULT_CONFIRM_TIMEOUT = 600.0


class _InvalidParams(Exception):
    pass


def _text(params: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = params.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise _InvalidParams(f"{key} must be a string")
    return value


def _int(params: dict[str, Any], key: str, default: int | None) -> int | None:
    value = params.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _InvalidParams(f"{key} must be an integer")
    return value


class RemoteConfirmation:
    """The policy's ``ConfirmationService`` on the server: asks the client, fails closed."""

    def __init__(self, server: Server, timeout: float) -> None:
        self._server = server
        self._timeout = timeout

    def confirm(self, request: ConfirmationRequest) -> bool:
        """True only for an explicit ``approved: true`` answered in time."""
        answer = self._server.ask_client("confirm", {"request": asdict(request)}, self._timeout)
        return isinstance(answer, dict) and answer.get("approved") is True


class Server:
    """Serve one ``LocalCatalog`` over a line channel until end of input or ``shutdown``."""

    def __init__(
        self,
        catalog: LocalCatalog,
        channel: p.LineChannel,
        *,
        confirm_timeout: float = DEFAULT_CONFIRM_TIMEOUT,
        watch: bool = True,
    ) -> None:
        # The client's person answers what this workspace's policy asks (S10.6).
        self.catalog = catalog.using(RemoteConfirmation(self, confirm_timeout))
        self.channel = channel
        self._watch = watch and WATCH in catalog.capabilities()
        self._watcher: ServerWatcher | None = None
        self._initialized = False
        self._closing = threading.Event()
        self._jobs: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._pending: dict[str, tuple[threading.Event, list[Any]]] = {}
        self._pending_lock = threading.Lock()
        self._next_id = 0
        self._seq = 0
        self._list_cache = FactListCache()
        self._methods: dict[str, tuple[str | None, Handler]] = self._method_table()

    # -- main loop -----------------------------------------------------------------------------

    def serve(self) -> None:
        """Read and dispatch until the client closes the connection or asks to shut down."""
        worker = threading.Thread(target=self._work, name="catalog-worker", daemon=True)
        worker.start()
        try:
            while not self._closing.is_set():
                try:
                    message = self.channel.receive()
                except ProtocolError as exc:
                    self._send(p.error(None, p.PARSE_ERROR, exc.message))
                    continue
                if message is None:
                    break
                self._dispatch(message)
        finally:
            self._closing.set()
            self._fail_pending()
            self._jobs.put(None)
            worker.join(timeout=30)
            if self._watcher is not None:
                self._watcher.stop()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            self._on_response(message)
            return
        method = message.get("method")
        if "id" not in message:  # notifications: only ``exit`` means anything to us
            if method == "exit":
                self._closing.set()
            return
        if method == "initialize":
            self._initialize(message)
        elif not self._initialized:
            self._send(p.error(message["id"], p.NOT_INITIALIZED, "initialize first"))
        elif method == "shutdown":
            self._send(p.result(message["id"], None))
            self._closing.set()
        else:
            self._jobs.put(message)

    def _initialize(self, message: dict[str, Any]) -> None:
        params = message.get("params") or {}
        version = str(params.get("protocolVersion", ""))
        if p.major(version) != p.major(p.PROTOCOL_VERSION):
            self._send(
                p.error(
                    message["id"],
                    p.VERSION_MISMATCH,
                    f"protocol version {version or '?'} is not supported",
                    {"supported": p.PROTOCOL_VERSION},
                )
            )
            return
        self._initialized = True
        paths = self.catalog.paths
        self._send(
            p.result(
                message["id"],
                {
                    "protocolVersion": p.PROTOCOL_VERSION,
                    "server": {"name": "context-engine", "version": engine_version()},
                    "workspace": {
                        "name": f"{socket.gethostname()}:{paths.root}",
                        "root": str(paths.root),
                    },
                    "capabilities": sorted(self.catalog.capabilities()),
                },
            )
        )
        if self._watch and self._watcher is None:
            self._watcher = ServerWatcher(paths, self._changed)
            self._watcher.start()

    def _work(self) -> None:
        while True:
            message = self._jobs.get()
            if message is None:
                return
            self._send(self._handle(message))

    def _handle(self, message: dict[str, Any]) -> p.Message:
        id_ = message["id"]
        entry = self._methods.get(str(message.get("method")))
        if entry is None:
            return p.error(id_, p.METHOD_NOT_FOUND, f"unknown method: {message.get('method')}")
        capability, handler = entry
        params = message.get("params") or {}
        if not isinstance(params, dict):
            return p.error(id_, p.INVALID_PARAMS, "params must be an object")
        try:
            if capability is not None:
                self.catalog.require(capability)
            return p.result(id_, handler(params))
        except _InvalidParams as exc:
            return p.error(id_, p.INVALID_PARAMS, str(exc))
        except ContextEngineError as exc:
            return p.error_for(id_, exc)
        except (KeyError, TypeError, ValueError) as exc:
            return p.error(id_, p.INVALID_PARAMS, f"bad params: {exc}")
        except OSError as exc:
            return p.error(id_, p.ENGINE_ERROR, str(exc), {"code": "io_error"})

    # -- server → client -----------------------------------------------------------------------

    def ask_client(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Send a request to the client and wait for its result (None on error or timeout)."""
        if self._closing.is_set():
            return None
        with self._pending_lock:
            self._next_id += 1
            id_ = f"s{self._next_id}"
            slot: tuple[threading.Event, list[Any]] = (threading.Event(), [])
            self._pending[id_] = slot
        try:
            self._send(p.request(id_, method, params))
            slot[0].wait(timeout)
        finally:
            with self._pending_lock:
                self._pending.pop(id_, None)
        return slot[1][0] if slot[1] else None

    def _on_response(self, message: dict[str, Any]) -> None:
        with self._pending_lock:
            slot = self._pending.get(str(message.get("id")))
        if slot is None:
            return
        if "result" in message:
            slot[1].append(message["result"])
        slot[0].set()

    def _fail_pending(self) -> None:
        with self._pending_lock:
            for event, _ in self._pending.values():
                event.set()

    def _changed(self, areas: list[str]) -> None:
        self._seq += 1
        self._send(p.notification("changes", {"areas": areas, "seq": self._seq}))

    def _send(self, message: p.Message) -> None:
        try:
            self.channel.send(message)
        except ContextEngineError:
            self._closing.set()

    # -- methods -------------------------------------------------------------------------------

    def _method_table(self) -> dict[str, tuple[str | None, Handler]]:
        c = self.catalog
        return {
            "facts/list": ("facts", lambda _: p.RawJson(self._list_cache.encode(c.list_facts()))),
            "facts/read": ("facts", lambda a: wire.encode_loaded(c.read(str(_text(a, "ref"))))),
            "facts/search": ("facts", self._search),
            "facts/revisions": (
                "facts",
                lambda a: wire.encode_history(c.revisions(str(_text(a, "ref")))),
            ),
            "archive/list": ("archive", lambda _: wire.encode_archived(c.archived())),
            "instructions/get": (
                "instructions",
                lambda a: wire.encode_instructions(
                    c.instructions(_text(a, "target", required=False))
                ),
            ),
            "recall/last": ("recall", lambda _: {"trace": wire.encode_trace(c.last_trace())}),
            "recall/recent": (
                "recall",
                lambda a: {
                    "traces": [t.to_dict() for t in c.recent_traces(_int(a, "limit", 20) or 0)]
                },
            ),
            "recall/run": ("recall", self._recall),
            "suggestions/scan": ("suggestions", lambda _: wire.encode_suggestions(c.suggestions())),
            "write/apply": ("writes", self._apply),
            "complete": ("completion", self._complete),
        }

    def _search(self, a: dict[str, Any]) -> Any:
        hits = self.catalog.search(
            str(_text(a, "query")),
            fact_type=_text(a, "type", required=False),
            scope=_text(a, "scope", required=False),
            limit=_int(a, "limit", 5) or 5,
        )
        return wire.encode_hits(hits)

    def _recall(self, a: dict[str, Any]) -> Any:
        run = self.catalog.recall(
            str(_text(a, "message")),
            limit=_int(a, "limit", DEFAULT_LIMIT) or DEFAULT_LIMIT,
            budget=_int(a, "budget", DEFAULT_BUDGET) or DEFAULT_BUDGET,
        )
        return wire.encode_run(run)

    def _apply(self, a: dict[str, Any]) -> Any:
        """The client's op and actor, through this workspace's one door (``LocalCatalog.apply``)."""
        op, actor = a.get("op"), a.get("actor")
        if not isinstance(op, dict) or not isinstance(actor, dict):
            raise _InvalidParams("op and actor must be objects")
        try:
            decoded = wire.decode_op(op), wire.decode_actor(actor)
        except ProtocolError as exc:
            raise _InvalidParams(exc.message) from exc
        return wire.encode_outcome(self.catalog.apply(*decoded))

    def _complete(self, a: dict[str, Any]) -> Any:
        kind = _text(a, "kind")
        prefix = _text(a, "prefix", required=False) or ""
        if kind == "refs":
            return {"items": list(self.catalog.complete("refs", prefix))}
        if kind == "archives":
            return {"items": list(self.catalog.complete("archives", prefix))}
        raise _InvalidParams("kind must be refs or archives")


def serve_stdio(
    catalog: LocalCatalog,
    stdin: IO[bytes],
    stdout: IO[bytes],
    *,
    confirm_timeout: float = DEFAULT_CONFIRM_TIMEOUT,
    watch: bool = True,
) -> None:
    """Run a server over the given byte streams until the client goes away."""
    Server(
        catalog, p.LineChannel(stdin, stdout), confirm_timeout=confirm_timeout, watch=watch
    ).serve()


def check_without(names: Iterable[str]) -> list[str]:
    """Validate ``--without`` names against the known capabilities."""
    from ..catalog.base import CAPABILITIES

    out = []
    for name in names:
        if name not in CAPABILITIES:
            raise Unavailable(name, f"unknown capability: {name}")
        out.append(name)
    return out
