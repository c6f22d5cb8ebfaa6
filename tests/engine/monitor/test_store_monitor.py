"""The store monitor: what changed since a token, or "unknown"; cold turns that trust it.

The monitor's answers are checked against the kernel's events for every kind of change (create,
delete, rename, atomic replace, an in-place same-size edit with the mtime set back) and for
every reason it must say "unknown" (another instance, a token older than the watch, an overflow,
a directory moved or replaced, a network filesystem). A cold turn with the monitor up makes no
``lstat`` per fact file and answers as a full read; with the monitor gone, stale or disabled it
walks the stores as before. Process tests: the monitor spawned detached, two racing (one
stays), idle exit, SIGKILL with its socket left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from context_engine.facts.dir_watch import DirWatch, Drained
from context_engine.facts.fs import FS, store_lock
from context_engine.facts.memory import Memory
from context_engine.facts.probe import Probe
from context_engine.facts.stat_listing import scan_listing
from context_engine.hooks.runner import handle
from context_engine.monitor import client, server
from context_engine.paths import EnginePaths
from context_engine.recall import quiet
from support.monitor import Monitors, alive, wait_gone
from support.store import settle_all

PROMPT = "why does the docker release build time out?"


@pytest.fixture()
def monitors(monkeypatch: pytest.MonkeyPatch) -> Iterator[Monitors]:
    found = Monitors(monkeypatch)
    try:
        yield found
    finally:
        found.close()


@pytest.fixture()
def watch() -> Iterator[server.Monitor]:
    opened = DirWatch.open()
    if opened is None:
        pytest.skip("no inotify here")
    monitor = server.Monitor(opened)
    yield monitor
    opened.close()


def _fact(store: Path, name: str, body: str) -> None:
    from support.index import raw_fact

    store.mkdir(parents=True, exist_ok=True)
    (store / f"{name}.md").write_bytes(raw_fact(name, body))


# -- the monitor's answers ---------------------------------------------------------------------


def test_every_kind_of_change_is_named_since_the_token(
    watch: server.Monitor, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    for name in ("edited", "gone", "moved", "replaced", "kept"):
        _fact(store, name, f"Body of {name}.")
    first = watch.answer([str(store)], None)
    assert first["dirs"] == [None]  # nothing known before the watch: the caller walks
    token = first["token"]
    assert watch.answer([str(store)], token)["dirs"] == [[]]

    edited = store / "edited.md"
    before = os.stat(edited)
    data = edited.read_bytes()
    with open(edited, "r+b") as handle_:
        handle_.write(data.replace(b"Body", b"BODY"))  # same size, same inode
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns))
    (store / "gone.md").unlink()
    os.rename(store / "moved.md", store / "moved-away.md")
    (store / ".tmp-x").write_bytes(b"new")
    os.replace(store / ".tmp-x", store / "replaced.md")
    _fact(store, "created", "Body of created.")

    reply = watch.answer([str(store)], token)
    named = set(reply["dirs"][0])
    assert {"edited.md", "gone.md", "moved.md", "moved-away.md", "replaced.md",
            "created.md"} <= named
    assert "kept.md" not in named
    assert watch.answer([str(store)], reply["token"])["dirs"] == [[]]
    assert set(watch.answer([str(store)], token)["dirs"][0]) == named  # older tokens still


def test_the_store_lock_taken_and_released_is_no_change(
    watch: server.Monitor, tmp_path: Path
) -> None:
    """Every write opens ``.lock`` read-write and closes it (IN_CLOSE_WRITE); it is never a
    fact, so it is never named — or every write would look like a change to the other store."""
    store = tmp_path / "store"
    _fact(store, "kept", "Body of kept.")
    token = watch.answer([str(store)], None)["token"]
    with store_lock(FS(), store):
        pass
    with store_lock(FS(), store):
        _fact(store, "written", "Body of written.")
    assert watch.answer([str(store)], token)["dirs"] == [["written.md"]]


def test_a_token_of_another_instance_or_older_than_the_watch_is_unknown(
    watch: server.Monitor, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    token = watch.answer([str(one)], None)["token"]
    _fact(one, "a", "A.")
    reply = watch.answer([str(one), str(two)], token)
    assert reply["dirs"] == [["a.md"], None]  # ``two`` is watched only from now on
    assert watch.answer([str(one)], ["another-instance", token[1]])["dirs"] == [None]
    assert watch.answer([str(one)], [token[0], 10**9])["dirs"] == [None]  # from the future
    assert watch.answer([str(one)], "garbage")["dirs"] == [None]


def test_an_overflow_makes_every_directory_unknown(
    watch: server.Monitor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    token = watch.answer([str(store)], None)["token"]
    real = watch.watch.drain
    monkeypatch.setattr(watch.watch, "drain", lambda: Drained(rescan="queue overflow"))
    reply = watch.answer([str(store)], token)
    monkeypatch.setattr(watch.watch, "drain", real)
    assert reply["dirs"] == [None]
    assert watch.answer([str(store)], reply["token"])["dirs"] == [[]]  # known again after


def test_a_directory_moved_deleted_or_replaced_is_unknown(
    watch: server.Monitor, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    store = state / "memory"
    _fact(store, "a", "A.")
    token = watch.answer([str(store)], None)["token"]
    os.rename(store, tmp_path / "elsewhere")
    _fact(store, "a", "A again.")  # a new directory at the same path
    reply = watch.answer([str(store)], token)
    assert reply["dirs"] == [None]
    # A parent renamed raises no event on the watched directory: its identity tells.
    token = reply["token"]
    os.rename(state, tmp_path / "old-state")
    _fact(store, "b", "B.")
    reply = watch.answer([str(store)], token)
    assert reply["dirs"] == [None]
    token = reply["token"]
    for file in store.iterdir():
        file.unlink()
    store.rmdir()
    assert watch.answer([str(store)], token)["dirs"] == [None]  # deleted: nothing to vouch


def test_a_network_filesystem_is_never_vouched_for(
    watch: server.Monitor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server, "sees_every_change", lambda _path: False)
    token = watch.answer([str(tmp_path)], None)["token"]
    assert watch.answer([str(tmp_path)], token)["dirs"] == [None]


def test_too_many_changed_names_read_as_unknown(
    watch: server.Monitor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server, "MAX_REPLY_NAMES", 3)
    token = watch.answer([str(tmp_path)], None)["token"]
    for i in range(4):
        (tmp_path / f"f{i}.md").write_bytes(b"x")
    assert watch.answer([str(tmp_path)], token)["dirs"] == [None]


# -- the client side ---------------------------------------------------------------------------


def test_disabled_or_not_running_is_no_answer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv(client.ENV, "0")
    assert client.changes_since(str(tmp_path), [str(tmp_path)], None) is None
    assert not (tmp_path / "context-engine").exists()  # disabled: nothing made at all
    monkeypatch.setenv(client.ENV, "1")
    assert client.changes_since(str(tmp_path), [str(tmp_path)], None, start=False) is None


def test_the_socket_directory_is_private_and_refused_when_shared(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    short = Path(tempfile.mkdtemp(prefix="cem-"))  # a socket path has 100 bytes at most
    try:
        runtime = short / "run"
        runtime.mkdir()
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        monkeypatch.setenv("TMPDIR", str(short / "tmp"))
        path = client.socket_path("/some/state")
        assert path is not None and path.startswith(str(runtime / "context-engine"))
        assert (os.stat(runtime / "context-engine").st_mode & 0o777) == 0o700
        os.chmod(runtime / "context-engine", 0o755)  # others may enter: not ours to use
        path = client.socket_path("/some/state")
        assert path is not None and path.startswith(str(short / "tmp" / f"ce-{os.getuid()}"))
        assert client.socket_path("/some/state") != client.socket_path("/other/state")
        monkeypatch.setenv("TMPDIR", str(short / ("x" * 100)))  # too long everywhere
        assert client.socket_path("/some/state") is None
    finally:
        shutil.rmtree(short, ignore_errors=True)


def test_a_probe_patches_the_saved_listing_to_what_a_walk_gives(tmp_path: Path) -> None:
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=tmp_path)
    for name in ("a", "b", "c"):
        _fact(paths.project_store, name, f"{name}.")
    saved = (scan_listing(paths.project_store), scan_listing(paths.global_store))
    (paths.project_store / "a.md").unlink()
    _fact(paths.project_store, "d", "d.")
    os.utime(paths.project_store / "b.md", ns=(1, 1))
    _fact(paths.global_store, "g", "g.")
    probe = Probe(paths)
    probe.asked, probe.answer = True, [{"a.md", "b.md", "d.md", "c.md", ".tmp-x", "MEMORY.md"},
                                       None]
    patched = probe.patched(saved)
    assert patched is not None
    (listings, _), named = patched
    assert listings == (scan_listing(paths.project_store), scan_listing(paths.global_store))
    assert sorted(named) == [(0, "a.md"), (0, "b.md"), (0, "d.md"), (1, "g.md")]
    assert probe.walked  # the global store was listed whole


# -- cold turns that trust it (a monitor in a thread of this process) --------------------------


@pytest.fixture()
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EnginePaths:
    settle_all(monkeypatch)  # every file counts as settled at once (racy rule tested apart)
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    memory = Memory(paths)
    memory.save(name="docker-release", description="Docker release builds",
                body="The docker release build times out when the cache is cold.", type="project")
    memory.save(name="kernel-retry", description="Kernel sockets",
                body="Kernel socket errors need a retry with backoff.", type="project")
    memory.save(name="tabs", description="Style", body="Tabs, not spaces.", type="feedback",
                scope="global")
    return paths


def turn(paths: EnginePaths, prompt: str = PROMPT) -> str:
    event = "UserPromptSubmit" if prompt else "SessionStart"
    data = {"session_id": "s1", "cwd": str(paths.workspace), "hook_event_name": event,
            "prompt": prompt}
    return handle("claude-code", None, json.dumps(data), home=str(paths.home))


def full_turn(paths: EnginePaths, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as patch:
        patch.setattr(quiet, "open_quiet", lambda *_args, **_kw: None)
        return turn(paths)


class _StoreCalls:
    """``lstat``/``stat``/``listdir``/``scandir`` calls on the stores' entries."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, paths: EnginePaths) -> None:
        self.roots = (str(paths.project_store), str(paths.global_store))
        self.calls: list[tuple[str, str]] = []
        for name in ("lstat", "stat", "listdir", "scandir"):
            monkeypatch.setattr(os, name, self._counting(name, getattr(os, name)))

    def _counting(self, name: str, real):  # type: ignore[no-untyped-def]
        def call(path=".", *args, **kwargs):  # type: ignore[no-untyped-def]
            text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
            if "dir_fd" in kwargs or not isinstance(path, (str, bytes, os.PathLike)):
                self.calls.append((name, text))  # relative to an open store directory
            elif text.startswith(self.roots) and text not in self.roots:
                self.calls.append((name, text))
            return real(path, *args, **kwargs)

        return call


