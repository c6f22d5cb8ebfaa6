"""Memory candidates (S11.3) and accepting them as facts (S11.5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from context_engine.catalog.door import accept_memory
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from context_engine.suggestions.accept import Edits
from context_engine.suggestions.candidates import (
    MAX_MEMORIES,
    candidate_name,
    infer_type,
    memory_candidates,
)
from context_engine.suggestions.model import UserTurn
from context_engine.suggestions.scanner import scan
from context_engine.suggestions.similarity import CoverageIndex
from support.suggest import DATA, EN, FORMATS, ZH, Home, install, make_home, write_session


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


def _scan(home: Home, facts: list[Fact] | None = None, bodies: list[str] | None = None):  # type: ignore[no-untyped-def]
    return scan(home.paths, home.roots, facts=facts or [], instruction_bodies=bodies or [])


def _fact(body: str, name: str = "existing") -> Fact:
    return Fact("mem-" + "0" * 32, 1, name, "", "", "feedback", "project", body)


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_yields_both_statements_and_accepts_as_fact(home: Home, fmt: str) -> None:
    install(home, fmt)
    result = _scan(home)
    bodies = [m.body for m in result.memories]
    assert bodies == [ZH, EN]
    assert not any("INJECTED" in b or "tabs" in b for b in bodies)
    zh = result.memories[0]
    assert zh.reason == 'marker "以后"' and zh.scope == "project" and zh.type == "feedback"
    assert result.memories[1].reason == 'marker "always"'
    assert all(e.split(": ", 1)[1] == zh.body for e in zh.evidence)
    fact = accept_memory(Memory(home.paths), zh)
    assert "中文回复" in fact.body
    assert fact.name == zh.name and fact.scope == "project" and fact.revision == 1
    on_disk = Memory(home.paths).resolve(fact.id)
    assert "中文回复" in on_disk.body
    en = accept_memory(Memory(home.paths), result.memories[1])
    assert en.body.strip() == EN


@pytest.mark.parametrize("fmt", FORMATS)
def test_assistant_and_injected_copies_yield_nothing(home: Home, fmt: str) -> None:
    install(home, fmt, DATA / "negative" / fmt)
    assert _scan(home).memories == ()


def test_statement_covered_by_fact_or_instruction_is_not_proposed(home: Home) -> None:
    install(home, "claude-code")
    by_fact = _scan(home, facts=[_fact("Reply in Chinese.\n\n" + ZH)])
    assert [m.body for m in by_fact.memories] == [EN]
    by_rules = _scan(home, bodies=["# Rules\n\n- Run the linters before every commit, always.\n"])
    assert [m.body for m in by_rules.memories] == [ZH]
    both = _scan(home, facts=[_fact(ZH)], bodies=["Always run the linters before you commit"])
    assert both.memories == ()


def test_paraphrase_in_another_language_is_still_new(home: Home) -> None:
    install(home, "codex")
    result = _scan(home, bodies=["Reply in English unless asked otherwise."])
    assert [m.body for m in result.memories] == [ZH, EN]


def test_fact_title_and_description_count_as_coverage() -> None:
    covered = CoverageIndex(["Always run the linters before you commit"])
    turns = [UserTurn("codex", "s1", EN)]
    assert memory_candidates(turns, covered) == []


def test_two_cjk_statements_get_distinct_stable_names(home: Home) -> None:
    first = "以后请始终用中文回复，除非我明确要求英文。"
    second = "以后请始终用中文写提交信息，除非我明确要求英文。"
    shared = (
        "以后请在每个模块里都保持现有的目录结构和命名方式，"
        "并且在修改公共接口之前先和我确认一下具体的影响范围"
    )
    long_a = shared + "，尤其是数据库迁移脚本和部署配置文件里面的那些环境变量和密钥引用方式。"
    long_b = shared + "，另外前端组件的样式文件统一放到对应组件目录下面并使用模块化的命名约定。"
    write_session(home, "reasonix", "s1", [first, second, long_a, long_b])
    result = _scan(home)
    names = [m.name for m in result.memories]
    assert len(names) == 4 and len(set(names)) == 4
    # Both long statements are cut to the same prefix and kept apart by a hash suffix.
    assert names[2].rsplit("-", 1)[0] == names[3].rsplit("-", 1)[0]
    assert len({m.id for m in result.memories}) == 4
    again = _scan(home)
    assert [(m.id, m.name) for m in again.memories] == [(m.id, m.name) for m in result.memories]


def test_names_and_ids_survive_new_sessions(home: Home) -> None:
    write_session(home, "claude-code", "s1", [ZH], mtime=1_000)
    before = {m.body: (m.id, m.name) for m in _scan(home).memories}
    write_session(home, "codex", "s2", ["Never push directly to main.", EN], mtime=2_000)
    after = {m.body: (m.id, m.name) for m in _scan(home).memories}
    assert after[ZH] == before[ZH]
    assert set(after) == {ZH, EN, "Never push directly to main."}


def test_same_statement_in_two_sessions_is_one_candidate_with_two_evidence_lines(
    home: Home,
) -> None:
    write_session(home, "reasonix", "older", ["Remember: the staging DB is read-only."], mtime=1)
    write_session(home, "gemini", "newer", ["remember — the staging DB is read only!"], mtime=2)
    (memory,) = _scan(home).memories
    assert memory.evidence == (
        "session-2026-08-01T09-30-newer: remember — the staging DB is read only!",
        "older: Remember: the staging DB is read-only.",
    )


@pytest.mark.parametrize(
    ("statement", "name"),
    [
        ("Remember that the staging DB is read-only.", "staging-db-read-only"),
        ("From now on, always use pnpm.", "use-pnpm"),
        ("Always use pnpm instead of npm in this repo.", "use-pnpm-instead-npm-repo"),
        ("以后提交信息都用中文写。", "提交信息-用中文写"),
        ("请记住：发布前先跑集成测试。", "发布前先跑集成测试"),
        ("Remember.", "remember"),
    ],
)
def test_names_skip_filler_openers(statement: str, name: str) -> None:
    assert candidate_name(statement, set()) == name


def test_name_taken_by_an_existing_fact_gets_a_suffix(home: Home) -> None:
    write_session(home, "reasonix", "s1", ["Never push directly to main."])
    plain = candidate_name("Never push directly to main.", set())
    result = _scan(home, facts=[_fact("Unrelated body about coffee.", name=plain)])
    (memory,) = result.memories
    assert memory.name != plain and memory.name.startswith(plain + "-")


def test_statement_rules_length_question_code_and_cap(home: Home) -> None:
    turns = [
        "always.",  # 7 characters: too short
        "Should we always squash merge?",  # a question
        "```\nalways_run = True  # always\n```",  # code
        "Fix this:\n    always indented code",
        "x" * 400 + " always " + "y" * 30,  # over 420 characters
        *(
            f"Always {verb} before {noun}."
            for verb, noun in (
                ("format the code", "review"),
                ("update the changelog", "tagging"),
                ("bump the version", "publishing"),
                ("rebase on main", "merging"),
                ("check the migrations", "deploying"),
                ("ping the channel", "releasing"),
                ("clear the cache", "benchmarking"),
                ("read the issue", "coding"),
            )
        ),
    ]
    write_session(home, "reasonix", "s1", turns)
    result = _scan(home)
    assert len(result.memories) == MAX_MEMORIES
    assert all(m.body.startswith("Always ") for m in result.memories)
    assert result.memories[0].body == "Always format the code before review."  # newest first


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Do not push directly to main, ever. Never force-push.", True),
        ("Don't use npm here; we always use pnpm", True),
        ("When you open a PR, always link the issue.", True),
        ("Can you always answer in English from now on", True),
        ("Do you always run the linters", False),
        ("Why does it always crash on start", False),
        ("Never mind, let's fix the parser instead.", False),
        ("As always, thanks for the help.", False),
        ("这个以后再说吧。", False),
        ("默认端口是多少？", False),
        ("是否总是需要重新编译", False),
        ("> I will always run the linters first.", False),
        ("ERROR: connection was never established", False),
        ("2026-08-01 09:30:15 worker never acknowledged the job", False),
        ("ValueError: never seen this key", False),
        ("- always squash-merge feature branches", True),
        ("It always seems to spin on the second call.", False),
        ("It should always log the request id.", True),
        ("Remember the deploy token is ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8", False),  # S10.2
        ("Always cc ops-team@example.com on release mails.", False),  # an address
    ],
)
def test_rule_or_not(sentence: str, expected: bool) -> None:
    turns = [UserTurn("reasonix", "s", sentence)]
    assert bool(memory_candidates(turns, CoverageIndex())) is expected


def test_long_turn_is_split_into_sentences_and_evidence_is_bounded(home: Home) -> None:
    long_tail = "By default the API listens on port 8080 " + "and more detail " * 12 + "."
    text = f"Fix the parser crash. Also, never commit generated files. {long_tail}"
    write_session(home, "claude-code", "s1", [text])
    result = _scan(home)
    bodies = [m.body for m in result.memories]
    assert bodies[0] == "Also, never commit generated files."
    assert len(result.memories[1].evidence[0].split(": ", 1)[1]) <= 160


def test_explicit_memory_note_needs_no_marker(home: Home) -> None:
    from support.suggest import session_dir

    target = session_dir(home, "claude-code")
    target.mkdir(parents=True)
    note = "<user-memory-input>Staging deploys go through the ops channel</user-memory-input>"
    line = {"type": "user", "cwd": str(home.root), "message": {"role": "user", "content": note}}
    (target / "s.jsonl").write_text(json.dumps(line) + "\n")
    (memory,) = _scan(home).memories
    assert memory.reason == "explicit memory note"


@pytest.mark.parametrize(
    ("statement", "kind"),
    [
        ("Always run the linters before you commit.", "feedback"),
        (ZH, "feedback"),
        ("不要修改生成的文件。", "feedback"),
        ("I prefer tabs over spaces in Go files.", "user"),
        ("我偏好简洁的回答。", "user"),
        ("In this repo we always use pnpm, never npm.", "project"),
        ("项目约定：提交信息用英文。", "project"),
        ("The API server listens on 8080 by default.", "project"),
        ("Remember the runbook lives at https://wiki.example.com/runbook.", "reference"),
        ("Bugs are always tracked in Linear project INGEST.", "reference"),
        ("Remember the prod DB is at db.internal:5432, read-only for us.", "reference"),
    ],
)
def test_inferred_type(statement: str, kind: str) -> None:
    assert infer_type(statement) == kind


def test_accept_with_edits_and_never_over_an_existing_fact(home: Home) -> None:
    write_session(home, "reasonix", "s1", [EN])
    (memory,) = _scan(home).memories
    fact = accept_memory(
        Memory(home.paths), memory, Edits(name="lint first", type="project", body="Lint first.")
    )
    assert (fact.name, fact.type, fact.body.strip()) == ("lint-first", "project", "Lint first.")
    from context_engine.errors import AlreadyExists

    with pytest.raises(AlreadyExists):
        accept_memory(Memory(home.paths), memory, Edits(name="lint first"))
