"""Shortcuts taken for hook speed give the fresh-load answer in the case they cut (issue 9)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from context_engine.facts.store import Store
from context_engine.paths import EnginePaths
from context_engine.recall import engine as recall_engine
from context_engine.recall import tokenize as tokenize_module
from context_engine.recall.query import parse_query
from context_engine.recall.tokenize import ASCII_QUERY_RE, token_re
from context_engine.session import notes as notes_module
from hypothesis import given
from hypothesis import strategies as st
from support.store import parsed_snapshot, settle_all


def full(fact: Fact) -> tuple[object, ...]:
    return (fact, fact.path, fact.stamp)  # path and stamp are compare=False on Fact


def fresh(paths: EnginePaths) -> list[tuple[object, ...]]:
    return [full(f) for f in Memory(paths).snapshot().facts]


@pytest.fixture()
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EnginePaths:
    settle_all(monkeypatch)
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    memory = Memory(paths)
    for i in range(4):
        memory.save(name=f"fact-{i}", description=f"Fact {i}", body=f"Body {i}.", type="project")
    memory.save(name="pref", description="Pref", body="Tabs.", type="user", scope="global")
    return paths


def roots(paths: EnginePaths) -> tuple[Path, Path]:
    return (paths.project_store, paths.global_store)


def test_a_cold_engine_over_a_warm_index_parses_nothing_and_reads_a_full_parse(
    paths: EnginePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    ContextEngine(paths, keep_index=True).active_facts()  # the index exists after the writes
    engine = ContextEngine(paths)
    expected = parsed_snapshot(paths)
    with monkeypatch.context() as patch:  # every row trusted: no file is read or parsed
        patch.setattr(Store, "_read_entry", None)
        assert [full(f) for f in engine.active_facts()] == expected
    Memory(paths).forget("fact-2")
    Memory(paths).save(name="fact-0", body="Edited.")
    assert [full(f) for f in engine.active_facts()] == parsed_snapshot(paths)
    assert [full(f) for f in ContextEngine(paths).active_facts()] == parsed_snapshot(paths)


@pytest.mark.slow
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_the_ascii_query_pattern_finds_what_the_full_pattern_finds(text: str) -> None:
    def rows(pattern: re.Pattern[str]) -> list[tuple[object, ...]]:
        return [(m.span(), m.group(1), m.group(2)) for m in pattern.finditer(text)]

    assert rows(ASCII_QUERY_RE) == rows(token_re())


def test_queries_parse_the_same_with_and_without_the_ascii_pattern(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    messages = ["why does #docker_build time out after v2.3.", "AuthHandler fails", "a-b c_d 9x."]
    fast = [parse_query(m) for m in messages]
    monkeypatch.setattr(tokenize_module, "ASCII_QUERY_RE", token_re())
    assert [parse_query(m) for m in messages] == fast


@pytest.mark.slow
@given(
    st.lists(st.sampled_from(["", "/", "a", ".archive", ".revisions", "id", "x.md", ".."]),
             max_size=5)
)
def test_archived_is_judged_as_the_parent_rule_judges(parts: list[str]) -> None:
    path = Path(*parts) if parts else Path()
    parent = path.parent
    expected = parent.name == ".archive" or parent.parent.name == ".revisions"
    fact = Fact("i", 1, "n", "t", "d", "project", "project", "b", path=path)
    assert recall_engine._is_archived(fact) == expected


@pytest.mark.slow
@given(st.text(max_size=60))
def test_note_text_is_escaped_as_html_escape_does(text: str) -> None:
    import html

    assert notes_module._text(text) == html.escape(notes_module.one_line(text), quote=False)


def test_the_baseline_round_trips_and_a_newer_legacy_json_file_wins(tmp_path: Path) -> None:
    import json
    import os

    from context_engine.hooks.state import BaselineStore, _file
    from context_engine.session.notes import Baseline, FactMark

    first = Baseline({"a": FactMark("a", 2, "project/a.md")}, {"AGENTS.md": "d1"}, frozenset())
    second = Baseline({"b": FactMark("b", 1, "global/b.md")}, {}, frozenset({"b"}))
    states = BaselineStore(tmp_path)
    assert states.load("claude-code", "s") is None
    states.save("claude-code", "s", first)
    assert states.load("claude-code", "s") == first
    legacy = _file(tmp_path, "claude-code", "s", ".json")
    legacy.write_text(json.dumps(second.to_json()), "utf-8")  # written by an earlier version
    newer = os.stat(_file(tmp_path, "claude-code", "s")).st_mtime_ns + 10**9
    os.utime(legacy, ns=(newer, newer))
    assert states.load("claude-code", "s") == second
    states.save("claude-code", "s", first)  # the marshal file supersedes the legacy one
    assert not legacy.exists() and states.load("claude-code", "s") == first
    _file(tmp_path, "claude-code", "s").write_bytes(b"\x00garbage")
    assert states.load("claude-code", "s") is None


ARGVS = [
    ["claude-code"], ["claude-code", "UserPromptSubmit"], ["--home", "/h", "claude-code"],
    ["--home=/h", "--workspace", "/w", "codex", "x"], ["--home=", "claude-code"],
    ["--with-instructions", "--home", "a", "--home", "b", "gemini", ""],
    ["--workspace=/w=x", "claude-code", "SessionStart"], ["claude-code", "--home", "/h"],
    ["--hom", "/h", "claude-code"], ["--home", "-x", "claude-code"], ["nobody"], [],
    ["claude-code", "a", "b"], ["--", "claude-code"], ["-h"], ["--home"], ["claude-code", "-1"],
]


@pytest.mark.parametrize("argv", ARGVS)
def test_the_quick_command_line_parse_agrees_with_argparse(argv: list[str]) -> None:
    from context_engine.hooks import __main__ as entry

    quick = entry.quick_parse(argv)
    assert (quick is not None) == (ARGVS.index(argv) < 7)  # the plain forms take the quick path
    if quick is not None:
        assert quick == entry.full_parse(argv)


def test_a_restored_index_thaws_postings_lazily_and_answers_as_the_original() -> None:
    import marshal

    from context_engine.recall.index import DocMeta, SparseIndex

    docs = [
        (f"project/f{i}.md", {"cache": i % 3 + 1, f"t{i}": 1, "build": 2}, DocMeta(i % 2 == 0))
        for i in range(12)
    ]
    original = SparseIndex()
    original.add_many(docs)
    state = marshal.loads(marshal.dumps(original.export()))
    restored = SparseIndex.restore(state)
    assert restored.vocabulary() == original.vocabulary() and restored._frozen

    def scored(index: SparseIndex) -> list[object]:
        s = index.score(["cache", "t3", "nothing"], {"cache": 0.5, "t3": 2.0}, index.avgdl, None)
        return [s.slots.tolist(), s.scores.tolist(), s.matched.tolist(), s.bits.tolist()]

    assert scored(restored) == scored(original) and restored.df("build") == 12
    assert "t7" in restored._frozen  # untouched terms stay bytes
    for index in (original, restored):
        index.remove("project/f3.md", ["cache", "t3", "build"])
        index.add("project/new.md", {"t7": 2, "fresh": 1}, DocMeta())
    # A change copies out only the terms it touches (what a delta of the saved state writes).
    assert "t5" in restored._frozen and restored.vocabulary() == original.vocabulary()
    changed = restored.changed_postings()
    assert changed.keys() == {"cache", "t3", "build", "t7", "fresh"} and changed["t3"] is None
    assert changed["fresh"] == original._postings["fresh"].tobytes()
    assert scored(restored) == scored(original)
    assert restored.export() == original.export() and not restored._frozen
    state[3][0] = b"\x00\x01\x02"  # not a whole number of items: refused at restore, as before
    with pytest.raises(ValueError):
        SparseIndex.restore(state)


def test_a_long_lived_relay_keeps_settled_baselines_until_their_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from context_engine.hooks import state
    from context_engine.hooks.state import BaselineStore, _file
    from context_engine.session.notes import Baseline, FactMark

    first = Baseline({"a": FactMark("a", 2, "project/a.md")}, {}, frozenset())
    second = Baseline({"b": FactMark("b", 1, "global/b.md")}, {}, frozenset())
    kept = BaselineStore(tmp_path, keep=True)
    kept.save("codex", "s", first)
    path = _file(tmp_path, "codex", "s")
    loads = []
    real = state._document  # each read of the file (its marks are decoded later, if at all)
    monkeypatch.setattr(state, "_document", lambda *a: loads.append(1) or real(*a))
    assert kept.load("codex", "s") == first and loads == [1]  # written just now: racy, read
    monkeypatch.setattr(state, "_RACY_NS", 0)
    state._keep(path, first)
    assert kept.load("codex", "s") is kept.load("codex", "s") and loads == [1]  # settled: kept
    BaselineStore(tmp_path).save("codex", "s", second)  # a cold hook process writes it
    assert kept.load("codex", "s") == second and loads == [1, 1]
    os.unlink(path)
    assert kept.load("codex", "s") is None
    assert BaselineStore(tmp_path).load("codex", "s") is None  # one-shot stores keep nothing
