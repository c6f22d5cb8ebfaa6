"""The persisted recall index never answers differently from a fresh build (issue 9, S8)."""

from __future__ import annotations

import json
import marshal
import os
from pathlib import Path
from typing import Any

import pytest
from context_engine.engine import ContextEngine
from context_engine.facts.codec import render_fact
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from context_engine.paths import EnginePaths
from context_engine.recall import Recaller, persist
from context_engine.recall import engine as recall_engine
from support.recall import NOW
from support.store import settle_all

QUERIES = [
    "why does the docker release build time out?",
    "kernel socket retry",
    "tabs or spaces in the style guide",
    "vault secret rotation schedule",
    "记忆召回预算",
    "continue",
]


def answers(recaller: Recaller) -> list[tuple[Any, ...]]:
    """Everything a turn shows or traces, except the time it ran."""
    out: list[tuple[Any, ...]] = []
    for query in QUERIES:
        result = recaller.recall(query, now=NOW)
        t = result.trace
        out.append(
            (result.block, t.hits, t.dropped, t.dropped_counts, t.suppressed, t.skipped,
             t.candidates, t.pool_size, t.omitted, t.used_chars)
        )
    out.append(tuple((h.fact, h.score) for h in recaller.search("docker release kernel")))
    return out


def fresh(paths: EnginePaths) -> list[tuple[Any, ...]]:
    snapshot = Memory(paths).snapshot()
    return answers(Recaller(snapshot.facts, diagnostics=snapshot.diagnostics))


def cold(paths: EnginePaths) -> Recaller:
    """What a new process (hook, session start) gets: facts and index through the caches."""
    return ContextEngine(paths).recaller()


@pytest.fixture()
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    # Everything written by a test is "settled" at once; the racy case has its own test.
    settle_all(monkeypatch)


@pytest.fixture()
def paths(tmp_path: Path) -> EnginePaths:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    memory = Memory(paths)
    bodies = [
        "The docker release build times out when the cache is cold.",
        "Kernel socket errors need a retry with backoff.",
        "Vault secret rotation runs every Monday.",
        "记忆召回只在真实用户回合触发，预算 2400 字符。",
        "The docker image for the release is pushed by CI.",
    ]
    for i, body in enumerate(bodies):
        memory.save(name=f"fact-{i}", description=f"Note {i}", body=body, type="project")
    memory.save(name="style", description="Style guide", body="Tabs, not spaces.", type="user",
                scope="global")
    memory.save(name="release-notes", description="Release notes", body="Docker release notes.",
                type="reference", scope="global")
    return paths


def test_unchanged_stores_restore_every_fact(paths: EnginePaths, settled: None) -> None:
    first = cold(paths)
    assert first.stats.full_builds == 1 and first.stats.restored == 0
    assert persist.recall_cache_path(paths).is_file()
    second = cold(paths)
    assert second.stats.full_builds == 0 and second.stats.tokenized == 0
    assert second.stats.restored == 7
    assert answers(second) == answers(first) == fresh(paths)


def test_diagnostics_are_reported_after_a_restore(paths: EnginePaths, settled: None) -> None:
    (paths.project_store / "broken.md").write_text("---\nnot: [closed\n---\nbody\n", "utf-8")
    cold(paths)
    again = cold(paths)
    assert again.stats.restored == 7
    skipped = again.recall("docker release", now=NOW).trace.skipped
    assert [s.file for s in skipped] == ["broken.md"]
    assert answers(again) == fresh(paths)


@pytest.mark.slow
def test_atomic_replace_reindexes_only_that_fact(paths: EnginePaths, settled: None) -> None:
    cold(paths)
    Memory(paths).save(name="fact-1", body="Kernel panics on socket close; no retry helps.")
    again = cold(paths)
    assert again.stats.full_builds == 0 and again.stats.restored == 6
    assert answers(again) == fresh(paths)
    assert cold(paths).stats.restored == 7  # the new identity was saved


