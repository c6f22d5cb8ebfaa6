"""``context-engine mcp``: the memory tools over the Model Context Protocol (stdio, official SDK).

The server is a headless controller that owns the workspace's project store (S1, S10.4). Every
tool call runs first with a fail-closed confirmation. When the write policy wants a person, the
server asks the client through MCP elicitation — a server-to-client request on handshake-era
connections, an ``InputRequiredResult`` round on 2026-07-28 connections — and only on an
explicit approval runs the call again with a one-time approval bound to the same arguments
(the policy re-checks everything, and writes stay create-only). A client that cannot answer an
elicitation gets the refusal reason and nothing is written.

The elicitation message is the approval notification of ``policy/notify.py`` — the tool name
only, never a fact's name, reason or content (S7.4): the client already shows the person the
tool call's arguments, and the refusal text the model gets carries the policy's reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    from ..engine import ContextEngine
    from ..policy.confirmation import ConfirmationRequest

SERVER_NAME = "context-engine"
CONFIRM_KEY = "confirm-memory-write"
APPROVE_FIELD = "approve"
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        APPROVE_FIELD: {
            "type": "boolean",
            "title": "Approve this memory write",
            "description": "Approve only if you want this exact change saved.",
        }
    },
    "required": [APPROVE_FIELD],
}
NO_PERSON = "no person can confirm this write (the client does not support elicitation)"
DECLINED = "the person declined the write"


@dataclass(frozen=True, slots=True)
class ToolDef:
    """One tool as listed: fixed name, description and argument schema (S9.2)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolReply:
    """What one tool call produced.

    When a person must confirm, ``needs_person`` is the policy's reason (for the refusal text)
    and ``ask`` the text to put in front of the person.
    """

    text: str
    is_error: bool = False
    needs_person: str | None = None
    ask: str = ""


class ToolHost(Protocol):
    """The engine side of the server: lists the tools and runs one call."""

    def tool_defs(self) -> Sequence[ToolDef]:
        """The three tools with their fixed descriptions and schemas."""
        ...

    def call(self, name: str, args: Mapping[str, Any], approved: bool) -> ToolReply:
        """Run one call; ``approved`` grants one confirmation for exactly these arguments."""
        ...


def refused_text(reason: str) -> str:
    """The tool result when nothing was written."""
    return f"Refused: {reason}. Nothing was written."


def client_can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    """True when the client declared form elicitation (an empty object means form, 2025-06-18)."""
    caps = ctx.session.client_capabilities
    elicitation = caps.elicitation if caps is not None else None
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


def _accepted(result: Any) -> bool:
    """True only for an explicit accept whose content approves."""
    action = getattr(result, "action", None)
    content = getattr(result, "content", None) or {}
    return action == "accept" and content.get(APPROVE_FIELD) is True


