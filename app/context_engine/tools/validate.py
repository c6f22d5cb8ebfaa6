"""Check a tool call's arguments against the tool's advertised schema (S9) before anything runs.

The MCP surface promises these schemas to clients (``additionalProperties: false``, ``required``,
``enum``, ``minimum``/``maximum``); a call that breaks them is refused with a clear message before
the policy or any person sees it. The in-process tools keep their own, more lenient parsing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .spec import REMEMBER_TOOL, tool_spec

_JSON_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "boolean": (bool,)}


def schema_error(tool: str, args: object) -> str | None:
    """The first way ``args`` breaks ``tool``'s schema, or ``None`` when it fits."""
    try:
        schema = tool_spec(tool).schema
    except KeyError:
        return f"unknown tool: {tool}"
    if not isinstance(args, Mapping):
        return "arguments must be a JSON object"
    properties: Mapping[str, Mapping[str, Any]] = schema.get("properties", {})
    unknown = sorted(str(key) for key in args if key not in properties)
    if unknown and schema.get("additionalProperties") is False:
        allowed = ", ".join(properties)
        return f"unknown argument: {unknown[0]} (allowed: {allowed})"
    required = [key for key in schema.get("required", ()) if _blank(args.get(key))]
    if required:
        if tool == REMEMBER_TOOL:
            return "description and body are required"
        return f"missing required argument: {required[0]}"
    for key, value in args.items():
        problem = _value_error(str(key), value, properties[key])
        if problem is not None:
            return problem
    return None


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _value_error(key: str, value: object, rule: Mapping[str, Any]) -> str | None:
    kind = rule.get("type")
    accepted = _JSON_TYPES.get(str(kind), (object,))
    if not isinstance(value, accepted) or (kind == "integer" and isinstance(value, bool)):
        return f"{key} must be {'an' if kind == 'integer' else 'a'} {kind}"
    choices = rule.get("enum")
    if choices is not None and value not in choices:
        return f"{key} must be one of {', '.join(choices)}"
    low, high = rule.get("minimum"), rule.get("maximum")
    if isinstance(value, int) and (
        (low is not None and value < low) or (high is not None and value > high)
    ):
        return f"{key} must be an integer from {low if low is not None else '…'} to {high or '…'}"
    return None