def test_same_size_in_place_edit_with_mtime_restored(paths: EnginePaths, settled: None) -> None:
    cold(paths)
    target = paths.project_store / "fact-0.md"
    before = os.stat(target)
    data = target.read_bytes()
    edited = data.replace(b"docker release", b"kernel socket")
    edited = edited.replace(b"kernel socket build", b"kernel socket  build")
    assert len(edited) == len(data) and edited != data
    with open(target, "r+b") as handle:  # in place: same inode
        handle.write(edited)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(target)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns
    )
    again = cold(paths)
    assert answers(again) == fresh(paths)
    assert again.stats.restored == 6
    trace = again.recall("kernel socket build times", now=NOW).trace
    assert "fact-0" in {h.name for h in trace.hits}, trace


def test_deleted_and_new_facts(paths: EnginePaths, settled: None) -> None:
    cold(paths)
    memory = Memory(paths)
    memory.forget("fact-4")
    memory.save(name="fact-9", description="New", body="Docker socket retry budget.",
                type="project")
    again = cold(paths)
    assert again.stats.full_builds == 0 and again.stats.restored == 6
    assert answers(again) == fresh(paths)
    assert "project/fact-4.md" not in {f.reference for f in again.facts()}


def test_project_fact_shadowing_a_global_one(paths: EnginePaths, settled: None) -> None:
    cold(paths)
    ours = Fact(id="mem-ours", revision=1, name="release-notes", title="", description="Ours",
                type="project", scope="project", body="Project release notes for docker.",
                created_at=NOW, updated_at=NOW)
    target = paths.project_store / "release-notes.md"
    target.write_bytes(render_fact(ours))
    again = cold(paths)
    assert again.membership("global/release-notes.md") == "shadowed"
    assert answers(again) == fresh(paths)
    target.unlink()
    back = cold(paths)
    assert back.membership("global/release-notes.md") == "pool"
    assert answers(back) == fresh(paths)


def test_unsettled_files_go_through_stand_ins(paths: EnginePaths) -> None:
    # Files written just now are racy: no identity is vouched for, every file is re-read and
    # compared with its saved record (recall/quiet.py) before the saved index is used.
    cold(paths)
    again = cold(paths)
    assert again.stats.full_builds == 0 and again.stats.restored == 7
    assert again.stats.tokenized == 0  # equal records: nothing re-indexed
    assert answers(again) == fresh(paths)
    Memory(paths).save(name="fact-2", body="Vault tokens expire hourly.")
    changed = cold(paths)
    assert changed.stats.tokenized == 2 and answers(changed) == fresh(paths)


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],
        lambda data: data[:100] + bytes([data[100] ^ 0xFF]) + data[101:],
        lambda data: data[:-10] + bytes(10),
        lambda data: b"not a cache at all",
        lambda data: b"",
    ],
)
def test_corrupt_cache_is_ignored_and_rewritten(
    paths: EnginePaths, settled: None, damage: Any
) -> None:
    cold(paths)
    file = persist.recall_cache_path(paths)
    file.write_bytes(damage(file.read_bytes()))
    again = cold(paths)
    # A damaged file SQLite cannot read is rebuilt; one it still reads (a zeroed unused tail)
    # must give the very same answers.
    assert (again.stats.full_builds, again.stats.restored) in ((1, 0), (0, 7))
    assert answers(again) == fresh(paths)
    assert cold(paths).stats.restored == 7


