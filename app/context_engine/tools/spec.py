"""The agent tools' fixed names, descriptions and argument schemas (S9).

These strings are part of the cache-stable prompt: they never depend on the workspace, the
store or the time, so every session sends byte-identical tool definitions.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from ..records import record

MEMORY_TOOL = "memory"
REMEMBER_TOOL = "remember"
FORGET_TOOL = "forget"
TOOL_NAMES: tuple[str, ...] = (MEMORY_TOOL, REMEMBER_TOOL, FORGET_TOOL)
# The ``remember`` arguments in schema order (S9.2): the policy, the ``Save`` op and the schema.
REMEMBER_ARGUMENTS = ("name", "title", "description", "type", "scope", "body", "id",
                      "expected_revision")  # fmt: skip

MEMORY_DESCRIPTION = (
    "Read saved background memory (read-only). Facts are low-authority notes from earlier "
    "sessions and may be stale or wrong; the current request and standing instructions win. "
    'operation="search" finds facts by 1-3 distinctive terms (query; optional type, scope, '
    'limit up to 20). operation="read" returns one fact by id, reference such as '
    'project/<name>.md, or name. operation="list" lists facts (optional type, scope). Results '
    "name facts by reference. Zero results do not prove a fact was never recorded."
)

REMEMBER_DESCRIPTION = (
    "Save a durable fact for future sessions. Give a short name, a one-line description, the "
    "body, and the type: project (how this project works) or reference (where to find "
    "something). A new project-scoped fact of type project or reference is saved at once. "
    "Global facts, user or feedback types, updates (id, expected_revision), possible "
    "duplicates, long bodies and anything that may hold credentials, secrets or e-mail "
    "addresses need a person's confirmation and may be refused. Never store secrets."
)

FORGET_DESCRIPTION = (
    "Archive a saved fact that is wrong or obsolete. name is an id, a reference such as "
    "project/<name>.md, or a name (a bare name archives it from both scopes). Archived facts "
    "leave recall; a person can recover them. Every forget needs a person's confirmation."
)

_TYPE = {
    "type": "string",
    "enum": ["user", "feedback", "project", "reference"],
    "description": "user and feedback: the person's preferences and corrections; project: "
    "how this project works; reference: where to find something.",
}
_SCOPE = {
    "type": "string",
    "enum": ["project", "global"],
    "description": "project (default) or global (all workspaces).",
}

MEMORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "operation": {"type": "string", "enum": ["search", "read", "list"]},
        "query": {"type": "string", "description": "search: 1-3 distinctive terms."},
        "name": {"type": "string", "description": "read: an id, reference or name."},
        "type": _TYPE,
        "scope": _SCOPE,
        "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 8},
    },
    "required": ["operation"],
    "additionalProperties": False,
}

REMEMBER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "description": "Short kebab-case name; defaults to the title, then the description.",
        },
        "title": {"type": "string", "description": "Human-readable title (one line)."},
        "description": {"type": "string", "description": "One-line summary (required)."},
        "type": _TYPE,
        "scope": _SCOPE,
        "body": {"type": "string", "description": "The fact itself, in Markdown (required)."},
        "id": {"type": "string", "description": "Update: the id of the fact to change."},
        "expected_revision": {
            "type": "integer",
            "description": "Update: the revision you read; a newer one makes the save fail.",
        },
    },
    "required": ["description", "body"],
    "additionalProperties": False,
}

FORGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "An id, a reference or a name."},
    },
    "required": ["name"],
    "additionalProperties": False,
}


@record
class ToolSpec:
    """One agent tool as a provider sees it."""

    name: str
    description: str
    schema: MappingProxyType[str, Any]


TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(MEMORY_TOOL, MEMORY_DESCRIPTION, MappingProxyType(MEMORY_SCHEMA)),
    ToolSpec(REMEMBER_TOOL, REMEMBER_DESCRIPTION, MappingProxyType(REMEMBER_SCHEMA)),
    ToolSpec(FORGET_TOOL, FORGET_DESCRIPTION, MappingProxyType(FORGET_SCHEMA)),
)


def tool_spec(name: str) -> ToolSpec:
    """The spec of one tool by name; KeyError for an unknown tool."""
    for spec in TOOL_SPECS:
        if spec.name == name:
            return spec
    raise KeyError(name)