def test_a_quiet_turn_with_the_monitor_lstats_no_fact_file(
    paths: EnginePaths, monitors: Monitors, monkeypatch: pytest.MonkeyPatch
) -> None:
    monitors.thread(paths.state)
    turn(paths)  # unknown to the monitor: walks, saves the state with the token
    turn(paths)
    with monkeypatch.context() as patch:
        calls = _StoreCalls(patch, paths)
        quiet_answer = turn(paths)
    assert calls.calls == []
    assert quiet_answer == full_turn(paths, monkeypatch)
    # Without it, the same turn lists every file (what the monitor saves).
    with monkeypatch.context() as patch:
        patch.setenv(client.ENV, "0")
        calls = _StoreCalls(patch, paths)
        assert turn(paths) == quiet_answer
    assert len(calls.calls) >= 3


def test_a_write_to_one_store_writes_nothing_of_the_other_stores_state(
    paths: EnginePaths, monitors: Monitors
) -> None:
    """Both stores are locked for a write (S4.11); the one not written keeps its writer state
    as it was, not a commit per write for the lock's own events."""
    from context_engine.facts.write_state import state_path

    monitors.thread(paths.state)
    memory = Memory(paths)
    memory.save(name="home-fact", body="global body", scope="global")
    memory.save(name="first", body="project body")  # the monitor's token saved for both
    memory.save(name="second", body="project body")
    global_state = Path(state_path(paths, "global"))
    before = [(p.name, p.stat().st_mtime_ns, p.stat().st_size)
              for p in sorted(global_state.parent.glob(global_state.name + "*"))]
    for n in range(3):
        Memory(paths).save(name=f"later-{n}", body="project body")
    after = [(p.name, p.stat().st_mtime_ns, p.stat().st_size)
             for p in sorted(global_state.parent.glob(global_state.name + "*"))]
    assert after == before
    assert "(later-2.md)" in (paths.project_store / "MEMORY.md").read_text()


