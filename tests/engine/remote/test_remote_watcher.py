"""The server-side watcher: areas by path, debounced pushes, stores created after start."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from context_engine.areas import WatchTargets
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.remote.watcher import ServerWatcher
from support.remote import wait_for

pytestmark = pytest.mark.timeout(30)


def _paths(tmp_path: Path) -> EnginePaths:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    return EnginePaths(home=home, state=home, workspace=root, root=root)


def test_paths_map_to_areas(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    areas = WatchTargets.of(paths)
    assert areas.classify(paths.project_store / "x.md") == "facts"
    assert areas.classify(paths.global_store / ".archive" / "20260101-x.md") == "archive"
    assert areas.classify(paths.project_store / "MEMORY.md") is None
    assert areas.classify(paths.project_store / ".tmp-123") is None
    assert areas.classify(paths.sessions_dir / "a.jsonl") == "sessions"
    assert areas.classify(paths.workspace_data / "recall" / "recall-last.json") == "traces"
    assert areas.classify(paths.root / "AGENTS.md") == "instructions"
    assert areas.classify(paths.root / "src" / "main.py") is None
    # Missing stores are watched through an ancestor inside the state root, never above it.
    roots = dict(areas.roots())
    assert roots.get(paths.state) is True
    assert all(paths.state in (p, *p.parents) or p == paths.root for p in roots)


STORE_NOISE = ("x.md.partial", "notes.txt", "sub/x.md", ".tmp-1.md", "MEMORY.md", "x.md.lock")


def test_the_server_pushes_no_facts_change_for_what_the_app_ignores(tmp_path: Path) -> None:
    """The drift: the server pushed ``facts`` for ``x.md.partial``, ``notes.txt`` and
    ``sub/x.md``, which the app ignores, so remote windows reloaded for nothing. One classifier
    (``context_engine/areas.py``) now serves the server's watcher and the app's bridge."""
    paths = _paths(tmp_path)
    pushed: list[list[str]] = []
    watcher = ServerWatcher(paths, pushed.append)
    for noise in STORE_NOISE:
        assert (noise, watcher.areas.classify(paths.project_store / noise)) == (noise, None)
    assert watcher.areas.classify(paths.project_store / "x.md") == "facts"
    watcher.saw(paths.project_store / n for n in STORE_NOISE)
    assert pushed == []


def test_a_store_created_after_start_is_still_reported(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    seen: list[list[str]] = []
    lock = threading.Lock()

    def notify(areas: list[str]) -> None:
        with lock:
            seen.append(areas)

    watcher = ServerWatcher(paths, notify, debounce=0.05, max_wait=0.3)
    watcher.start()
    try:
        Memory(paths).save(name="first", description="d", body="b", type="project")
        assert wait_for(lambda: any("facts" in a for a in seen), timeout=10)
        (paths.root / "AGENTS.md").write_text("# rules\n", encoding="utf-8")
        assert wait_for(lambda: any("instructions" in a for a in seen), timeout=10)
    finally:
        watcher.stop()
