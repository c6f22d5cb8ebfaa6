"""Where each ``context-engine`` command is defined, so the command line loads only the one it runs.

``--help``, ``--version`` and shell completion of command names read these tables and import no
command module; a test keeps the short help here equal to each command's own docstring.
"""

from __future__ import annotations

from typing import Literal

# command name -> (module under context_engine.cli, attribute holding the click command)
TOP_LEVEL: dict[str, tuple[str, str]] = {
    "memory": ("memory_group", "memory"),
    "instructions": ("instructions_cmds", "instructions_cmd"),
    "note": ("instructions_cmds", "note_cmd"),
    "list": ("facts_cmds", "list_cmd"),
    "read": ("facts_cmds", "read_cmd"),
    "search": ("recall_cmds", "search_cmd"),
    "recall": ("recall_cmds", "recall_cmd"),
    "prefix": ("session_cmds", "prefix"),
    "remember": ("facts_cmds", "remember_cmd"),
    "forget": ("facts_cmds", "forget_cmd"),
    "revisions": ("facts_cmds", "revisions_cmd"),
    "restore": ("facts_cmds", "restore_cmd"),
    "archived": ("facts_cmds", "archived_cmd"),
    "recover": ("facts_cmds", "recover_cmd"),
    "migrate": ("facts_cmds", "migrate_cmd"),
    "tool": ("tool_cmds", "tool"),
    "suggest": ("suggest_cmds", "suggest_cmd"),
    "accept": ("suggest_cmds", "accept_cmd"),
    "complete": ("completion_cmds", "complete_cmd"),
    "serve": ("serve_cmd", "serve_cmd"),
    "mcp": ("agent_cmds", "mcp"),
    "hook": ("agent_cmds", "hook"),
    "import": ("transfer_cmds", "import_group"),
    "export": ("transfer_cmds", "export_cmd"),
    "proposals": ("proposals_cmds", "proposals"),
    "install": ("install_cmds", "install_cmd"),
    "uninstall": ("install_cmds", "uninstall_cmd"),
    "doctor": ("install_cmds", "doctor_cmd"),
}

# ``memory`` subcommand -> (module whose ``@memory.command`` defines it, attribute)
MEMORY: dict[str, tuple[str, str]] = {
    "summary": ("memory_cmds", "summary_cmd"),
    "instructions": ("instructions_cmds", "memory_instructions"),
    "recall": ("recall_cmds", "memory_recall"),
    "revisions": ("facts_cmds", "revisions_cmd"),
    "restore": ("facts_cmds", "restore_cmd"),
    "archived": ("facts_cmds", "archived_cmd"),
    "recover": ("facts_cmds", "recover_cmd"),
}

# The first line of each command's help, as ``context-engine --help`` lists it.
SHORT_HELP: dict[str, str] = {
    "memory": "The /memory family as text: bare prints the summary.",
    "instructions": "Which instruction files govern a path, in precedence order, with diagnostics.",
    "note": "Append a note to the workspace root's instruction file (quick add, S6.8).",
    "list": "List active facts of both stores, sorted by name, scope and id.",
    "read": "Print one fact (REF: id, reference like project/x.md, or bare name).",
    "search": "BM25 search over both stores, as the memory tool's ``search`` sees it (S9.1).",
    "recall": "Run auto-recall on MESSAGE: print the block and the trace, and record the trace.",
    "prefix": "Print the stable prefix: the memory block, then the instruction block.",
    "remember": "Save a fact: create it, or update it by --id / name (an explicit user action).",
    "forget": (
        "Archive a fact (an id: that identity; a reference: that scope; a name: every store)."
    ),
    "revisions": "Show the earlier revisions of a fact, newest first.",
    "restore": "Make an earlier revision's content the newest revision.",
    "archived": "List forgotten facts of both stores, newest first.",
    "recover": "Bring an archived fact back (its id kept, at a new revision).",
    "migrate": "Upgrade legacy fact files of both stores and retired config keys (idempotent, S5).",
    "tool": "Run an agent tool through the write policy and print its decision object.",
    "suggest": "Memory and skill candidates from the workspace's recent sessions (never writes).",
    "accept": "Accept one candidate of a fresh scan: a fact, or a project SKILL.md (S11.5).",
    "complete": "Completion candidates: refs (ids, then names) or archive paths, one per line.",
    "serve": "Serve this workspace's catalog over stdin/stdout (e.g. through ssh).",
    "mcp": "Serve the memory, remember and forget tools over MCP on stdin/stdout.",
    "hook": "Answer one agent hook: JSON on stdin, the context to add as JSON on stdout.",
    "import": "Bring memories in: from Claude Code, Codex, Gemini CLI, or an exported bundle.",
    "export": "Write both stores (facts, revisions, archive) to a portable bundle.",
    "proposals": "Writes an agent asked for when no person could confirm them (bare: list).",
    "install": "Add our hooks and MCP server to the agent's settings (merged, with a backup).",
    "uninstall": "Remove exactly what install added (untouched files come back byte-identical).",
    "doctor": "Check the set-up: run each hook once, sizes against the agent's limit, `mcp list`.",
}

# The first line of each ``memory`` subcommand's help.
MEMORY_SHORT_HELP: dict[str, str] = {
    "summary": (
        "Instructions, facts (id, revision, scope, type, freshness), archive and store locations."
    ),
    "instructions": "/memory instructions: precedence, real paths, imports and diagnostics.",
    "recall": "/memory recall: the last recall trace of this workspace.",
    "revisions": "Show the earlier revisions of a fact, newest first.",
    "restore": "Make an earlier revision's content the newest revision.",
    "archived": "List forgotten facts of both stores, newest first.",
    "recover": "Bring an archived fact back (its id kept, at a new revision).",
}

CompletionKind = Literal["refs", "archives"]

# (command path, argument name, kind) whose values shell completion offers.
COMPLETED_ARGUMENTS: tuple[tuple[tuple[str, ...], str, CompletionKind], ...] = (
    (("read",), "ref", "refs"),
    (("forget",), "ref", "refs"),
    (("revisions",), "ref", "refs"),
    (("restore",), "ref", "refs"),
    (("recover",), "archive_path", "archives"),
    (("memory", "revisions"), "ref", "refs"),
    (("memory", "restore"), "ref", "refs"),
    (("memory", "recover"), "archive_path", "archives"),
)