@pytest.mark.slow
def test_a_change_is_read_from_the_named_file_only(
    paths: EnginePaths, monitors: Monitors, monkeypatch: pytest.MonkeyPatch
) -> None:
    monitors.thread(paths.state)
    prompt = "zebra quokka ocelots"
    turn(paths, prompt)
    assert "memory-recall" not in turn(paths, prompt)
    target = paths.project_store / "kernel-retry.md"
    before = os.stat(target)
    data = target.read_bytes()
    edited = data.replace(b"Kernel socket errors", b"Zebra quokka ocelots")  # same size
    with open(target, "r+b") as handle_:
        handle_.write(edited)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    with monkeypatch.context() as patch:
        calls = _StoreCalls(patch, paths)
        changed = turn(paths, prompt)
        assert {p for _, p in calls.calls} == {str(target)}
        calls.calls.clear()
        again = turn(paths, prompt)
        assert calls.calls == []  # the new state records the token it was validated after
    assert "Zebra quokka ocelots need a retry" in changed
    with monkeypatch.context() as patch:
        patch.setattr(quiet, "open_quiet", lambda *_args, **_kw: None)
        assert changed == again == turn(paths, prompt)


def test_a_walk_without_the_monitor_keeps_the_token_for_the_next_turn(
    paths: EnginePaths, monitors: Monitors, monkeypatch: pytest.MonkeyPatch
) -> None:
    monitors.thread(paths.state)
    turn(paths)
    turn(paths)  # the state saved with the token
    _fact(paths.project_store, "fresh-note", "A fresh docker release note.")
    turn(paths)  # brought up by the monitor's word: the listing's digest is not made
    with monkeypatch.context() as patch:
        patch.setenv(client.ENV, "0")  # a process without the monitor walks and saves
        walked = turn(paths)
    with monkeypatch.context() as patch:
        calls = _StoreCalls(patch, paths)
        vouched = turn(paths)
    assert calls.calls == []  # the token survived the walk: not one lstat
    assert vouched == walked == full_turn(paths, monkeypatch)


