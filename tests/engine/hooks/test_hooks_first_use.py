"""A store with no usable derived state: the hook answers within its budget, honestly.

With no derived index and no recall state (a fresh install, an upgrade that changed their code
tags, damage) a large store cannot be indexed inside an agent's hook timeout. The hook then
hands the build to one detached builder and says, in provider-safe words, that memory recall is
being prepared; builds commit their parses in batches, so a killed one is resumed, never
restarted; a command shows how far a foreground build is.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from context_engine import detached
from context_engine.facts import build_progress, store
from context_engine.facts.codec import render_fact
from context_engine.facts.derived_index import store_index
from context_engine.facts.indexed_read import StoreReader
from context_engine.facts.listing import list_memory
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from context_engine.facts.store import Store, fact_slug
from context_engine.hooks import budget, builder
from context_engine.hooks.runner import handle
from context_engine.paths import EnginePaths
from context_engine.recall.service import RecallService
from support.store import settle_all

ROOT = Path(__file__).resolve().parents[3]
PROMPT = "why does the docker release build time out?"


def write_facts(paths: EnginePaths, count: int) -> None:
    """``count`` project facts written straight to the store (as another program would)."""
    paths.project_store.mkdir(parents=True, exist_ok=True)
    paths.global_store.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        fact = Fact(
            id=f"mem-{i:032x}", revision=1, name=f"docker-release-{i}", title="",
            description=f"Docker release note {i}", type="project", scope="project",
            body=f"The docker release build times out when cache {i} is cold.",
        )
        (paths.project_store / f"{fact_slug(fact.name)}.md").write_bytes(render_fact(fact))


@pytest.fixture()
def paths(tmp_path: Path) -> EnginePaths:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    return EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)


def payload(paths: EnginePaths, prompt: str = PROMPT, session: str = "s1") -> str:
    event = "SessionStart" if not prompt else "UserPromptSubmit"
    return json.dumps({"session_id": session, "cwd": str(paths.workspace),
                       "hook_event_name": event, "prompt": prompt})


def answer(paths: EnginePaths, limit: float, prompt: str = PROMPT, **kw: bool) -> tuple[str, bool]:
    return budget.answer("claude-code", None, payload(paths, prompt), home=str(paths.home),
                         workspace=None, with_instructions=kw.get("with_instructions", False),
                         limit=limit)


def context(out: str) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def no_baseline(paths: EnginePaths) -> bool:
    sessions = paths.workspace_data / "agent-sessions"
    return not sessions.exists() or not any(sessions.iterdir())


@pytest.fixture()
def handed(monkeypatch: pytest.MonkeyPatch) -> list[EnginePaths]:
    """Record hand-offs instead of starting a builder; inline builds up to 10 files a 5 s budget."""
    monkeypatch.setattr(budget, "INLINE_PER_SECOND", 2)
    monkeypatch.setattr(budget, "INLINE_START_PER_SECOND", 2)
    calls: list[EnginePaths] = []
    monkeypatch.setattr(builder, "hand_off", lambda p, _home: calls.append(p) or "started")
    return calls


def test_a_large_store_with_no_state_is_handed_off_at_once_and_never_read(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch, handed: list[EnginePaths]
) -> None:
    write_facts(paths, 30)

    def never(*_a: object, **_k: object) -> None:
        raise AssertionError("the hook read the stores")

    monkeypatch.setattr(RecallService, "_read_stores", never)
    out, left_running = answer(paths, limit=5)
    assert not left_running
    assert context(out) == budget.PREPARING_TURN
    assert handed == [paths]
    assert no_baseline(paths)  # pending notes still ride a later turn


@pytest.mark.slow  # waits out its budget, then for the abandoned worker
def test_over_its_budget_the_hook_answers_without_memory_and_hands_off(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch, handed: list[EnginePaths]
) -> None:
    write_facts(paths, 3)  # small: built inline, but this build never ends
    monkeypatch.setattr(budget, "INLINE_PER_SECOND", 1000)
    release = threading.Event()
    real = RecallService._read_stores

    def stuck(self: RecallService, *args: object) -> object:
        release.wait(30)
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(RecallService, "_read_stores", stuck)
    try:
        out, left_running = answer(paths, limit=0.3)
        assert left_running  # the runner exits at once, leaving the worker behind
        assert context(out) == budget.PREPARING_TURN
        assert handed == [paths]
        assert no_baseline(paths)
    finally:
        release.set()
    time.sleep(0.5)  # the abandoned worker finds the deadline answered and saves no baseline
    assert no_baseline(paths)


@pytest.mark.slow  # waits out its budget
def test_with_no_builder_possible_the_note_says_memory_is_not_available(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_facts(paths, 30)
    monkeypatch.setattr(budget, "INLINE_PER_SECOND", 2)
    monkeypatch.setattr(builder, "hand_off", lambda _p, _home: "unavailable")
    release = threading.Event()
    real = RecallService._read_stores

    def stuck(self: RecallService, *args: object) -> object:
        release.wait(30)
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(RecallService, "_read_stores", stuck)
    try:
        out, left_running = answer(paths, limit=0.3)  # tried inline: no builder can take it
        assert left_running
        assert context(out) == budget.UNAVAILABLE_TURN  # never "being prepared" when it is not
    finally:
        release.set()


def test_a_usable_saved_state_answers_within_the_budget(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch, handed: list[EnginePaths]
) -> None:
    settle_all(monkeypatch)
    write_facts(paths, 30)
    handle("claude-code", None, payload(paths), home=str(paths.home))  # state saved (the builder)
    assert budget.recall_state_usable(paths)
    out, left_running = answer(paths, limit=5)
    assert not left_running and handed == []
    assert context(out).startswith("<memory-recall>")


def test_while_a_builder_runs_hooks_wait_for_it_but_a_usable_state_still_answers(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch, handed: list[EnginePaths]
) -> None:
    settle_all(monkeypatch)
    write_facts(paths, 3)  # small enough to build inline, were no builder running
    fd = builder._open_lock(paths)
    assert fd is not None
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert builder.running(paths)
        out, _ = answer(paths, limit=5)
        assert context(out) == budget.PREPARING_TURN and handed == []
        os.close(fd)
        fd = -1
        handle("claude-code", None, payload(paths), home=str(paths.home))
        fd = builder._open_lock(paths) or -1
        fcntl.flock(fd, fcntl.LOCK_EX)
        out, _ = answer(paths, limit=5)
        assert context(out).startswith("<memory-recall>")
    finally:
        if fd >= 0:
            os.close(fd)


def test_two_hand_offs_at_once_start_one_builder(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    held: list[int] = []

    def fake_spawn(argv: list[str], keep: tuple[int, ...] = ()) -> int:
        held.extend(os.dup(fd) for fd in keep)  # the child's copy of the locked descriptor
        assert argv[0] == "context_engine.hooks.builder"
        return 4242

    monkeypatch.setattr(detached, "spawn", fake_spawn)
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(builder.hand_off(paths, None)))
               for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == ["running"] * 5 + ["started"]
    assert len(held) == 1 and builder.running(paths)
    os.close(held.pop())  # the builder exits: its lock goes with it
    assert not builder.running(paths)
    assert builder.hand_off(paths, None) == "started"
    for fd in held:
        os.close(fd)


def test_the_note_is_provider_safe_and_keeps_the_instructions(
    paths: EnginePaths, handed: list[EnginePaths]
) -> None:
    write_facts(paths, 30)
    (paths.workspace / "AGENTS.md").write_text(f"Build with {paths.home}/bin/make.\n", "utf-8")
    out, _ = answer(paths, limit=5, prompt="", with_instructions=True)
    text = context(out)
    assert text.startswith(budget.PREPARING_START)
    assert "Build with" in text and "make." in text  # the standing instructions, as usual
    turn, _ = answer(paths, limit=5)
    for answered in (out, turn):
        assert str(paths.home) not in answered and str(paths.workspace) not in answered
        assert "/tmp" not in answered and str(Path.home()) not in answered
    assert no_baseline(paths)


def test_a_killed_build_keeps_its_batches_and_the_next_one_resumes(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    write_facts(paths, 60)
    monkeypatch.setattr(store, "_BATCH", 20)
    parsed: list[str] = []
    real = Store._read_entry

    def killed_at_45(self: Store, path: Path, st: os.stat_result) -> object:
        if len(parsed) == 45:
            raise KeyboardInterrupt  # Ctrl+C, or the agent's kill, mid-build
        parsed.append(path.name)
        return real(self, path, st)

    monkeypatch.setattr(Store, "_read_entry", killed_at_45)
    with pytest.raises(KeyboardInterrupt):
        StoreReader(paths, keep_index=True).read()
    kept = store_index(paths, "project").names()
    assert len(kept) == 40  # two batches committed before the kill

    monkeypatch.setattr(Store, "_read_entry", lambda self, path, st: (
        parsed.append(path.name), real(self, path, st))[1])
    parsed.clear()
    facts, _, _ = StoreReader(paths, keep_index=True).read()
    assert set(parsed).isdisjoint(kept)  # resumed: nothing committed is parsed again
    assert len(parsed) == 60 - len(kept)
    assert sorted(f.id for f in facts) == [f"mem-{i:032x}" for i in range(60)]  # none lost


def test_an_interrupted_listing_keeps_its_batches_too(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle_all(monkeypatch)
    write_facts(paths, 60)
    assert store_index(paths, "project", create=True).names() == set()  # made, empty: an
    # upgrade's reset index, which read commands fill
    monkeypatch.setattr(store, "_BATCH", 20)
    real = Store._read_entry
    parsed: list[str] = []

    def counted(self: Store, path: Path, st: os.stat_result) -> object:
        if len(parsed) == 45 and not kill.is_set():
            kill.set()
            raise KeyboardInterrupt
        parsed.append(path.name)
        return real(self, path, st)

    kill = threading.Event()
    monkeypatch.setattr(Store, "_read_entry", counted)
    with pytest.raises(KeyboardInterrupt):
        list_memory(Memory(paths))
    assert len(store_index(paths, "project").names()) == 40
    parsed.clear()
    listed = list_memory(Memory(paths))
    assert len(parsed) == 20 and len(listed.facts) == 60


def test_a_command_shows_how_far_a_first_build_is(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_facts(paths, 30)
    monkeypatch.setattr(store, "_SHOWN_FROM", 10)
    monkeypatch.setattr(build_progress, "_SHOW_AFTER", 0.0)
    StoreReader(paths, keep_index=True).read()
    assert "indexing" not in capsys.readouterr().err  # hooks, hosts, the app: never shown
    store_index(paths, "project").path.unlink()
    monkeypatch.setattr(build_progress, "_ENABLED", threading.Event())
    build_progress.enable()
    StoreReader(paths, keep_index=True).read()
    assert "context-engine: indexing the project store: 30/30" in capsys.readouterr().err


SPAWN_LOG = """
import os
if os.environ.get("CE_TEST_SPAWN_LOG"):
    import context_engine.detached as d
    real = d.spawn
    def spawn(argv, keep=()):
        pid = real(argv, keep)
        with open(os.environ["CE_TEST_SPAWN_LOG"], "a") as f:
            f.write(f"{argv[0]} {pid}\\n")
        return pid
    d.spawn = spawn
