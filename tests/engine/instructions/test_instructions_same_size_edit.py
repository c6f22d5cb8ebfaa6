"""An in-place, same-size edit with the mtime put back is still an instruction change."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from context_engine.engine import ContextEngine
from context_engine.facts.stat_listing import RACY_NS
from context_engine.hooks.runner import handle
from context_engine.instructions import changed_labels, changed_paths, resolve_instructions
from context_engine.paths import EnginePaths

OLD = "Deploy from branch main-v1 only.\n"
NEW = "Deploy from branch main-v2 only.\n"  # same length: only ctime can tell


def edit_keeping_mtime(path: Path, text: str) -> None:
    """Rewrite ``path`` in place (same inode) and restore its mtime, as ``touch -r`` does."""
    before = os.stat(path)
    assert len(text.encode()) == before.st_size
    with open(path, "r+", encoding="utf-8") as handle_:
        handle_.write(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns
    )


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "proj"
    (ws / ".git").mkdir(parents=True)
    return ws


def names() -> list[str]:
    return ["REASONIX.md", "AGENTS.md", "CLAUDE.md", "CLAUDE.local.md", "docs/imported.md"]


def _layout(ws: Path, name: str) -> Path:
    target = ws / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(OLD, encoding="utf-8")
    if name == "docs/imported.md":
        (ws / "AGENTS.md").write_text("@docs/imported.md\n", encoding="utf-8")
    return target


@pytest.mark.parametrize("name", names())
def test_changed_labels_see_a_same_size_edit_with_mtime_restored(
    workspace: Path, tmp_path: Path, name: str
) -> None:
    target = _layout(workspace, name)
    res = resolve_instructions(EnginePaths.resolve(home=tmp_path / "home", workspace=workspace))
    assert changed_labels(res) == ()
    edit_keeping_mtime(target, NEW)
    assert changed_labels(res) == (f"workspace/{name}",)


def test_a_racy_identity_is_compared_by_content(workspace: Path, tmp_path: Path) -> None:
    """Read within the racy window, a file is compared by bytes: an identity that a coarse
    clock kept whole (here: the new ctime written back into the stamp) proves nothing."""
    target = _layout(workspace, "AGENTS.md")  # just written: racy when read
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    res = resolve_instructions(paths)
    assert changed_labels(res) == ()  # same bytes: unchanged
    edit_keeping_mtime(target, NEW)
    stamp = dict(res.watched)[target]
    assert stamp is not None
    kept = stamp._replace(ctime_ns=os.stat(target).st_ctime_ns)
    forged = replace(res, watched=((target, kept),))
    assert changed_paths(forged) == (target,)
    # The same identity read long after its last change is trusted without a read.
    settled = kept._replace(read_ns=kept.ctime_ns + 2 * RACY_NS)
    assert changed_paths(replace(res, watched=((target, settled),))) == ()


def test_a_settled_unchanged_file_is_not_read(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _layout(workspace, "AGENTS.md")
    res = resolve_instructions(EnginePaths.resolve(home=tmp_path / "home", workspace=workspace))
    stamp = dict(res.watched)[target]
    assert stamp is not None  # as if read long after the file's last change:
    res = replace(res, watched=((target, stamp._replace(read_ns=stamp.ctime_ns + 2 * RACY_NS)),))
    from context_engine.instructions import watch

    def no_read(*_: object) -> bytes:
        raise AssertionError("a settled identity was re-read")

    monkeypatch.setattr(watch, "_bytes_now", no_read)
    assert changed_paths(res) == ()


def test_next_session_turn_notes_the_edit(workspace: Path, tmp_path: Path) -> None:
    target = _layout(workspace, "AGENTS.md")
    engine = ContextEngine.open(workspace=workspace, home=tmp_path / "home")
    session = engine.start_session("headless")
    assert "main-v1" in session.stable_prefix
    edit_keeping_mtime(target, NEW)
    turn = session.process_user_turn("hello there")
    assert "standing instructions workspace/AGENTS.md changed" in turn.notes
    assert "main-v2" in turn.notes
    engine.close()


def test_next_hook_turn_notes_the_edit(workspace: Path, tmp_path: Path) -> None:
    target = _layout(workspace, "CLAUDE.md")
    home = str(tmp_path / "home")

    def call(event: str, prompt: str = "") -> str:
        data = {"session_id": "s-1", "cwd": str(workspace), "hook_event_name": event}
        data.update({"source": "startup"} if event == "SessionStart" else {"prompt": prompt})
        return handle("claude-code", None, json.dumps(data), home=home, with_instructions=True)

    assert "main-v1" in call("SessionStart")
    edit_keeping_mtime(target, NEW)
    out = json.loads(call("UserPromptSubmit", "what now"))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "standing instructions workspace/CLAUDE.md changed" in context
    assert "main-v2" in context
    assert json.loads(call("UserPromptSubmit", "and again")) == {}