def test_a_store_the_monitor_cannot_watch_costs_no_write_per_turn(
    tmp_path: Path, monitors: Monitors, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    Memory(paths).save(name="tabs", description="Style", body="Tabs, not spaces, in docker.",
                       type="feedback", scope="global")
    shutil.rmtree(paths.project_store, ignore_errors=True)
    assert not paths.project_store.exists()  # no project fact yet: nothing to watch there
    monitors.thread(paths.state)
    turn(paths)
    turn(paths)  # records the token (the global store walked once)
    from context_engine.recall.persist import recall_cache_path

    state_dir = recall_cache_path(paths).parent

    def files() -> dict[str, tuple[int, int]]:
        return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in state_dir.iterdir()}

    before = files()
    with monkeypatch.context() as patch:
        calls = _StoreCalls(patch, paths)
        quiet_answer = turn(paths)
    assert files() == before  # no state written for a store that stays unknown
    assert calls.calls == []
    assert quiet_answer == full_turn(paths, monkeypatch)


@pytest.mark.slow
def test_readers_fall_back_when_the_monitor_is_gone_or_its_socket_stale(
    paths: EnginePaths, monitors: Monitors, monkeypatch: pytest.MonkeyPatch
) -> None:
    monitors.thread(paths.state)
    turn(paths)
    turn(paths)
    client.stop(str(paths.state))
    for runner in monitors.threads:
        runner.join(5)
    sock = client.socket_path(str(paths.state))
    assert sock is not None
    stale = server._socket.socket(server._socket.AF_UNIX, server._socket.SOCK_STREAM)
    stale.bind(sock)  # bound, never listening: a connect is refused, as after a SIGKILL
    try:
        monkeypatch.setattr(client, "spawn", lambda _state: None)
        Memory(paths).save(name="kernel-retry", description="Kernel sockets",
                           body="Kernel socket errors now page the on-call docker release.",
                           type="project")
        with monkeypatch.context() as patch:
            calls = _StoreCalls(patch, paths)
            out = turn(paths)
        assert "page the on-call" in out
        assert len(calls.calls) >= 3  # walked, as without a monitor
    finally:
        stale.close()