"""


@pytest.mark.slow  # two hook processes and a builder: seconds
def test_two_hook_processes_at_once_start_one_builder_and_recall_follows(
    paths: EnginePaths, tmp_path: Path
) -> None:
    write_facts(paths, 1500)  # over what a hook builds inline within 5 s (1,000 files)
    time.sleep(2.2)  # settled (git's racy rule), as a store a person has had for a while
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SPAWN_LOG, "utf-8")
    log = tmp_path / "spawned.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "app")]),
           "CONTEXT_ENGINE_HOOK_RELAY": "0", "CONTEXT_ENGINE_HOOK_BUDGET": "5",
           "CE_TEST_SPAWN_LOG": str(log)}
    argv = [sys.executable, "-m", "context_engine.hooks", "--home", str(paths.home),
            "claude-code", "UserPromptSubmit"]
    hooks = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, text=True) for _ in range(2)]
    outs = [hook.communicate(payload(paths), timeout=60)[0] for hook in hooks]
    assert [context(out) for out in outs] == [budget.PREPARING_TURN] * 2
    spawned = log.read_text("utf-8").splitlines()
    assert [line.split()[0] for line in spawned] == ["context_engine.hooks.builder"]
    deadline = time.monotonic() + 120
    while builder.running(paths) or not budget.recall_state_usable(paths):
        assert time.monotonic() < deadline, "the builder did not finish"
        time.sleep(0.2)
    done = subprocess.run(argv, input=payload(paths), capture_output=True, env=env, text=True,
                          timeout=60, check=True)
    assert context(done.stdout).startswith("<memory-recall>")
    assert "id=mem-" in context(done.stdout)


@pytest.mark.slow
def test_a_killed_builder_process_is_resumed_by_the_next_one(paths: EnginePaths) -> None:
    write_facts(paths, 6000)
    time.sleep(2.2)  # settled, as a store a person has had for a while
    env = {"PYTHONPATH": str(ROOT / "app"), "CONTEXT_ENGINE_MONITOR": "0"}
    old = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        assert builder.hand_off(paths, str(paths.home)) == "started"
        [pid] = detached._spawned[-1:]
        index = store_index(paths, "project")
        deadline = time.monotonic() + 120
        while len(index.names()) < 1000:
            assert time.monotonic() < deadline, "no batch committed"
            time.sleep(0.02)
        os.kill(pid, 9)  # as an out-of-memory kill or a reboot would
        os.waitpid(pid, 0)
        kept = index.names()
        assert 1000 <= len(kept) < 6000  # killed mid-build, its batches kept
        assert not builder.running(paths)  # the lock died with it
        assert builder.hand_off(paths, str(paths.home)) == "started"
        deadline = time.monotonic() + 300
        while builder.running(paths) or not budget.recall_state_usable(paths):
            assert time.monotonic() < deadline, "the second builder did not finish"
            time.sleep(0.2)
        detached.reap()
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    assert len(index.names()) == 6000
    facts, _, _ = StoreReader(paths, keep_index=True).read()
    assert len(facts) == 6000


@pytest.mark.slow  # waits out git's racy window (2 s)
def test_a_builder_on_files_just_written_saves_a_state_the_next_hook_answers_from(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.recall.quiet import MAX_UNSETTLED

    # More files than a state leaves to be re-read, written just before the hand-off (a
    # copied, restored or checked-out store): the builder waits for them to settle, so the
    # state it saves vouches for all of them and the next hook reads no fact in full.
    write_facts(paths, MAX_UNSETTLED + 8)
    builder.build(paths)

    def never(*_a: object, **_k: object) -> None:
        raise AssertionError("the hook read the stores")

    monkeypatch.setattr(RecallService, "_read_stores", never)
    out, left_running = answer(paths, limit=5)
    assert not left_running
    assert context(out).startswith("<memory-recall>")