def build_server(host: ToolHost, *, version: str = "") -> Server[Any]:
    """The low-level MCP server over ``host`` (exact schemas, so not the decorator API)."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from ..policy.permission import argument_digest

    defs = {tool.name: tool for tool in host.tool_defs()}

    def listed() -> list[types.Tool]:
        return [
            types.Tool(name=t.name, description=t.description, input_schema=dict(t.input_schema))
            for t in defs.values()
        ]

    def result(reply: ToolReply) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(text=reply.text)], is_error=reply.is_error
        )

    async def run(name: str, args: Mapping[str, Any], approved: bool) -> ToolReply:
        return await anyio.to_thread.run_sync(lambda: host.call(name, args, approved))

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed())

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        name = params.name
        args = dict(params.arguments or {})
        if name not in defs:
            return result(ToolReply(f"unknown tool: {name}", is_error=True))
        digest = argument_digest(name, args)  # binds an elicitation round to these arguments
        responses = params.input_responses or {}
        if CONFIRM_KEY in responses:
            # Retry round of a 2026-07-28 elicitation: only the round we asked for counts.
            if params.request_state == digest and _accepted(responses[CONFIRM_KEY]):
                return result(await run(name, args, True))
            return result(ToolReply(refused_text(DECLINED), is_error=True))
        reply = await run(name, args, False)
        if reply.needs_person is None:
            return result(reply)
        no_person = ToolReply(refused_text(f"{reply.needs_person}; {NO_PERSON}"), is_error=True)
        if not client_can_elicit(ctx):
            return result(no_person)
        message = reply.ask or f"Approve the agent's `{name}` memory call?"
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            form = types.ElicitRequestFormParams(message=message, requested_schema=CONFIRM_SCHEMA)
            return types.InputRequiredResult(
                input_requests={CONFIRM_KEY: types.ElicitRequest(params=form)}, request_state=digest
            )
        try:
            answer = await ctx.session.elicit_form(
                message, CONFIRM_SCHEMA, related_request_id=ctx.request_id
            )
        except Exception:
            # Any failure to ask (no back channel, client error, bad reply) means no person.
            return result(no_person)
        if not _accepted(answer):
            return result(ToolReply(refused_text(DECLINED), is_error=True))
        return result(await run(name, args, True))

    return Server(
        SERVER_NAME,
        version=version,
        instructions=(
            "Project and global memory for this workspace: search and read facts with `memory`, "
            "save durable facts with `remember`, archive wrong ones with `forget`."
        ),
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


class _AskedNobody:
    """Fail-closed confirmation that remembers the request a person was wanted for."""

    def __init__(self) -> None:
        self.request: ConfirmationRequest | None = None

    def confirm(self, request: ConfirmationRequest) -> bool:
        """Refuse, keeping the request."""
        self.request = request
        return False


class EngineToolHost:
    """The three agent tools of one engine, run as a headless controller owning the store."""

    def __init__(self, engine: ContextEngine) -> None:
        self.engine = engine

    def tool_defs(self) -> Sequence[ToolDef]:
        """The fixed tool specs (S9.2)."""
        from .spec import TOOL_SPECS

        return [ToolDef(s.name, s.description, dict(s.schema)) for s in TOOL_SPECS]

    def call(self, name: str, args: Mapping[str, Any], approved: bool) -> ToolReply:
        """Run one call; ``approved`` is a one-time confirmation for these exact arguments."""
        from ..policy.confirmation import ApprovedOnce
        from ..policy.permission import argument_digest
        from .write import canonical_args

        asked = _AskedNobody()
        # Bound to the arguments as the policy sees them (S10.3), not their JSON spelling.
        digest = argument_digest(name, canonical_args(name, args))
        confirmation = ApprovedOnce(digest) if approved else asked
        outcome = self.engine.run_tool(
            name, args, controller="headless", confirmation=confirmation, mode="ask"
        )
        if outcome.written or outcome.ran:
            return ToolReply(outcome.result)
        if asked.request is not None:
            from ..policy.notify import approval_notification

            ask = approval_notification(asked.request)
            return ToolReply(refused_text(outcome.reason), True, outcome.reason, ask)
        return ToolReply(_refusal(outcome.reason, outcome.result), is_error=True)


def _refusal(reason: str, result: str) -> str:
    """The text of a refusal or failure: the tool's own message, else the reason."""
    if result and result != reason:
        return result
    return refused_text(reason)


async def serve_stdio(host: ToolHost, *, hook_relay: EngineToolHost | None = None) -> None:
    """Serve ``host`` on stdin/stdout until the client closes the pipe.

    With ``hook_relay``, the same process also answers this workspace's hooks over a private
    Unix socket for as long as it runs (``hooks/relay.py``).
    """
    import anyio
    from mcp.server.stdio import stdio_server

    from .mcp_frames import BoundedLines, claimed_stdio

    server = build_server(host)
    async with anyio.create_task_group() as tasks:
        if hook_relay is not None:
            tasks.start_soon(_serve_hooks, hook_relay)
        with claimed_stdio() as (wire_in, wire_out):
            lines = BoundedLines(wire_in)
            # ``stdio_server`` only iterates its stdin: an async line source is all it needs.
            source = cast("anyio.AsyncFile[str]", lines)
            async with stdio_server(source, anyio.wrap_file(wire_out)) as (reader, writer):
                lines.attach(writer)
                read_stream, write_stream = reader, writer
                await server.run(read_stream, write_stream, server.create_initialization_options())
        tasks.cancel_scope.cancel()


async def _serve_hooks(host: EngineToolHost) -> None:
    from ..hooks import relay
    from ..hooks.runner import answer_relayed

    engine = host.engine
    try:
        await relay.serve(engine.paths, lambda request: answer_relayed(request, engine))
    except Exception:
        # The relay only speeds hooks up; whatever goes wrong with it, the tools keep serving.
        return


def run_stdio(host: EngineToolHost) -> None:
    """Blocking entry point for the CLI: the tools, plus the hook relay for this workspace."""
    import anyio

    async def main() -> None:
        await serve_stdio(host, hook_relay=host)

    anyio.run(main)