# -- processes ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_spawned_monitor_is_detached_and_holds_no_pipe(
    paths: EnginePaths, monitors: Monitors
) -> None:
    hook = [sys.executable, "-m", "context_engine.hooks", "claude-code", "UserPromptSubmit"]
    payload = json.dumps({"session_id": "s", "cwd": str(paths.workspace),
                          "hook_event_name": "UserPromptSubmit", "prompt": PROMPT})
    env = monitors.env(REASONIX_HOME=str(paths.home), CONTEXT_ENGINE_HOOK_RELAY="0")
    # capture_output waits for EOF on the pipes: an inherited pipe would hang it.
    out = subprocess.run(hook, input=payload.encode(), capture_output=True, env=env, timeout=60,
                         check=True)
    assert b"memory" in out.stdout
    pid = monitors.wait_up(paths.state)
    fds = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    assert {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in ("0", "1", "2")} == {"/dev/null"}
    assert not any(link.startswith("pipe:") for link in fds)
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle_:
        fields = handle_.read().split(") ")[-1].split()
    assert int(fields[3]) == pid  # its own session
    with open(f"/proc/{pid}/status", encoding="ascii") as handle_:
        rss = next(line for line in handle_ if line.startswith("VmRSS"))
    assert int(rss.split()[1]) < 40_000  # kB: it imports none of the engine's heavy parts


