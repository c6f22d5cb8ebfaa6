"""``context-engine mcp``: the memory tools over the Model Context Protocol (stdio, official SDK).

The server is a headless controller that owns the workspace's project store (S1, S10.4). Every
tool call runs first with a fail-closed confirmation. When the write policy wants a person, the
server asks the client through MCP elicitation — a server-to-client request on handshake-era
connections, an ``InputRequiredResult`` round on 2026-07-28 connections — and only on an
explicit approval runs the call again with a one-time approval bound to the same arguments
(the policy re-checks everything, and writes stay create-only). A client that cannot answer an
elicitation gets the refusal reason and nothing is written.

Arguments are checked against the advertised schemas before anything runs or anyone is asked
(``tools_validate.py``). The elicitation message names the product and shows what would be
written (paths scrubbed, S7.4). When no person can answer — the client has no elicitation, or a
headless ``claude -p`` answers for nobody — the write is kept as a proposal for a person to
review (S15.2), never made; the model is told "declined" only when a person declined. A
headless run that answers every elicitation itself (``claude -p``, a ``codex exec`` turn) is not
asked at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

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
PRODUCT = "Context Engine"
NO_PERSON = "no person can confirm this write (the client does not support elicitation)"
DECLINED = "the person declined the write"
# MCP tool annotations (clients such as Codex decide on approvals from them).
ANNOTATIONS: dict[str, dict[str, bool]] = {
    "memory": {"read_only_hint": True, "destructive_hint": False, "idempotent_hint": True},
    "remember": {"read_only_hint": False, "destructive_hint": False, "idempotent_hint": False},
    "forget": {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": True},
}
RESOURCE_SCHEME = "memory://"
RESOURCE_PAGE = 500
TITLES = {"memory": "Search memory", "remember": "Remember a fact", "forget": "Forget a fact"}


class ToolDef(NamedTuple):
    """One tool as listed: fixed name, description and argument schema (S9.2)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


class ToolReply(NamedTuple):
    """What one tool call produced.

    When a person must confirm, ``needs_person`` is the policy's reason (for the refusal text)
    and ``ask`` the text to put in front of the person.
    """

    text: str
    is_error: bool = False
    needs_person: str | None = None
    ask: str = ""
    request: ConfirmationRequest | None = None


class ToolHost(Protocol):
    """The engine side of the server: lists the tools and runs one call."""

    def tool_defs(self) -> Sequence[ToolDef]:
        """The three tools with their fixed descriptions and schemas."""
        ...

    def call(self, name: str, args: Mapping[str, Any], approved: bool) -> ToolReply:
        """Run one call; ``approved`` grants one confirmation for exactly these arguments."""
        ...

    def keep(self, name: str, args: Mapping[str, Any], reply: ToolReply, agent: str) -> str:
        """Keep a call no person could confirm as a proposal; the text the model gets."""
        ...

    def resources(self) -> Sequence[tuple[str, str, str]]:
        """``(reference, title, description)`` of every active fact (``memory://`` resources)."""
        ...

    def read_resource(self, reference: str) -> str:
        """One fact as the ``memory`` tool's ``read`` shows it."""
        ...


def refused_text(reason: str) -> str:
    """The tool result when nothing was written."""
    return f"Refused: {reason}. Nothing was written."


def server_version() -> str:
    """This installation's version."""
    from .. import __version__

    return __version__


def nobody_answers() -> bool:
    """True under a headless ``claude -p``, which answers every elicitation without a person."""
    import os

    return os.environ.get("CLAUDE_CODE_ENTRYPOINT") in ("sdk-cli", "sdk-ts", "sdk-py")


def codex_exec_turn(meta: Mapping[str, Any] | None) -> bool:
    """True for a call from a ``codex exec`` turn: it declines every elicitation, nobody asked.

    Codex sends its turn's metadata with each tool call (``_meta``); ``turn_trigger`` is
    ``exec`` for the headless ``codex exec``.
    """
    turn = (meta or {}).get("x-codex-turn-metadata")
    return isinstance(turn, Mapping) and turn.get("turn_trigger") == "exec"


def client_name(ctx: ServerRequestContext[Any, Any]) -> str:
    """The client's declared name (``claude-code``, ``codex-mcp-client``, …)."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return info.name if info is not None else "unknown client"


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


def _no_decision(answer: Any) -> bool:
    """A non-yes that is no person's decision: dismissed, or answered with nobody there."""
    return getattr(answer, "action", None) == "cancel" or nobody_answers()


