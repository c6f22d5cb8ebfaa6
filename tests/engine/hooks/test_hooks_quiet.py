"""A cold hook turn over unchanged stores answers from the saved recall state (issue 14).

Every answer equals the one a full read gives; the quiet turn loads no codec, YAML, NumPy
(it reads no fact file) or ``dataclasses``; any change — a write, an in-place edit with the
mtime set back, a deletion — is seen on the very next turn, with its turn-tail note.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from context_engine.facts.memory import Memory
from context_engine.hooks.runner import handle
from context_engine.paths import EnginePaths
from context_engine.recall import quiet, service
from support.store import settle_all

PROMPT = "why does the docker release build time out?"


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
    memory.save(name="release-notes", description="Docker release notes",
                body="Docker release notes live in the wiki.", type="reference", scope="global")
    return paths


def turn(paths: EnginePaths, prompt: str = PROMPT, session: str = "s1") -> str:
    event = "SessionStart" if not prompt else "UserPromptSubmit"
    data = {"session_id": session, "cwd": str(paths.workspace), "hook_event_name": event,
            "prompt": prompt}
    return handle("claude-code", None, json.dumps(data), home=str(paths.home))


def recall_block(out: str) -> str:
    """The recall block of a hook's answer (without the turn-tail notes)."""
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    return str(context).split("<memory-update>")[0].rstrip()


def full_turn(paths: EnginePaths, monkeypatch: pytest.MonkeyPatch, **kw: str) -> str:
    """The same turn with the saved state never trusted (the stores read in full)."""
    with monkeypatch.context() as patch:
        patch.setattr(quiet, "open_quiet", lambda *_args, **_kw: None)
        return turn(paths, **kw)