@pytest.mark.slow
def test_two_monitors_racing_to_start_leave_one(monitors: Monitors, tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    started = [client.spawn(state) for _ in range(3)]
    monitors.pids.update(pid for pid in started if pid is not None)
    survivor = monitors.wait_up(state)
    assert survivor in started
    for pid in started:
        if pid != survivor:
            assert wait_gone(pid, 20.0)
    assert alive(survivor)


@pytest.mark.slow
def test_a_monitor_exits_when_idle(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    found = Monitors(monkeypatch, idle=0.5)
    try:
        pid = found.spawn(tmp_path)
        assert wait_gone(pid, 20.0)
        assert client.status(str(tmp_path)) is None
    finally:
        found.close()


def test_a_monitor_exits_when_its_state_root_is_removed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A demo's or a test's temporary home: the monitor must not outlive it by its idle time.
    found = Monitors(monkeypatch, idle=600.0)
    state = tmp_path / "home"
    store = state / "memory"
    _fact(store, "one", "a body")
    try:
        pid = found.spawn(state)
        assert client.changes_since(str(state), [str(store)], None, start=False) is not None
        import shutil

        shutil.rmtree(state)
        assert wait_gone(pid, 20.0)
    finally:
        found.close()


@pytest.mark.slow
def test_a_killed_monitor_leaves_readers_correct_and_is_replaced(
    paths: EnginePaths, monitors: Monitors, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid = monitors.spawn(paths.state)
    turn(paths)
    turn(paths)
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10.0)
    sock = client.socket_path(str(paths.state))
    assert sock is not None and os.path.exists(sock)  # left behind
    Memory(paths).save(name="kernel-retry", description="Kernel sockets",
                       body="Kernel socket errors now page the on-call docker release.",
                       type="project")
    out = turn(paths)  # refused: walks, and starts a new monitor
    assert "page the on-call" in out
    replaced = monitors.wait_up(paths.state)
    assert replaced != pid
    turn(paths)
    assert turn(paths) == full_turn(paths, monkeypatch)


# A fresh hook process counting its own calls on the stores' entries.
COUNTING_HOOK = r"""
import json, os, sys
from context_engine.facts import derived_index, stat_listing, store
derived_index.RACY_NS = store.RACY_NS = stat_listing.RACY_NS = -(10**18)
roots = (sys.argv[1], sys.argv[2])
calls = []
def counting(name, real):
    def call(path=".", *args, **kwargs):
        text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
        if "dir_fd" in kwargs or (text.startswith(roots) and text not in roots):
            calls.append(name)
        return real(path, *args, **kwargs)
    return call
for name in ("lstat", "stat", "listdir", "scandir"):
    setattr(os, name, counting(name, getattr(os, name)))
from context_engine.hooks.runner import handle
out = handle("claude-code", None, sys.stdin.read(), home=sys.argv[3])
print(json.dumps({"calls": len(calls), "out": out}))
"""


@pytest.mark.slow
def test_a_quiet_hook_process_with_the_monitor_up_lstats_no_fact_file(
    paths: EnginePaths, monitors: Monitors
) -> None:
    for i in range(30):
        _fact(paths.project_store, f"extra-{i}", f"Extra body {i}.")
    monitors.spawn(paths.state)
    payload = json.dumps({"session_id": "s", "cwd": str(paths.workspace),
                          "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}).encode()

    def hook(**extra: str) -> dict[str, object]:
        out = subprocess.run(
            [sys.executable, "-c", COUNTING_HOOK, str(paths.project_store),
             str(paths.global_store), str(paths.home)],
            input=payload, capture_output=True, env=monitors.env(**extra), timeout=120,
            check=True,
        )
        return dict(json.loads(out.stdout))

    hook()  # walks (the monitor knows nothing yet), saves the state and the token
    quiet_turn = hook()
    assert quiet_turn["calls"] == 0
    walked = hook(CONTEXT_ENGINE_MONITOR="0")
    assert int(str(walked["calls"])) >= 33  # one per fact file, without the monitor
    assert walked["out"] == quiet_turn["out"]


@pytest.mark.slow  # whole processes
def test_read_only_commands_with_the_monitor_write_nothing_in_the_home(
    monitors: Monitors, tmp_path: Path
) -> None:
    from support.index import raw_fact

    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    paths = EnginePaths.resolve(home=home, workspace=ws, root=ws)
    paths.project_store.mkdir(parents=True)
    (paths.project_store / "release.md").write_bytes(
        raw_fact("release", "Release from main docker build.", description="Release")
    )

    def tree() -> dict[str, tuple[int, int]]:
        found = {}
        for dirpath, dirs, files in os.walk(tmp_path):
            for name in [*dirs, *files]:
                st = os.lstat(os.path.join(dirpath, name))
                found[os.path.join(dirpath, name)] = (st.st_mtime_ns, st.st_size)
        return found

    before = tree()
    exe = str(Path(sys.executable).parent / "context-engine")
    base = [exe, "--home", str(home), "--workspace", str(ws)]
    for args in (["search", "docker"], ["--json", "list"], ["read", "release"], ["memory"],
                 ["search", "release"]):
        subprocess.run([*base, *args], check=True, capture_output=True, env=monitors.env(),
                       timeout=120)
    monitors.wait_up(paths.state)  # started by the first read, and asked by the others
    assert tree() == before
    assert not str(client.socket_path(str(paths.state))).startswith(str(tmp_path))