def build_server(host: ToolHost, *, version: str = "") -> Server[Any]:
    """The low-level MCP server over ``host`` (exact schemas, so not the decorator API)."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from ..policy.permission import argument_digest
    from .validate import schema_error

    defs = {tool.name: tool for tool in host.tool_defs()}

    def listed() -> list[types.Tool]:
        return [
            types.Tool(
                name=t.name,
                title=TITLES.get(t.name),
                description=t.description,
                input_schema=dict(t.input_schema),
                annotations=types.ToolAnnotations(
                    title=TITLES.get(t.name), open_world_hint=False, **ANNOTATIONS.get(t.name, {})
                ),
            )
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
        problem = schema_error(name, params.arguments or {})
        if problem is not None:  # before the policy, and before any person is asked
            return result(ToolReply(f"Error: {problem}. Nothing was written.", is_error=True))
        digest = argument_digest(name, args)  # binds an elicitation round to these arguments
        responses = params.input_responses or {}
        answer_round = responses.get(CONFIRM_KEY) if CONFIRM_KEY in responses else None
        if answer_round is not None and params.request_state == digest:
            # Retry round of a 2026-07-28 elicitation: only the round we asked for counts.
            if _accepted(answer_round):
                return result(await run(name, args, True))
        elif CONFIRM_KEY in responses:
            return result(ToolReply(refused_text(DECLINED), is_error=True))
        reply = await run(name, args, False)
        if reply.needs_person is None:
            return result(reply)

        async def no_person() -> types.CallToolResult:
            agent = client_name(ctx)
            kept = await anyio.to_thread.run_sync(lambda: host.keep(name, args, reply, agent))
            return result(ToolReply(kept))

        if answer_round is not None:  # the person's answer to our round was not a yes
            if _no_decision(answer_round):
                return await no_person()
            return result(ToolReply(refused_text(DECLINED), is_error=True))
        if not client_can_elicit(ctx) or nobody_answers() or codex_exec_turn(params.meta):
            return await no_person()  # asking would only get an answer from no one
        message = reply.ask or f"{PRODUCT}: approve the agent's `{name}` memory call?"
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
            return await no_person()
        if not _accepted(answer):
            if _no_decision(answer):
                return await no_person()
            return result(ToolReply(refused_text(DECLINED), is_error=True))
        return result(await run(name, args, True))

    async def on_list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        listed = await anyio.to_thread.run_sync(host.resources)
        start = int(params.cursor) if params and params.cursor and params.cursor.isdigit() else 0
        page = listed[start : start + RESOURCE_PAGE]
        more = str(start + RESOURCE_PAGE) if start + RESOURCE_PAGE < len(listed) else None
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=f"{RESOURCE_SCHEME}{ref}",
                    name=ref,
                    title=title or None,
                    description=description or None,
                    mime_type="text/markdown",
                )
                for ref, title, description in page
            ],
            next_cursor=more,
        )

    async def on_read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if not uri.startswith(RESOURCE_SCHEME):
            raise ValueError(f"unknown resource: {uri}")
        reference = uri[len(RESOURCE_SCHEME) :]
        text = await anyio.to_thread.run_sync(lambda: host.read_resource(reference))
        contents = types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)
        return types.ReadResourceResult(contents=[contents])

    return Server(
        SERVER_NAME,
        version=version or server_version(),
        title=PRODUCT,
        instructions=(
            "Project and global memory for this workspace: search and read facts with `memory`, "
            "save durable facts with `remember`, archive wrong ones with `forget`."
        ),
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_read_resource=on_read_resource,
    )


class EngineToolHost:
    """The three agent tools of one engine, run as a headless controller owning the store."""

    def __init__(self, engine: ContextEngine) -> None:
        from ..proposals.unasked import new_session

        self.engine = engine
        self.session = new_session("mcp")  # one server process = one agent session

    def tool_defs(self) -> Sequence[ToolDef]:
        """The fixed tool specs (S9.2)."""
        from .spec import TOOL_SPECS

        return [ToolDef(s.name, s.description, dict(s.schema)) for s in TOOL_SPECS]

    def call(self, name: str, args: Mapping[str, Any], approved: bool) -> ToolReply:
        """Run one call; ``approved`` is a one-time confirmation for these exact arguments."""
        from ..policy.confirmation import ApprovedOnce
        from ..policy.permission import argument_digest
        from ..proposals.unasked import AskedNobody
        from .write import canonical_args

        asked = AskedNobody()
        # Bound to the arguments as the policy sees them (S10.3), not their JSON spelling.
        digest = argument_digest(name, canonical_args(name, args))
        confirmation = ApprovedOnce(digest) if approved else asked
        outcome = self.engine.run_tool(
            name, args, controller="headless", confirmation=confirmation, mode="ask"
        )
        if outcome.written or outcome.ran:
            return ToolReply(outcome.result)
        if asked.request is not None:
            ask = self.engine.scrub(elicitation_message(asked.request))
            return ToolReply(refused_text(outcome.reason), True, outcome.reason, ask, asked.request)
        return ToolReply(_refusal(outcome.reason, outcome.result), is_error=True)

    def keep(self, name: str, args: Mapping[str, Any], reply: ToolReply, agent: str) -> str:
        """Keep the call as a proposal for this workspace (S15.2); the model's text."""
        from ..proposals.unasked import keep_unasked

        reason = reply.needs_person or "a person must confirm this write"
        if reply.request is None:
            return refused_text(f"{reason}; {NO_PERSON}")
        _, text = keep_unasked(
            self.engine, name, args, reply.request, reason, agent=agent, session=self.session
        )
        return text

    def resources(self) -> Sequence[tuple[str, str, str]]:
        """Every active fact by reference (never a path), in the index's order."""
        facts = sorted(self.engine.active_facts(), key=lambda f: (f.scope != "project", f.name))
        return [(f.reference, f.display_title, f.description) for f in facts]

    def read_resource(self, reference: str) -> str:
        """The ``memory`` tool's ``read`` of ``reference`` (scrubbed like every tool result)."""
        outcome = self.engine.run_tool(
            "memory", {"operation": "read", "name": reference}, controller="headless"
        )
        if not outcome.ran:
            raise ValueError(outcome.result)
        return outcome.result


def elicitation_message(request: ConfirmationRequest) -> str:
    """What the person is asked: the product, the change, the policy's reason, the content."""
    change = "archive" if request.tool == "forget" else "save"
    body = request.diff or request.content
    return (
        f"{PRODUCT}: the agent wants to {change} {request.reference} "
        f"({request.scope}/{request.type}, {request.revision_label}).\n"
        f"A person must confirm because: {request.reason}.\n\n{body.rstrip()}"
    )


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