def test_cache_from_another_version_or_code_is_ignored(
    paths: EnginePaths, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold(paths)
    monkeypatch.setattr(persist, "VERSION", persist.VERSION + 1)
    assert cold(paths).stats.full_builds == 1
    monkeypatch.setattr(persist, "code_tag", lambda: "other recall code")
    rebuilt = cold(paths)
    assert rebuilt.stats.full_builds == 1 and answers(rebuilt) == fresh(paths)


def test_group_writable_cache_is_not_trusted(paths: EnginePaths, settled: None) -> None:
    cold(paths)
    os.chmod(persist.recall_cache_path(paths), 0o666)
    assert cold(paths).stats.full_builds == 1


def test_state_that_does_not_fit_is_rebuilt(
    paths: EnginePaths, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold(paths)
    real = persist._read

    def tampered(path: Path) -> dict[str, Any] | None:
        document = real(path)
        assert document is not None
        document["tracker"][0]["project/fact-0.md"] = "bogus"
        return document

    from context_engine.recall import quiet

    monkeypatch.setattr(persist, "_read", tampered)
    # the full restore's checks
    monkeypatch.setattr(quiet, "open_quiet", lambda *_args, **_kw: None)
    again = cold(paths)
    assert again.stats.full_builds == 1 and answers(again) == fresh(paths)


def test_unwritable_cache_dir_still_answers(
    paths: EnginePaths, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_args: object, **_kwargs: object) -> tuple[int, str]:
        raise OSError(30, "Read-only file system")

    from context_engine.recall import state

    monkeypatch.setattr(state, "open_private_temp", refuse)
    recaller = cold(paths)
    assert not persist.recall_cache_path(paths).exists()
    assert answers(recaller) == fresh(paths)


def test_hook_process_uses_the_saved_index(
    paths: EnginePaths, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.hooks.runner import handle

    payload = json.dumps(
        {"session_id": "s1", "cwd": str(paths.workspace), "hook_event_name": "UserPromptSubmit",
         "prompt": "why does the docker release build time out?"}
    )
    home = str(paths.home)
    handle("claude-code", None, payload, home=home)  # builds and saves the index
    tokenized: list[str] = []
    real = recall_engine.term_counts

    def counting(fact: Any) -> Any:
        tokenized.append(fact.reference)
        return real(fact)

    monkeypatch.setattr(recall_engine, "term_counts", counting)
    out = handle("claude-code", None, payload, home=home)
    assert "memory-recall" in out
    assert tokenized == []  # no rebuild: the index came from the saved state
    Memory(paths).save(name="fact-3", body="Docker release build budget.")
    out = handle("claude-code", None, payload, home=home)
    assert "memory-recall" in out
    assert tokenized == ["project/fact-3.md", "project/fact-3.md"]  # old text out, new in


def saved_document(file: Path) -> dict[str, Any]:
    from context_engine.recall.state import StateFile

    with StateFile(file).reading() as reader:
        assert reader is not None
        document = reader.document()
    document.pop("file")
    # Keyed rows of marshal bytes compare by value: equal values may be spelt differently
    # (back-references follow reference counts), and a row whose value is unchanged is kept.
    tables = document["@tables"]
    for table in ("holders", "tracker"):
        tables[table] = {key: marshal.loads(blob) for key, blob in tables[table].items()}
    return document


def test_a_change_writes_the_rows_a_whole_write_would(
    paths: EnginePaths, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.recall import quiet, state

    monkeypatch.setattr(quiet, "open_quiet", lambda *_args, **_kw: None)  # the full restore path
    cold(paths)
    memory = Memory(paths)
    memory.save(name="fact-1", body="Kernel socket errors now retry with jitter.")
    memory.save(name="brand-new", body="A new docker note.", type="project")
    memory.forget("fact-4")
    whole = persist.recall_cache_path(paths).with_name("whole.sqlite")
    real = state.StateFile.write_changes

    def both(self: Any, base: Any, meta: Any, records: Any, indexes: Any) -> bool:
        state.StateFile(whole).write(meta, records, indexes)  # the same state, written whole
        return real(self, base, meta, records, indexes)

    monkeypatch.setattr(state.StateFile, "write_changes", both)
    changed = cold(paths)
    assert changed.stats.restored > 0 and whole.exists()  # restored and diffed, not rebuilt
    assert saved_document(persist.recall_cache_path(paths)) == saved_document(whole)
    assert answers(cold(paths)) == fresh(paths)


def test_a_state_replaced_meanwhile_is_written_whole(
    paths: EnginePaths, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.recall import quiet, state

    monkeypatch.setattr(quiet, "open_quiet", lambda *_args, **_kw: None)
    cold(paths)
    Memory(paths).save(name="fact-2", body="Vault secret rotation runs every Friday.")
    real = persist._read

    def then_replaced(path: Path) -> dict[str, Any] | None:
        document = real(path)
        os.utime(path, ns=(1, 1))  # another process's save: the file is not the one read
        return document

    monkeypatch.setattr(persist, "_read", then_replaced)
    whole: list[int] = []
    original = state.StateFile.write
    monkeypatch.setattr(
        state.StateFile, "write", lambda self, *a: whole.append(1) or original(self, *a)
    )
    assert answers(cold(paths)) == fresh(paths)
    assert whole == [1]
