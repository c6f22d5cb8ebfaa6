"""``RemoteCatalog``: the ``Catalog`` interface answered by a ``serve --stdio`` process.

It holds no local data and opens no local file: every call is a request to the server, and
when that is impossible it raises — ``Unavailable`` for a capability the server did not
declare (checked before sending), ``Disconnected`` when the connection is gone — so the CLI
and the app show "unavailable"/"disconnected" instead of quietly reading this machine's store,
sessions or instructions (S11.6, S13.6). ``reconnect()`` starts the command again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..defaults import RECALL_BUDGET as DEFAULT_BUDGET
from ..defaults import RECALL_LIMIT as DEFAULT_LIMIT
from ..facts.archive import ArchivedEntry
from ..facts.memory import MemorySnapshot
from ..policy.confirmation import ConfirmationService
from ..recall.trace import RecallTrace
from ..remote.client import RpcClient, State
from ..suggestions.model import Suggestions
from . import wire
from .base import (
    SUGGESTIONS,
    WRITES,
    CompletionKind,
    History,
    InstructionsView,
    LoadedFact,
    RecallRun,
    SearchHit,
)
from .errors import Disconnected, Unavailable
from .ops import Accept, Actor, Op, WriteOutcome


class RemoteCatalog:
    """A remote workspace's catalog over ``command``'s stdio (connects on construction)."""

    def __init__(  # the client's options, passed on as given
        self, command: str | Sequence[str], *, confirmation: ConfirmationService | None = None,
        on_changes: Callable[[list[str]], None] | None = None,
        on_state: Callable[[State], None] | None = None, timeout: float = 120.0,
        connect: bool = True,
    ) -> None:  # fmt: skip
        self.command = command
        self.client = RpcClient(command, confirmation=confirmation, on_changes=on_changes,
                                on_state=on_state, timeout=timeout)
        self._capabilities: frozenset[str] = frozenset()
        self._name = command if isinstance(command, str) else " ".join(command)
        if connect:
            self.reconnect()

    # -- connection ----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The server's ``host:workspace root``, else the command line."""
        return self._name

    @property
    def state(self) -> State:
        """``connected`` or ``disconnected``."""
        return self.client.state

    def reconnect(self) -> None:
        """(Re)start the command and redo the handshake; capabilities are re-read."""
        info = self.client.reconnect()  # reaps a dead child before starting a new one
        self._capabilities = frozenset(str(c) for c in info.get("capabilities", ()))
        workspace = info.get("workspace")
        if isinstance(workspace, dict) and workspace.get("name"):
            self._name = str(workspace["name"])

    def confirm_with(self, confirmation: ConfirmationService) -> None:
        """Who answers the confirmations the server's policy sends back (S10.6)."""
        self.client.confirmation = confirmation

    def close(self) -> None:
        """Close the connection (the server exits at end of input)."""
        self.client.close()

    def capabilities(self) -> frozenset[str]:
        """What the server declared in ``initialize``."""
        return self._capabilities

    def _call(self, capability: str, method: str, params: dict[str, Any] | None = None) -> Any:
        if self.client.state != "connected":
            raise Disconnected("the remote workspace is disconnected; reconnect to continue")
        if capability not in self._capabilities:
            raise Unavailable(capability)
        # Writes may wait for a person's answer: no time limit while the connection lives.
        patient = method.startswith("write/")
        return self.client.call(method, params or {}, patient=patient)

    # -- reads ---------------------------------------------------------------------------------

    def list_facts(self) -> MemorySnapshot:
        """``facts/list``."""
        return wire.decode_snapshot(self._call("facts", "facts/list"))

    def read(self, ref: str) -> LoadedFact:
        """``facts/read``."""
        return wire.decode_loaded(self._call("facts", "facts/read", {"ref": ref}))

    def search(
        self, query: str, *, fact_type: str | None = None, scope: str | None = None, limit: int = 5
    ) -> tuple[SearchHit, ...]:
        """``facts/search``."""
        params = {"query": query, "type": fact_type, "scope": scope, "limit": limit}
        return wire.decode_hits(self._call("facts", "facts/search", params))

    def revisions(self, ref: str) -> History:
        """``facts/revisions``."""
        return wire.decode_history(self._call("facts", "facts/revisions", {"ref": ref}))

    def archived(self) -> tuple[ArchivedEntry, ...]:
        """``archive/list``."""
        return wire.decode_archived(self._call("archive", "archive/list"))

    def instructions(self, target: str | None = None) -> InstructionsView:
        """``instructions/get`` (``target`` is a path on the server)."""
        data = self._call("instructions", "instructions/get", {"target": target})
        return wire.decode_instructions(data)

    def last_trace(self) -> RecallTrace | None:
        """``recall/last``."""
        return wire.decode_trace(self._call("recall", "recall/last").get("trace"))

    def recent_traces(self, limit: int = 20) -> tuple[RecallTrace, ...]:
        """``recall/recent``."""
        data = self._call("recall", "recall/recent", {"limit": limit})
        return tuple(RecallTrace.from_dict(t) for t in data["traces"])

    def recall(
        self, message: str, *, limit: int = DEFAULT_LIMIT, budget: int = DEFAULT_BUDGET
    ) -> RecallRun:
        """``recall/run`` (the server records the trace)."""
        params = {"message": message, "limit": limit, "budget": budget}
        return wire.decode_run(self._call("recall", "recall/run", params))

    def suggestions(self) -> Suggestions:
        """``suggestions/scan`` — ``Unavailable`` when the server lacks the capability."""
        return wire.decode_suggestions(self._call("suggestions", "suggestions/scan"))

    def complete(self, kind: CompletionKind, prefix: str = "") -> tuple[str, ...]:
        """``complete``: the server runs the same completion function as a local catalog."""
        data = self._call("completion", "complete", {"kind": kind, "prefix": prefix})
        return tuple(str(item) for item in data["items"])

    # -- the one write door: the server's ``LocalCatalog.apply`` decides and writes ----------

    def apply(self, op: Op, actor: Actor) -> WriteOutcome:
        """``write/apply``: the op and the actor go over the wire, the server calls ``apply``.

        Confirmations the server's policy asks for come back to this catalog's service.
        """
        if isinstance(op, Accept) and SUGGESTIONS not in self._capabilities:
            raise Unavailable(SUGGESTIONS)
        params = {"op": wire.encode_op(op), "actor": wire.encode_actor(actor)}
        return wire.decode_outcome(self._call(WRITES, "write/apply", params))
