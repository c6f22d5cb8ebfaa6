"""``context-engine doctor``: is each agent set up, and does what it sends fit? (S15.1)

For every agent with our entries it checks the files, starts the configured MCP server once and
times its handshake against what the agent waits before the first model call, runs each
configured hook once with a synthetic payload (exactly as the agent would: the command through
the shell, JSON on stdin), reports each block's size against the agent's limit, asks Codex
whether our hooks are trusted, and runs the agent's own ``mcp list`` when the agent is installed.
Any problem makes the exit non-zero, each with what the person must do.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..hooks.protocol import AGENTS, Agent
from . import entries, files
from .targets import (
    CODEX_GRACE_DEFAULT_MS,
    CODEX_GRACE_KEY,
    CODEX_GRACE_MS,
    SCOPES,
    SPECS,
    Scope,
    config_files,
)

HOOK_TIMEOUT_S = 60
MCP_LIST_TIMEOUT_S = 120
PROBE_PROMPT = "context engine doctor: what do we know about this project's release process?"


@dataclass
class Diagnosis:
    """Lines to print and the problems found (each says what to do)."""

    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        """Record a problem (printed, and the exit becomes non-zero)."""
        self.problems.append(text)
        self.lines.append(f"  PROBLEM: {text}")


def doctor(
    agents: tuple[Agent, ...] | None,
    scopes: tuple[Scope, ...] | None,
    root: Path,
    workspace: Path,
    *,
    run_agents: bool = True,
) -> Diagnosis:
    """Check the requested agents (default: every agent we find installed)."""
    diagnosis = Diagnosis()
    explicit = agents is not None
    found_any = False
    for agent in agents or AGENTS:
        installed = [scope for scope in scopes or SCOPES if _installed(agent, scope, root)]
        if not installed:
            if explicit:
                diagnosis.lines.append(f"{agent}: not installed")
                diagnosis.problem(f"run `context-engine install {agent}`")
            else:
                diagnosis.lines.append(f"{agent}: not installed")
            continue
        found_any = True
        if len(installed) > 1:
            diagnosis.lines.append(f"{agent}:")
            diagnosis.problem(
                f"installed at both user and project scope: the memory block would arrive "
                f"twice; run `context-engine uninstall {agent} --scope project`"
            )
        for scope in installed:
            _check(diagnosis, agent, scope, root, workspace, run_agents)
    if not found_any and not explicit:
        diagnosis.problem(
            "no agent is set up: run `context-engine install <claude-code|codex|gemini>`"
        )
    return diagnosis


def _installed(agent: Agent, scope: Scope, root: Path) -> bool:
    target = config_files(agent, scope, root)
    for path, table in ((target.hooks, None), (target.mcp, target.mcp_table)):
        try:
            doc = files.load(path).doc
        except files.SettingsFileError:
            return True  # broken: report it in the check
        if (table is None and entries.our_hooks(doc)) or (
            table is not None and entries.server_entry(doc, table) is not None
        ):
            return True
    return False


def _check(
    diagnosis: Diagnosis, agent: Agent, scope: Scope, root: Path, workspace: Path, run: bool
) -> None:
    spec = SPECS[agent]
    target = config_files(agent, scope, root)
    diagnosis.lines.append(f"{agent} ({scope} scope): hooks in {target.hooks}, MCP in {target.mcp}")
    try:
        hooks_doc = files.load(target.hooks).doc
        mcp_doc = files.load(target.mcp).doc
    except files.SettingsFileError as exc:
        diagnosis.problem(f"{exc.message}; fix it, or restore it from its .context-engine-backup")
        return
    server = entries.server_entry(mcp_doc, target.mcp_table)
    if server is None:
        diagnosis.problem(f"no context-engine MCP server: run `context-engine install {agent}`")
    else:
        command = str(server.get("command", ""))
        if not Path(command).is_file():
            diagnosis.problem(f"the MCP server's interpreter {command} is missing: install again")
        else:
            args = [str(a) for a in server.get("args", [])]
            diagnosis.lines.append(f"  MCP server: {command} {' '.join(args)}")
            _mcp_start(diagnosis, agent, server, mcp_doc, command, args, workspace)
    for event in spec.events:
        handlers = entries.hook_handlers(hooks_doc, event)
        if not handlers:
            diagnosis.problem(f"no {event} hook: run `context-engine install {agent}`")
            continue
        if len(handlers) > 1:
            diagnosis.problem(f"{len(handlers)} {event} hooks: run uninstall, then install")
        handler = handlers[0]
        timeout = handler.get("timeout")
        if agent == "gemini" and isinstance(timeout, int | float) and timeout < 1000:
            diagnosis.problem(
                f"Gemini's hook timeout is in milliseconds: {timeout} ms is too short "
                "(install writes 30000)"
            )
        _probe(diagnosis, agent, event, str(handler["command"]), spec.limit, workspace)
    if agent == "codex":
        _codex_trust(diagnosis, root)
    if run:
        _mcp_list(diagnosis, spec.binary, workspace)


def _mcp_start(
    diagnosis: Diagnosis,
    agent: Agent,
    server: Any,
    mcp_doc: Any,
    command: str,
    args: list[str],
    workspace: Path,
) -> None:
    """Start the server as the agent would; its start-up time against what the agent waits."""
    from .mcp_probe import OUR_TOOLS, handshake

    shook = handshake(command, args, workspace)
    if shook.error:
        diagnosis.problem(f"the MCP server did not start: {shook.error}")
        return
    missing = [name for name in OUR_TOOLS if name not in shook.tools]
    diagnosis.lines.append(
        f"  MCP start-up: {len(shook.tools)} tools listed in {shook.seconds:.2f} s"
    )
    if missing:
        diagnosis.problem(f"the MCP server does not list {', '.join(missing)}: install again")
    if agent == "codex":
        grace = (
            mcp_doc.get(CODEX_GRACE_KEY, CODEX_GRACE_DEFAULT_MS) if hasattr(mcp_doc, "get") else 0
        )
        optional = server.get("required") is not True and isinstance(grace, int)
        if optional and shook.seconds * 1000 > grace:
            diagnosis.problem(
                f"Codex waits {grace} ms for an MCP server at the first model step and "
                f"ours took {shook.seconds * 1000:.0f} ms: its tools would be missing "
                f"there; set {CODEX_GRACE_KEY} = {CODEX_GRACE_MS} in config.toml"
            )
    if agent == "claude-code" and server.get("alwaysLoad") is not True and shook.seconds > 2:
        diagnosis.problem(
            f"Claude Code waits about 2 s for MCP servers before the first turn and ours took "
            f'{shook.seconds:.1f} s: add "alwaysLoad": true to its entry (install does)'
        )


def _probe(
    diagnosis: Diagnosis, agent: Agent, event: str, command: str, limit: int, workspace: Path
) -> None:
    payload = {
        "session_id": "context-engine-doctor",
        "cwd": str(workspace),
        "hook_event_name": event,
        "prompt": PROBE_PROMPT,
        "source": "startup",
    }
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            shell=True,
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=workspace,
            timeout=HOOK_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        diagnosis.problem(f"{event} hook did not answer in {HOOK_TIMEOUT_S} s")
        return
    elapsed = time.perf_counter() - started
    try:
        output: Any = json.loads(done.stdout or "null")
    except ValueError:
        output = None
    if done.returncode != 0 or not isinstance(output, dict):
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        diagnosis.problem(f"{event} hook failed (exit {done.returncode}): {detail[0]}")
        return
    context = output.get("hookSpecificOutput", {}).get("additionalContext", "")
    size = len(context) if isinstance(context, str) else 0
    diagnosis.lines.append(
        f"  {event}: {size:,} of {limit:,} characters ({elapsed:.2f} s, whole process)"
    )
    if done.stderr.strip():
        diagnosis.lines.append(f"    stderr: {done.stderr.strip().splitlines()[-1]}")
    if size > limit:
        diagnosis.problem(
            f"{event} adds {size:,} characters; {agent} keeps only about {limit:,}: lower "
            "CONTEXT_ENGINE_MEMORY_BLOCK_CHARS or drop --with-instructions"
        )
    if event == "SessionStart" and not context.startswith("# Memory"):
        diagnosis.problem("SessionStart added no memory block: see the hook's stderr above")


def _codex_trust(diagnosis: Diagnosis, root: Path) -> None:
    from .codex_trust import CodexUnavailable, list_our_hooks

    try:
        listed = list_our_hooks(root)
    except CodexUnavailable as exc:
        diagnosis.lines.append(
            f"  Codex hook trust not checked ({exc.message}): make sure both context-engine "
            "hooks are trusted in codex's /hooks screen"
        )
        return
    untrusted = [h for h in listed if h.get("trustStatus") != "trusted"]
    diagnosis.lines.append(f"  Codex sees {len(listed)} context-engine hook(s)")
    if not listed:
        diagnosis.problem("Codex does not load our hooks (is the project trusted by Codex?)")
    elif untrusted:
        diagnosis.problem(
            f"Codex skips {len(untrusted)} untrusted context-engine hook(s): run "
            "`context-engine install codex` again, or trust them in codex's /hooks screen"
        )


def _mcp_list(diagnosis: Diagnosis, binary: str, workspace: Path) -> None:
    found = shutil.which(binary)
    if found is None:
        diagnosis.lines.append(f"  `{binary}` is not on PATH: its own `mcp list` was not run")
        return
    try:
        done = subprocess.run(
            [found, "mcp", "list"],
            capture_output=True,
            text=True,
            cwd=workspace,
            timeout=MCP_LIST_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        diagnosis.problem(f"`{binary} mcp list` did not finish in {MCP_LIST_TIMEOUT_S} s")
        return
    text = done.stdout + done.stderr
    ours = [line.strip() for line in text.splitlines() if "context-engine" in line]
    for line in ours:
        diagnosis.lines.append(f"  {binary} mcp list: {line}")
    if not ours:
        diagnosis.problem(f"`{binary} mcp list` does not show context-engine: install again")
    elif any(word in " ".join(ours).lower() for word in ("failed", "✗", "disconnected", "error")):
        diagnosis.problem(f"{binary} cannot start the context-engine MCP server (see above)")
