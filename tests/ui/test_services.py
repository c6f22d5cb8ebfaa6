"""Task manager, watcher bridge and hub: results on the GUI thread, debounce, ignores."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from context_center.services.hub import ChangeSet, Hub
from context_center.services.tasks import Op, TaskManager
from context_center.services.watcher import FileWatcher, WatchTargets, is_ignored


@pytest.fixture
def tasks(qtbot):
    manager = TaskManager()
    yield manager
    manager.shutdown()


def test_success_callback_runs_on_gui_thread(qtbot, tasks):
    seen: dict[str, object] = {}
    gui = threading.current_thread()

    def work(token):
        seen["worker"] = threading.current_thread()
        return 42

    def done(value):
        seen["value"] = value
        seen["callback"] = threading.current_thread()

    tasks.read(Op("answer", work, on_success=done))
    qtbot.waitUntil(lambda: "value" in seen, timeout=3000)
    assert seen["value"] == 42
    assert seen["callback"] is gui
    assert seen["worker"] is not gui


def test_failure_callback_gets_the_exception(qtbot, tasks):
    errors: list[BaseException] = []

    def work(token):
        raise ValueError("boom")

    tasks.write(Op("fail", work, on_failure=errors.append))
    qtbot.waitUntil(lambda: bool(errors), timeout=3000)
    assert isinstance(errors[0], ValueError)


def test_writer_is_serial(qtbot, tasks):
    order: list[int] = []
    active = []

    def make(i):
        def work(token):
            active.append(i)
            assert len(active) == 1
            time.sleep(0.01)
            active.remove(i)
            return i

        return work

    for i in range(5):
        tasks.write(Op(f"w{i}", make(i), on_success=order.append))
    qtbot.waitUntil(lambda: len(order) == 5, timeout=5000)
    assert order == [0, 1, 2, 3, 4]


def test_cancelled_op_never_calls_back(qtbot, tasks):
    started = threading.Event()
    release = threading.Event()
    calls: list[object] = []

    def slow(token):
        started.set()
        release.wait(5)
        token.check()
        return "late"

    op = tasks.read(Op("slow", slow, on_success=calls.append, on_failure=calls.append, long=True))
    assert started.wait(5)
    with qtbot.waitSignal(tasks.finished, timeout=3000):
        op.cancel()
        release.set()
    assert calls == []
    assert tasks.pending == ()


def test_ignored_names():
    assert is_ignored(".tmp-abc.partial")
    assert is_ignored(".lock")
    assert is_ignored("x.md.partial")
    assert not is_ignored("release-target.md")


def test_classify(tmp_path: Path):
    store = tmp_path / "memory"
    targets = WatchTargets([store], [tmp_path / "ws"], [tmp_path / "sessions"])
    assert targets.classify(str(store / "a.md")) == "facts"
    assert targets.classify(str(store / ".tmp-1.partial")) is None
    assert targets.classify(str(store / ".lock")) is None
    assert targets.classify(str(store / ".archive" / "x.md")) == "archive"
    assert targets.classify(str(store / ".revisions" / "id" / "000000001.md")) == "archive"
    assert targets.classify(str(tmp_path / "sessions" / "s.jsonl")) == "sessions"
    assert targets.classify(str(tmp_path / "ws" / "AGENTS.md")) == "instructions"
    assert targets.classify(str(tmp_path / "ws" / "notes.md")) is None


def _watching(tmp_path: Path) -> tuple[Path, FileWatcher, list[ChangeSet]]:
    """A started watcher on a fresh store under ``tmp_path`` and the changes it delivers."""
    store = tmp_path / "memory"
    store.mkdir()
    watcher = FileWatcher(WatchTargets([store], [], [], boundaries=[tmp_path]))
    received: list[ChangeSet] = []
    watcher.changed.connect(received.append)
    watcher.start()
    return store, watcher, received


@pytest.mark.slow
def test_watcher_debounces_atomic_replace_into_one_change(qtbot, tmp_path: Path):
    store, watcher, received = _watching(tmp_path)
    try:
        time.sleep(0.2)  # let inotify arm
        for i in range(5):  # five atomic saves in a burst: temp file then os.replace
            tmp = store / f".tmp-{i}.partial"
            tmp.write_text(f"v{i}")
            os.replace(tmp, store / "fact.md")
        (store / ".lock").write_text("")
        qtbot.waitUntil(lambda: bool(received), timeout=3000)
        qtbot.wait(400)
        assert len(received) == 1
        assert received[0].areas == frozenset({"facts"})
    finally:
        watcher.stop()


@pytest.mark.slow
def test_watcher_ignores_temp_and_lock_only_bursts(qtbot, tmp_path: Path):
    store, watcher, received = _watching(tmp_path)
    try:
        time.sleep(0.2)
        (store / ".tmp-x.partial").write_text("x")
        (store / ".lock").write_text("")
        qtbot.wait(600)
        assert received == []
    finally:
        watcher.stop()


def test_overflow_rescans_everything(qtbot, tmp_path: Path):
    watcher = FileWatcher(WatchTargets([tmp_path], [], []))
    with qtbot.waitSignal(watcher.changed, timeout=2000) as blocker:
        watcher.overflow()
    assert blocker.args[0] == ChangeSet.everything()


def test_hub_broadcasts(qtbot):
    hub = Hub()
    with qtbot.waitSignal(hub.changes_applied) as blocker:
        hub.publish(ChangeSet(frozenset({"facts"}), "app"))
    assert blocker.args[0].touches("facts")


def test_failure_without_callback_is_reported(qtbot, tasks):
    def work(token):
        raise OSError("disk gone")

    with qtbot.waitSignal(tasks.unhandled, timeout=3000) as blocker:
        tasks.read(Op("Reading", work))
    assert blocker.args[0].label == "Reading"
    assert isinstance(blocker.args[1], OSError)


def test_the_app_and_the_server_classify_every_path_alike(tmp_path):
    """One classifier for the server's watcher and the app's bridge (context_engine/areas.py)."""
    from context_center.application import watch_targets
    from context_engine.paths import EnginePaths
    from context_engine.remote.watcher import ServerWatcher

    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    paths = EnginePaths(home=tmp_path / "home", state=tmp_path / "home", workspace=root, root=root)
    app, server = watch_targets(paths), ServerWatcher(paths, lambda areas: None).areas
    store = paths.project_store
    for path in (store / "x.md", store / "x.md.partial", store / "notes.txt", store / "sub/x.md",
                 store / ".archive" / "x.md", paths.sessions_dir / "s.jsonl", root / "AGENTS.md",
                 paths.workspace_data / "recall" / "last.json", root / "src" / "main.py"):
        assert app.classify(path) == server.classify(path), path


def test_our_sqlite_files_in_the_trace_folder_are_nobody_s_change(tmp_path: Path):
    """The derived index written while a first read builds it is not a trace change."""
    data = tmp_path / "context-center"
    targets = WatchTargets([tmp_path / "memory"], [], [], trace_dirs=[data])
    assert targets.classify(str(data / "recall-history.jsonl")) == "traces"
    for name in ("project-facts.v1.sqlite", "project-facts.v1.sqlite-wal",
                 "project-facts.v1.sqlite-shm", "project-facts.v1.sqlite-journal"):
        assert targets.classify(str(data / "index" / name)) is None
    assert not is_ignored("notes.sqlite.md")  # a fact file is never one of ours
