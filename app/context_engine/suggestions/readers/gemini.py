"""Gemini CLI chats: ``<root>/tmp/<sha256 or slug>/chats/session-*.json[l]`` (transcripts.md §6)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ... import bounded_json
from ..model import ReadResult, SessionFile, UserTurn
from ..roots import SourceRoots
from . import _io
from ._io import as_str, iter_jsonl, list_dir, same_path, stat_mtime_ns

SOURCE = "gemini"


def project_hash(root: Path) -> str:
    """Legacy directory id and every chat's ``projectHash``: sha256 of the root path."""
    return hashlib.sha256(str(root).encode("utf-8")).hexdigest()


def _parts_text(content: Any) -> str:
    """Join the ``text`` parts of a PartListUnion (string, part, or list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return as_str(content.get("text"))
    if isinstance(content, list):
        return "\n".join(t for t in (_parts_text(p) for p in content) if t)
    return ""


def message_text(message: dict[str, Any]) -> str | None:
    """Typed text of a ``type == "user"`` message: ``displayContent``, else ``content``."""
    if message.get("type") != "user":
        return None
    shown = message.get("displayContent")
    text = _parts_text(shown) if shown else _parts_text(message.get("content"))
    return text.strip() or None


def _messages(data: bytes, jsonl: bool, result: ReadResult) -> list[dict[str, Any]]:
    if not jsonl:
        try:
            doc = bounded_json.loads(data.decode("utf-8-sig"), max_depth=_io.TRANSCRIPT_DEPTH)
        except (ValueError, RecursionError):  # RecursionError: absurdly nested JSON
            result.corrupt_lines += 1
            return []
        raw = doc.get("messages") if isinstance(doc, dict) else None
        return [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
    by_id: dict[str, dict[str, Any]] = {}
    for _number, value, ok in iter_jsonl(data):
        if not ok or not isinstance(value, dict):
            result.corrupt_lines += 1
            continue
        if "type" not in value or "id" not in value:
            continue  # header and ``$set`` patch lines
        by_id[str(value["id"])] = value  # a re-recorded message replaces the earlier copy
    return list(by_id.values())


def read_session(session: SessionFile) -> ReadResult:
    """Real user turns of one chat file (either generation)."""
    result = ReadResult()
    data = _io.session_bytes(session, result)
    if data is None:
        return result
    for message in _messages(data, session.path.suffix == ".jsonl", result):
        text = message_text(message)
        if text:
            result.turns.append(UserTurn(SOURCE, session.session_id, text))
    return result


def _marker(directory: Path) -> str:
    try:
        return _io.read_bytes(directory / ".project_root").decode("utf-8-sig").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _registry_slug(gemini: Path, root: Path) -> str:
    try:
        doc = bounded_json.loads(_io.read_bytes(gemini / "projects.json").decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return ""
    projects = doc.get("projects") if isinstance(doc, dict) else None
    if not isinstance(projects, dict):
        return ""
    for key, slug in projects.items():
        if isinstance(key, str) and same_path(key, root) and isinstance(slug, str):
            return slug
    return ""


def project_dirs(gemini: Path, root: Path) -> list[Path]:
    """The workspace's ``tmp/<id>`` directories: hash, registry slug, or ``.project_root``."""
    tmp = gemini / "tmp"
    wanted = {project_hash(root)}
    slug = _registry_slug(gemini, root)
    if slug and "/" not in slug and "\\" not in slug and slug not in (".", ".."):
        wanted.add(slug)
    dirs: list[Path] = []
    for entry in list_dir(tmp):
        if not entry.is_dir(follow_symlinks=False):
            continue
        path = Path(entry.path)
        # The marker is only read for directories whose name does not already decide.
        if entry.name in wanted or same_path(_marker(path), root):
            dirs.append(path)
    return dirs


def find_sessions(state: Path, root: Path, roots: SourceRoots) -> list[SessionFile]:
    """``chats/session-*.json`` and ``.jsonl`` of the workspace's project directories."""
    found: list[SessionFile] = []
    for directory in project_dirs(roots.gemini, root):
        for entry in list_dir(directory / "chats"):
            name = entry.name
            if not name.startswith("session-") or not name.endswith((".json", ".jsonl")):
                continue
            mtime = stat_mtime_ns(entry)
            if mtime is not None:
                stem = name.rsplit(".", 1)[0]
                found.append(SessionFile(SOURCE, stem, entry.path, mtime, read_session))
    return found
