"""A cold turn after a few changed files answers as a process that read every fact (issue 14).

Random stores and random changes between "processes" — atomic replacements, in-place same-size
edits with the mtime set back, creates, deletes, renames, unreadable files, symlinks, globals
shadowed through an S7.2 key, duplicate ids, files still in the racy window — and after each,
a fresh engine over the saved state (brought up to the changed files, recall/delta.py) must
give the same recall block and trace, session marks, masked globals and turn notes as a build
from every fact; so must the next process, which reads what that one saved.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from context_engine.engine import ContextEngine
from context_engine.facts.codec import render_fact
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from context_engine.paths import EnginePaths
from context_engine.recall import Recaller, delta, persist, quiet, state
from context_engine.session.notes import Baseline, FactMark, diff_notes
from context_engine.session.prefix import masked_global_ids
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.recall import NOW
from support.store import settle_all
from test_recall_persist import answers

WORDS = ["docker", "kernel", "socket", "vault", "retry", "cache", "release", "budget", "记忆"]
NAMES = ["alpha", "bravo", "charlie", "delta", "echo"]
OPS = ["replace", "in_place", "delete", "create", "rename", "broken", "symlink", "shadow",
       "global", "title", "duplicate", "touch"]

steps_strategy = st.lists(
    st.tuples(
        st.sampled_from(OPS),
        st.sampled_from(NAMES),
        st.lists(st.sampled_from(WORDS), min_size=3, max_size=3),
        st.booleans(),  # whether this step's files are still in the racy window at the save
    ),
    min_size=1,
    max_size=7,
)


def write(store: Path, file: str, words: list[str], *, scope: str = "project",
          name: str | None = None, title: str = "", fact_id: str | None = None) -> None:
    """An atomic replacement (a new inode) of ``file`` with a fact of ``words``."""
    stem = name or file.removesuffix(".md")
    fact = Fact(
        id=fact_id or f"mem-{scope}-{stem}", revision=1, name=stem, title=title,
        description=f"{stem} note", type="project" if scope == "project" else "reference",
        scope=scope,  # type: ignore[arg-type]
        body=" ".join(words), created_at=NOW, updated_at=NOW,
    )
    store.mkdir(parents=True, exist_ok=True)
    tmp = store / f".tmp-{file}"
    tmp.write_bytes(render_fact(fact))
    os.replace(tmp, store / file)


def edit_in_place(file: Path, words: list[str]) -> None:
    """Same size, same inode, mtime set back: only ctime tells."""
    before = os.stat(file)
    data = file.read_bytes()
    head, _, body = data.partition(b"---\n\n")
    new = (" ".join(words)).encode()
    new = (new + b" " * len(body))[: len(body) - 1] + b"\n" if len(body) > 1 else body
    with open(file, "r+b") as handle:
        handle.write(head + b"---\n\n" + new)
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))


def apply(paths: EnginePaths, op: str, name: str, words: list[str]) -> None:
    project, world = paths.project_store, paths.global_store
    target = project / f"{name}.md"
    if op == "replace" or (op in ("in_place", "touch") and not target.is_file()):
        target.unlink(missing_ok=True)
        write(project, f"{name}.md", words)
    elif op == "in_place":
        edit_in_place(target, words)
    elif op == "touch":
        os.utime(target)  # a new identity, the same text
    elif op == "delete":
        target.unlink(missing_ok=True)
    elif op == "create":
        write(project, f"{name}-new.md", words)
    elif op == "rename":  # the file moves; its name field (and so its reference) stays
        if target.is_file() and not target.is_symlink():
            os.rename(target, project / f"moved-{name}.md")
        else:
            write(project, f"moved-{name}.md", words, name=f"was-{name}")
    elif op == "broken":
        target.unlink(missing_ok=True)
        target.write_bytes(b"---\nname: [unclosed\n---\n\nnot a fact\n")
    elif op == "symlink":
        target.unlink(missing_ok=True)
        target.symlink_to(world / "echo.md")
    elif op == "shadow":  # a project fact sharing the global one's name key, then leaving
        shadow = project / "echo.md"
        if shadow.exists():
            shadow.unlink()
        else:
            write(project, "echo.md", words)
    elif op == "global":
        write(world, "echo.md", words, scope="global")
    elif op == "title":  # an untitled global is keyed by its spaced name: a title masks it
        write(project, f"{name}.md", words, title="gamma ray")
    else:  # another file with alpha's id (one per name: up to five holders of one id)
        write(project, f"dup-{name}.md", words, fact_id="mem-project-alpha")


def full(paths: EnginePaths) -> tuple[list[Any], dict[str, FactMark], frozenset[str], str,
                                       tuple[Fact, ...]]:
    """What a process that reads and indexes every fact from scratch has."""
    snapshot = Memory(paths).snapshot()
    facts = snapshot.facts
    recaller = Recaller(facts, diagnostics=snapshot.diagnostics)
    marks = [(f.id, f.revision, f.reference) for f in facts]
    return (
        answers(recaller),
        {i: FactMark(i, r, ref) for i, r, ref in marks},
        masked_global_ids(facts),
        quiet.marks_digest(marks),
        facts,
    )


def notes(baseline: Baseline, facts: Any) -> list[str]:
    lines, following = diff_notes(baseline, facts, {})
    expected = Memory(baseline_paths[0]).snapshot().facts
    if len({f.id for f in expected}) == len(expected):  # (by id: duplicates keep either)
        assert dict(following.facts) == {f.id: FactMark(f.id, f.revision, f.reference)
                                         for f in expected}
    return lines


baseline_paths: list[EnginePaths] = []


@pytest.mark.slow
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps_strategy)
def test_random_changes_answer_as_a_full_read(
    monkeypatch: pytest.MonkeyPatch, steps: list[tuple[str, str, list[str], bool]]
) -> None:
    from context_engine.facts import derived_index, stat_listing
    from context_engine.facts import store as store_module

    settle_all(monkeypatch)
    used: list[bool] = []  # per process: whether the saved state answered (quiet or brought up)
    real = quiet.open_quiet

    def spy(*args: Any, **kw: Any) -> Any:
        view = real(*args, **kw)
        used.append(view is not None)
        return view

    monkeypatch.setattr(quiet, "open_quiet", spy)
    ups: list[bool] = []
    real_up = delta.brought_up
    monkeypatch.setattr(delta, "brought_up", lambda *a, **k: ups.append(1) or real_up(*a, **k))
    base = Path(tempfile.mkdtemp(prefix="recall-delta-"))
    try:
        (base / "ws" / ".git").mkdir(parents=True)
        paths = EnginePaths.resolve(home=base / "home", workspace=base / "ws")
        for i, name in enumerate(NAMES[:4]):
            write(paths.project_store, f"{name}.md", WORDS[i : i + 3])
        write(paths.global_store, "echo.md", ["docker", "release", "vault"], scope="global")
        write(paths.global_store, "gamma-ray.md", ["kernel", "cache", "budget"], scope="global")
        warm(paths)
        baseline_paths[:] = [paths]
        known = Baseline.capture(full(paths)[4], {})
        # A session's baseline as a hook keeps it: the saved state's marks and their digest.
        engine = ContextEngine(paths)
        told = Baseline.capture(engine.active_facts(), {})
        had_duplicates = False  # a state saved over duplicate ids keeps no listing
        for op, name, words, racy in steps:
            apply(paths, op, name, words)
            for module in (store_module, derived_index, stat_listing):
                monkeypatch.setattr(module, "RACY_NS", 10**18 if racy else -(10**18))
            used.clear()
            expected_answers, marks, masked, digest, facts = full(paths)
            for _process in range(2):  # the one bringing the state up, then the next one
                engine = ContextEngine(paths)
                seen = engine.active_facts()
                assert answers(engine.recaller(seen)) == expected_answers
                assert notes(known, seen) == notes(known, facts)
                assert notes(told, seen) == notes(told, facts)
                if isinstance(seen, quiet.QuietFacts):
                    assert dict(seen.marks()) == marks and seen.masked() == masked
                    assert seen.digest() == digest and len(seen) == len(facts)
            duplicates = len({f.id for f in facts}) != len(facts)
            if not (duplicates or had_duplicates or racy):
                assert used == [True, True], (op, name)  # answered from the saved state
            had_duplicates = duplicates
            known = Baseline.capture(facts, {})
            told = Baseline.capture(ContextEngine(paths).active_facts(), {})
        assert ups or all(op in ("delete", "duplicate") for op, *_ in steps)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture()
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EnginePaths:
    settle_all(monkeypatch)
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=tmp_path / "ws")
    for i, name in enumerate(NAMES):
        write(paths.project_store, f"{name}.md", WORDS[i : i + 3])
    write(paths.global_store, "echo.md", ["docker", "release", "vault"], scope="global")
    return paths


def warm(paths: EnginePaths) -> None:
    engine = ContextEngine(paths)
    engine.recall("docker release", engine.active_facts())


def test_a_change_writes_only_a_delta_and_the_next_process_reads_it(paths: EnginePaths) -> None:
    warm(paths)
    file = persist.recall_cache_path(paths)
    base_before = os.stat(file)
    write(paths.project_store, "bravo.md", ["vault", "secret", "rotation"])
    warm(paths)
    after = os.stat(file)
    assert (after.st_ino, after.st_mtime_ns) == (base_before.st_ino, base_before.st_mtime_ns)
    assert state.delta_path(file).exists()  # the change went beside it, the base untouched
    engine = ContextEngine(paths)
    seen = engine.active_facts()
    assert isinstance(seen, quiet.QuietFacts)
    assert answers(engine.recaller(seen)) == full(paths)[0]


def test_a_delta_for_another_base_is_ignored(paths: EnginePaths) -> None:
    warm(paths)
    file = persist.recall_cache_path(paths)
    write(paths.project_store, "bravo.md", ["vault", "secret", "rotation"])
    warm(paths)
    stale = file.with_name("stale.delta")
    shutil.copy(state.delta_path(file), stale)
    os.unlink(state.delta_path(file))
    os.unlink(file)
    warm(paths)  # no state: read in full and written whole, under a new token
    write(paths.project_store, "charlie.md", ["budget", "cache", "kernel"])
    os.replace(stale, state.delta_path(file))  # the old delta comes back beside the new base
    engine = ContextEngine(paths)
    assert answers(engine.recaller(engine.active_facts())) == full(paths)[0]


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_a_damaged_delta_costs_a_full_read_and_hides_nothing(
    paths: EnginePaths, damage: str
) -> None:
    warm(paths)
    write(paths.project_store, "bravo.md", ["vault", "secret", "rotation"])
    warm(paths)
    target = state.delta_path(persist.recall_cache_path(paths))
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 3] if damage == "truncate" else os.urandom(len(data)))
    write(paths.project_store, "delta.md", ["release", "budget", "socket"])
    for _ in range(2):
        engine = ContextEngine(paths)
        assert answers(engine.recaller(engine.active_facts())) == full(paths)[0]


def test_a_crash_before_the_delta_is_renamed_leaves_a_state_that_is_read_again(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    warm(paths)
    write(paths.project_store, "bravo.md", ["vault", "secret", "rotation"])

    import types

    def crash(*_args: Any) -> None:
        raise SystemExit("killed")  # the process ends here: its temp file stays behind

    killed = types.SimpleNamespace(**{**vars(os), "replace": crash})
    with monkeypatch.context() as patch:
        patch.setattr(state, "os", killed)
        with pytest.raises(SystemExit):
            warm(paths)
    for _ in range(2):
        engine = ContextEngine(paths)
        assert answers(engine.recaller(engine.active_facts())) == full(paths)[0]


def test_two_processes_bringing_the_state_up_at_once_never_mix(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    warm(paths)
    write(paths.project_store, "bravo.md", ["vault", "secret", "rotation"])
    real = state.StateFile.write_delta
    raced: list[int] = []

    def meanwhile(self: state.StateFile, seen: state.Seen, changes: state.Changes) -> Any:
        if not raced:  # another process brings the state up to another change first
            raced.append(1)
            write(paths.project_store, "charlie.md", ["budget", "cache", "kernel"])
            warm(paths)
        return real(self, seen, changes)

    monkeypatch.setattr(state.StateFile, "write_delta", meanwhile)
    warm(paths)  # its delta was built on what the other replaced: not written
    monkeypatch.setattr(state.StateFile, "write_delta", real)
    for _ in range(2):
        engine = ContextEngine(paths)
        assert answers(engine.recaller(engine.active_facts())) == full(paths)[0]


def test_a_growing_delta_is_folded_into_the_base(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state, "DELTA_FLOOR", 0)
    monkeypatch.setattr(state, "DELTA_SHARE", 10**6)  # any delta is already too big
    warm(paths)
    file = persist.recall_cache_path(paths)
    token = state.StateFile(file).open()
    assert token is not None
    first = token.seen.token
    token.close()
    for i, words in enumerate((["vault", "secret", "rotation"], ["budget", "cache", "kernel"])):
        write(paths.project_store, f"{NAMES[i]}.md", words)
        warm(paths)
        engine = ContextEngine(paths)
        assert answers(engine.recaller(engine.active_facts())) == full(paths)[0]
    reader = state.StateFile(file).open()
    assert reader is not None and reader.seen.token != first
    reader.close()
