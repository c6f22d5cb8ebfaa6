"""Skill candidates from workflows repeated across sessions, and accepting them (S11.4, S11.5)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from context_engine.errors import AlreadyExists
from context_engine.suggestions.accept import Edits, accept_skill, render_skill
from context_engine.suggestions.model import SkillCandidate
from context_engine.suggestions.scanner import scan
from context_engine.suggestions.workflows import signatures
from support.suggest import Home, make_home, write_session

PR_A = "Please update the pull request after review."
PR_B = "The reviewers left comments. Can you update the PR once you've read them?"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


def _skills(home: Home) -> tuple[SkillCandidate, ...]:
    return scan(home.paths, home.roots, facts=[], instruction_bodies=[]).skills


def test_pr_update_in_two_sessions_is_one_skill_with_two_evidence_lines(home: Home) -> None:
    write_session(home, "claude-code", "a", ["Fix the flaky parser test.", PR_A], mtime=1)
    write_session(home, "codex", "b", ["Explain the lexer to me.", PR_B], mtime=2)
    (skill,) = _skills(home)
    assert skill.name == "update-pr"
    assert skill.evidence == (
        "rollout-2026-08-01T09-30-15-b: Can you update the PR once you've read them?",
        f"a: {PR_A}",
    )
    assert "## Steps" in skill.body and "## Evidence" in skill.body
    assert skill.id.startswith("sug-skill-")


def test_one_session_is_not_a_repeated_workflow(home: Home) -> None:
    write_session(home, "reasonix", "a", [PR_A, "Now update the PR again after the second review."])
    assert _skills(home) == ()


def test_steps_follow_the_order_seen_in_the_sessions(home: Home) -> None:
    write_session(home, "reasonix", "a",
                  [PR_A, "Then run `make lint` and push.", "Rename the config."], mtime=1)
    write_session(home, "gemini", "b", [PR_B, "Run `make lint` please."], mtime=2)
    (skill,) = _skills(home)
    steps = [line for line in skill.body.splitlines() if line[:2] in ("1.", "2.", "3.")]
    assert steps[0].startswith("1. Update PR — as asked: “Can you update the PR")
    assert steps[1] == "2. Run `make lint` — as asked: “Run `make lint` please.”"
    assert len(steps) == 2


def test_one_sentence_asking_for_two_steps_is_quoted_once(home: Home) -> None:
    ask = "Update the PR after review and run `make test` again."
    write_session(home, "reasonix", "a", [ask], mtime=1)
    write_session(home, "codex", "b", ["update the pull request, then run `make test`"], mtime=2)
    (skill,) = _skills(home)
    steps = [line for line in skill.body.splitlines() if line[:2] in ("1.", "2.")]
    assert steps == [
        "1. Update PR — as asked: “update the pull request, then run `make test`”",
        "2. Run `make test`",
    ]


def test_command_lines_are_workflows_too(home: Home) -> None:
    write_session(home, "codex", "a", ["Check out `gh pr checkout 41` and review it."], mtime=1)
    write_session(home, "codex", "c", ["use `gh pr checkout 7 --force` first"], mtime=2)
    names = [s.name for s in _skills(home)]
    assert "gh-pr-checkout" in names


@pytest.mark.parametrize(
    "existing", [".reasonix/skills/update-pr/SKILL.md", ".claude/skills/update-pr/SKILL.md"]
)
def test_existing_project_skill_is_not_proposed(home: Home, existing: str) -> None:
    path = home.root / existing
    path.parent.mkdir(parents=True)
    path.write_text("---\nname: update-pr\ndescription: x\n---\n")
    write_session(home, "claude-code", "a", [PR_A], mtime=1)
    write_session(home, "codex", "b", [PR_B], mtime=2)
    assert _skills(home) == ()


def test_existing_home_skill_is_not_proposed(home: Home) -> None:
    skills = home.paths.home / "skills"
    skills.mkdir(parents=True)
    (skills / "Update-PR.md").write_text("---\nname: Update-PR\ndescription: x\n---\n")
    write_session(home, "claude-code", "a", [PR_A], mtime=1)
    write_session(home, "codex", "b", [PR_B], mtime=2)
    assert _skills(home) == ()


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Please update the pull request after review.", ["update pr"]),
        ("Could you rerun the failing unit tests?", ["rerun failing test"]),
        ("Fixed the bug yesterday.", []),
        ("What does this do?", []),
        ("Thanks, looks good.", []),
        ("Fix the bug.", []),
        ("帮我更新一下PR。", ["更新 pr"]),
        ("请更新 pull request", ["更新 pr"]),
        ("再跑一遍测试", ["跑测试"]),
        ("这个测试为什么失败？", []),
        ("看看这个问题", []),
        ("Fix the flaky parser bug.", ["fix flaky parser bug"]),
        ("Run `pytest -q tests/` then commit", ["run pytest"]),
    ],
)
def test_signatures(sentence: str, expected: list[str]) -> None:
    assert signatures(sentence) == expected


def test_accept_writes_skill_md_once_with_frontmatter(home: Home) -> None:
    write_session(home, "claude-code", "a", [PR_A], mtime=1)
    write_session(home, "codex", "b", [PR_B], mtime=2)
    (skill,) = _skills(home)
    edited = Edits(description="Update a PR: address review, verify, push")
    path = accept_skill(home.paths, skill, edited)
    assert path == home.root / ".reasonix" / "skills" / "update-pr" / "SKILL.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    front, body = text[4:].split("\n---\n\n", 1)
    assert yaml.safe_load(front) == {
        "name": "update-pr",
        "description": "Update a PR: address review, verify, push",
    }
    assert body == skill.body.rstrip() + "\n"
    before = path.read_bytes()
    with pytest.raises(AlreadyExists):
        accept_skill(home.paths, skill)
    assert path.read_bytes() == before
    # Once it exists, the next scan stops proposing it.
    assert _skills(home) == ()


def test_accept_refuses_a_flat_skill_of_that_name(home: Home) -> None:
    flat = home.root / ".reasonix" / "skills" / "update-pr.md"
    flat.parent.mkdir(parents=True)
    flat.write_text("hand written")
    skill = SkillCandidate("sug-skill-x", "update-pr", "d", (), "# body")
    with pytest.raises(AlreadyExists):
        accept_skill(home.paths, skill)
    assert flat.read_text() == "hand written"
    assert not (flat.parent / "update-pr").exists()


def test_render_skill_quotes_what_yaml_would_misread() -> None:
    text = render_skill("x", "yes: no # not a comment", "# X\n\nbody\n\n\n")
    assert yaml.safe_load(text.split("---\n")[1]) == {
        "name": "x",
        "description": "yes: no # not a comment",
    }
    assert text.endswith("body\n")


def test_chinese_requests_repeated_in_two_sessions(home: Home) -> None:
    write_session(home, "reasonix", "a", ["帮我更新一下PR。"], mtime=1)
    write_session(home, "gemini", "b", ["评审意见都处理好了。请更新 pull request"], mtime=2)
    (skill,) = _skills(home)
    assert skill.name.startswith("workflow-pr-") and len(skill.evidence) == 2
    assert skill.body.startswith("# 更新 PR")
    assert [s.name for s in _skills(home)] == [skill.name]  # stable across scans


def test_a_secret_in_the_ask_never_reaches_evidence(home: Home) -> None:
    secret = "Deploy the staging stack with TOKEN=" + "Zx9" * 8 + " please."
    write_session(home, "reasonix", "a", [secret], mtime=1)
    write_session(home, "codex", "b", ["Deploy the staging stack now."], mtime=2)
    write_session(home, "gemini", "c", ["deploy the staging stack again"], mtime=3)
    (skill,) = _skills(home)
    assert len(skill.evidence) == 2 and "TOKEN" not in skill.body
