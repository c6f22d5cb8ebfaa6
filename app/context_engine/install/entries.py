"""Our entries inside a settings document: add them, find them, take exactly them out again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .targets import CODEX_GRACE_KEY, CODEX_GRACE_MS, SERVER_NAME, is_our_hook


def add_hook(doc: Any, event: str, handler: Mapping[str, Any]) -> None:
    """Append one group holding our handler to ``hooks.<event>`` (replacing ours, if any)."""
    remove_hooks(doc, only=event)
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError("the settings' hooks entry is not an object")
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise ValueError(f"the settings' hooks.{event} entry is not a list")
    groups.append({"hooks": [dict(handler)]})


def our_hooks(doc: Any) -> dict[str, list[str]]:
    """``{event: [command, …]}`` for every hook we installed in ``doc``."""
    found: dict[str, list[str]] = {}
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                command = handler.get("command") if isinstance(handler, dict) else None
                if is_our_hook(command):
                    found.setdefault(str(event), []).append(str(command))
    return found


def hook_handlers(doc: Any, event: str) -> list[dict[str, Any]]:
    """Our handler objects for ``event`` (for timeouts and commands)."""
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    out: list[dict[str, Any]] = []
    for group in groups if isinstance(groups, list) else []:
        for handler in group.get("hooks", []) if isinstance(group, dict) else []:
            if isinstance(handler, dict) and is_our_hook(handler.get("command")):
                out.append(handler)
    return out


def remove_hooks(doc: Any, only: str | None = None) -> None:
    """Take our handlers out; groups, events and ``hooks`` left empty by that go too."""
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return
    for event in list(hooks):
        groups = hooks[event]
        if (only is not None and event != only) or not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                kept.append(group)
                continue
            rest = [
                h for h in handlers if not (isinstance(h, dict) and is_our_hook(h.get("command")))
            ]
            if len(rest) == len(handlers):
                kept.append(group)
            elif rest:
                kept.append({**group, "hooks": rest})
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del doc["hooks"]


def _is_ours(handler: object) -> bool:
    return isinstance(handler, dict) and is_our_hook(handler.get("command"))


def set_server(doc: Any, table: str, entry: Mapping[str, Any], toml: bool) -> None:
    """Put our MCP server entry under ``table``."""
    if toml:
        import tomlkit

        servers = doc.get(table)
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc[table] = servers
        server = tomlkit.table()
        for key, value in entry.items():
            server[key] = value
        server.add(tomlkit.nl())  # a blank line before whatever table follows
        servers[SERVER_NAME] = server
        return
    servers = doc.setdefault(table, {})
    if not isinstance(servers, dict):
        raise ValueError(f"the settings' {table} entry is not an object")
    servers[SERVER_NAME] = dict(entry)


def server_entry(doc: Any, table: str) -> Any:
    """Our MCP server entry, or ``None``."""
    servers: Any = doc.get(table) if hasattr(doc, "get") else None
    return servers.get(SERVER_NAME) if hasattr(servers, "get") else None


def reset_server(doc: Any, table: str, before: Any) -> None:
    """Put back the entry that was there before install (usually: none)."""
    servers: Any = doc.get(table) if hasattr(doc, "get") else None
    if not hasattr(servers, "get") or SERVER_NAME not in servers:
        return
    previous = server_entry(before, table) if before is not None else None
    if previous is not None:
        servers[SERVER_NAME] = previous
        return
    del servers[SERVER_NAME]
    had_table = before is not None and hasattr(before, "get") and table in before
    if not servers and not had_table:
        del doc[table]


def drop_new_trust(doc: Any, hooks_file: str, before: Any) -> None:
    """Codex: remove ``hooks.state`` entries for ``hooks_file`` that install's trust step added."""
    hooks: Any = doc.get("hooks") if hasattr(doc, "get") else None
    state: Any = hooks.get("state") if hasattr(hooks, "get") else None
    if not hasattr(state, "keys"):
        return
    old_hooks: Any = before.get("hooks") if hasattr(before, "get") else None
    old_state: Any = old_hooks.get("state") if hasattr(old_hooks, "get") else None
    old_keys = set(old_state.keys()) if hasattr(old_state, "keys") else set()
    for key in list(state.keys()):
        if str(key).startswith(f"{hooks_file}:") and key not in old_keys:
            del state[key]
    if not state and not old_keys:
        del hooks["state"]
    if not hooks:
        del doc["hooks"]


def set_codex_grace(doc: Any) -> int | None:
    """Codex: add our MCP startup grace when the person set none; returns theirs otherwise."""
    theirs = doc.get(CODEX_GRACE_KEY) if hasattr(doc, "get") else None
    if theirs is not None:
        return theirs if isinstance(theirs, int) else None
    doc[CODEX_GRACE_KEY] = CODEX_GRACE_MS  # tomlkit puts a plain key before the first table
    return None


def reset_codex_grace(doc: Any, before: Any) -> None:
    """Codex: take out the startup grace install added (only when it was not there before)."""
    if not hasattr(doc, "get") or doc.get(CODEX_GRACE_KEY) != CODEX_GRACE_MS:
        return
    if before is None or not hasattr(before, "get") or CODEX_GRACE_KEY in before:
        return  # no record of the file before install, or the person had it: leave it
    del doc[CODEX_GRACE_KEY]