def quiet_opened(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record, per turn, whether the saved state answered."""
    seen: list[bool] = []
    real = quiet.open_quiet

    def spy(*args: object, **kw: object) -> object:
        view = real(*args, **kw)  # type: ignore[arg-type]
        seen.append(view is not None)
        return view

    monkeypatch.setattr(quiet, "open_quiet", spy)
    return seen


def test_a_quiet_turn_answers_from_the_saved_state_as_a_full_read(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn(paths, "")  # session start: the baseline
    first = turn(paths)  # reads the stores, saves the state
    seen = quiet_opened(monkeypatch)
    again = turn(paths)
    assert seen == [True]
    assert "cache is cold" in again and again == first
    assert again == full_turn(paths, monkeypatch)


def test_changes_are_seen_on_the_next_turn_with_their_note(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn(paths, "")
    turn(paths)
    seen = quiet_opened(monkeypatch)
    Memory(paths).save(name="docker-release", description="Docker release builds",
                       body="The docker release build now uses a warm cache mirror.",
                       type="project")
    changed = turn(paths)
    assert seen == [True]  # the listing moved in one file: the saved state brought up to it
    assert "updated project/docker-release.md" in changed and "warm cache mirror" in changed
    quiet_again = turn(paths)
    assert seen == [True, True] and "memory-update" not in quiet_again
    assert "warm cache mirror" in quiet_again


def test_a_turn_after_a_change_reads_no_saved_marks_and_answers_as_a_full_read(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The session's own baseline (marks file never read: the brought-up state knows the
    # changed ids' marks before) beside a session whose turns read the stores in full.
    from context_engine.hooks import state

    for session in ("s1", "s2"):
        turn(paths, "", session=session)
    turn(paths, session="s1")  # reads the stores, saves the state
    turn(paths, session="s1")  # quiet: the baseline now carries the state's digest
    full_turn(paths, monkeypatch, session="s2")
    reads: list[object] = []
    real = state._MarksFile.__call__

    def counted(self: state._MarksFile) -> bytes:
        reads.append(self)
        return real(self)

    monkeypatch.setattr(state._MarksFile, "__call__", counted)
    seen = quiet_opened(monkeypatch)
    memory = Memory(paths)
    changes = [
        lambda: memory.save(name="docker-release", description="Docker release builds",
                            body="The docker release build now uses a warm cache mirror.",
                            type="project"),
        lambda: (paths.project_store / "kernel-retry.md").unlink(),
        lambda: memory.save(name="docker-mirror", description="Docker mirror",
                            body="The docker release mirror is warmed nightly.", type="project"),
        lambda: os.replace(paths.project_store / "docker-mirror.md",  # the same fact
                           paths.project_store / "docker-mirror-2.md"),
    ]
    notes = []
    for change in changes:
        change()
        reads.clear()
        out = turn(paths, session="s1")
        assert reads == []  # the 10^5 saved marks of a large store stay on disk
        assert out == full_turn(paths, monkeypatch, session="s2")
        notes.append(json.loads(out)["hookSpecificOutput"]["additionalContext"])
        reads.clear()  # the full read compared the other session's marks one by one
        quiet_again = turn(paths, session="s1")
        assert "memory-update" not in quiet_again and reads == []
    assert seen == [True] * 8  # each change: the saved state brought up, then quiet
    assert "updated project/docker-release.md" in notes[0]
    assert "forgot project/kernel-retry.md" in notes[1]
    assert "saved project/docker-mirror.md" in notes[2]


def test_an_in_place_edit_with_the_mtime_set_back_is_seen(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn(paths)
    before_edit = turn(paths)
    file = paths.project_store / "kernel-retry.md"
    before = os.stat(file)
    data = file.read_bytes()
    edited = data.replace(b"Kernel socket errors", b"Docker release build")  # same size
    assert len(edited) == len(data) and edited != data
    with open(file, "r+b") as handle_:
        handle_.write(edited)
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    seen = quiet_opened(monkeypatch)
    out = turn(paths)
    assert seen == [True]  # that one file re-read
    assert recall_block(out) != recall_block(before_edit)  # its new text matches the prompt
    assert recall_block(out) == recall_block(full_turn(paths, monkeypatch))


def test_a_deleted_fact_leaves_the_answer(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn(paths)
    assert "cache is cold" in turn(paths)
    (paths.project_store / "docker-release.md").unlink()
    out = turn(paths)
    assert "cache is cold" not in recall_block(out)
    assert recall_block(out) == recall_block(full_turn(paths, monkeypatch))


def test_a_state_written_for_other_stores_or_code_is_not_trusted(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn(paths)
    turn(paths)
    seen = quiet_opened(monkeypatch)
    monkeypatch.setattr(quiet, "code_tag", lambda: "other recall code")
    turn(paths)
    assert seen == [False]


def test_a_later_read_in_a_long_lived_host_follows_changes(paths: EnginePaths) -> None:
    from context_engine.engine import ContextEngine

    turn(paths)
    engine = ContextEngine(paths)
    facts = engine.active_facts()
    assert type(facts).__name__ == "QuietFacts" and len(facts) == 4
    assert engine.active_facts() is facts  # nothing moved: the same view
    Memory(paths).save(name="new-one", body="A brand new docker note.", type="project")
    now = engine.active_facts()
    assert type(now).__name__ == "tuple" and len(now) == 5
    assert [f.name for f in engine.catalog.index.snapshot().facts].count("new-one") == 1


def test_a_quiet_hook_process_loads_no_codec_yaml_numpy_or_dataclasses(paths: EnginePaths) -> None:
    turn(paths)
    turn(paths)
    data = {"session_id": "s1", "cwd": str(paths.workspace),
            "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}
    code = (
        "import json, sys\n"
        "from context_engine.hooks.runner import handle\n"
        f"out = handle('claude-code', None, {json.dumps(data)!r}, home={str(paths.home)!r})\n"
        # OpenSSL (``_hashlib``) and click: a hook needs neither (digests: context_engine.digests);
        # nor ``dataclasses`` (and ``inspect``, ``ast`` with it): its values are records.
        "heavy = ('numpy', 'yaml', 'context_engine.facts.codec', '_hashlib', 'click',\n"
        "         'dataclasses', 'inspect', 'ast')\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "print(json.dumps({'out': out, 'loaded': loaded}))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=True)
    result = json.loads(done.stdout)
    assert result["loaded"] == []
    assert "cache is cold" in result["out"]


def test_read_only_service_never_uses_or_writes_the_state(paths: EnginePaths) -> None:
    recall = service.RecallService(paths, lambda: Memory(paths))
    assert len(recall.active_facts()) == 4
    assert not (paths.workspace_data / "cache").exists()


def test_a_change_settling_records_the_listing_without_rewriting_the_state(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.facts import stat_listing as listing
    from context_engine.recall import state

    turn(paths)
    monkeypatch.setattr(listing, "RACY_NS", 10**18)  # nothing has settled yet
    Memory(paths).save(name="kernel-retry", body="Kernel socket retries use jitter now.")
    writes: list[str] = []
    for name in ("write", "write_changes", "write_delta", "update_meta"):
        real = getattr(state.StateFile, name)
        monkeypatch.setattr(
            state.StateFile, name,
            lambda self, *a, _real=real, _name=name, **kw: writes.append(_name)
            or _real(self, *a, **kw),
        )
    seen = quiet_opened(monkeypatch)
    turn(paths)  # reads the changed file; its rows go to the delta, the unsettled files named
    monkeypatch.setattr(listing, "RACY_NS", -(10**18))  # now they have settled
    turn(paths)  # re-read and equal to their records: quiet, and recorded as settled
    out = turn(paths)
    # Never the whole state, nor a copy of it: only the delta is rewritten.
    expected = ["write_delta", "update_meta", "write_delta"]
    assert (writes, seen) == (expected, [True, True, True])
    assert recall_block(out) == recall_block(full_turn(paths, monkeypatch))


def test_files_not_settled_at_save_are_compared_by_content(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.facts import stat_listing as listing

    monkeypatch.setattr(listing, "RACY_NS", 10**18)  # nothing written has settled
    turn(paths)
    seen = quiet_opened(monkeypatch)
    assert recall_block(turn(paths)) == recall_block(full_turn(paths, monkeypatch))
    assert seen == [True]  # every file re-read and equal to its saved record
    # An edit the identities cannot show (same lstat identity, as within one timestamp tick):
    saved = listing.scan_listings(paths)
    file = paths.project_store / "docker-release.md"
    data = file.read_bytes()
    new = data.replace(b"times out when the cache is cold", b"is fast with a warm cache")
    file.write_bytes(new)
    monkeypatch.setattr(quiet, "scan_listings", lambda _paths: saved)
    out = turn(paths)
    assert seen == [True, True] and "cache is cold" not in recall_block(out)  # re-read


def test_the_memory_tool_over_a_quiet_engine_lists_and_reads_every_fact(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.engine import ContextEngine

    def tool(arguments: dict[str, str]) -> str:
        outcome = ContextEngine(paths).run_tool("memory", arguments, controller="headless")
        assert outcome.ran, outcome.result
        return outcome.result

    turn(paths)
    calls = [{"operation": "list"}, {"operation": "read", "name": "project/kernel-retry.md"},
             {"operation": "read", "name": "tabs"}, {"operation": "search", "query": "docker"}]
    seen = quiet_opened(monkeypatch)
    quiet_answers = [tool(call) for call in calls]
    assert seen and all(seen)
    with monkeypatch.context() as patch:
        patch.setattr(quiet, "open_quiet", lambda *_args, **_kw: None)
        assert quiet_answers == [tool(call) for call in calls]
