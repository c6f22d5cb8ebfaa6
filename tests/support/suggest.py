"""Build a throwaway home with the four agents' session folders for suggestion tests (S11)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from context_engine.paths import EnginePaths, workspace_slug
from context_engine.suggestions.roots import SourceRoots

DATA = Path(__file__).resolve().parents[1] / "engine" / "data" / "sessions"
FORMATS = ("reasonix", "claude-code", "codex", "gemini")
ZH = "以后请始终用中文回复，除非我明确要求英文。"
EN = "Always run the linters before you commit."


@dataclass
class Home:
    """Paths of one fake machine: state root, workspace root and the agents' roots."""

    base: Path
    root: Path
    paths: EnginePaths
    roots: SourceRoots


def make_home(base: Path, root_name: str = "proj") -> Home:
    """A fresh state root and workspace under ``base`` (agents' roots not created yet)."""
    root = base / "work" / root_name
    (root / ".git").mkdir(parents=True, exist_ok=True)
    state = base / "reasonix-home"
    state.mkdir(parents=True, exist_ok=True)
    paths = EnginePaths(home=state, state=state, workspace=root, root=root)
    roots = SourceRoots(
        state=None, claude=base / "claude", codex=base / "codex", gemini=base / "gemini"
    )
    return Home(base, root, paths, roots)


def session_dir(
    home: Home, fmt: str, root: Path | None = None, *, gemini_slug: bool = False
) -> Path:
    """Where ``fmt`` keeps sessions of ``root`` (default: the home's workspace)."""
    root = root or home.root
    if fmt == "reasonix":
        return home.paths.state / "projects" / workspace_slug(root) / "sessions"
    if fmt == "claude-code":
        return home.roots.claude / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(root))
    if fmt == "codex":
        return home.roots.codex / "sessions" / "2026" / "08" / "01"
    if gemini_slug:
        slug = re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", root.name.lower())).strip("-")
        project = home.roots.gemini / "tmp" / slug
        project.mkdir(parents=True, exist_ok=True)
        (project / ".project_root").write_text(str(root), encoding="utf-8")
        return project / "chats"
    return home.roots.gemini / "tmp" / hashlib.sha256(str(root).encode()).hexdigest() / "chats"


def _fill(text: str, root: Path) -> str:
    return text.replace("@ROOT@", str(root)).replace(
        "@HASH@", hashlib.sha256(str(root).encode()).hexdigest()
    )


def install(
    home: Home, fmt: str, source: Path | None = None, root: Path | None = None, mtime: float = 0
) -> list[Path]:
    """Copy the fixture files of ``fmt`` into place for ``root``; returns the files written."""
    root = root or home.root
    source = source or DATA / fmt
    target = session_dir(home, fmt, root)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for item in sorted(source.iterdir()):
        if item.is_file():
            dest = target / item.name
            dest.write_text(_fill(item.read_text(encoding="utf-8"), root), encoding="utf-8")
            if mtime:
                os.utime(dest, (mtime, mtime))
            written.append(dest)
    return written


def write_session(home: Home, fmt: str, session: str, texts: list[str], *, root: Path | None = None,
                  mtime: float | None = None) -> Path:
    """A synthetic session of ``fmt`` whose real user turns are ``texts``."""
    root = root or home.root
    target = session_dir(home, fmt, root)
    target.mkdir(parents=True, exist_ok=True)
    rows: list[object]
    if fmt == "reasonix":
        path = target / f"{session}.jsonl"
        rows = [{"schema_version": 1}]
        for text in texts:
            rows += [{"role": "user", "content": text}, {"role": "assistant", "content": "Done."}]
    elif fmt == "claude-code":
        path = target / f"{session}.jsonl"
        rows = []
        for i, text in enumerate(texts):
            common = {"cwd": str(root), "sessionId": session, "uuid": f"{session}-{i}"}
            rows += [
                {**common, "type": "user", "message": {"role": "user", "content": text}},
                {**common, "type": "assistant", "message": {"role": "assistant", "content": "ok"}},
            ]
    elif fmt == "codex":
        path = target / f"rollout-2026-08-01T09-30-15-{session}.jsonl"
        rows = [{"type": "session_meta", "payload": {"id": session, "cwd": str(root)}}]
        for text in texts:
            rows.append({"type": "event_msg", "payload": {"type": "user_message", "message": text}})
    else:
        path = target / f"session-2026-08-01T09-30-{session}.json"
        messages = [{"id": f"m{i}", "type": "user", "content": t} for i, t in enumerate(texts)]
        path.write_text(json.dumps({"sessionId": session, "messages": messages}), encoding="utf-8")
        rows = []
    if rows:
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path
