"""Suggestions from real session shapes (issue 16): the Codex IDE wrapper, markers as words
only, and candidate names from what a statement says."""

from __future__ import annotations

from pathlib import Path

import pytest
from context_engine.suggestions.candidates import candidate_name
from context_engine.suggestions.readers import codex
from context_engine.suggestions.scanner import scan
from context_engine.suggestions.text import find_marker
from support import DATA
from support.suggest import Home, make_home, session_dir, write_session

FIXTURE = DATA / "codex_ide"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


def _install_ide_rollout(home: Home) -> None:
    directory = session_dir(home, "codex")
    directory.mkdir(parents=True)
    for source in FIXTURE.glob("rollout-*.jsonl"):
        text = source.read_text(encoding="utf-8").replace("@ROOT@", str(home.root))
        (directory / source.name).write_text(text, encoding="utf-8")


def test_codex_ide_wrapper_yields_only_the_typed_request(home: Home) -> None:
    _install_ide_rollout(home)
    (session,) = codex.find_sessions(home.paths.state, home.root, home.roots)
    assert [t.text for t in session.read(session).turns] == [
        "Always run the type checker before you hand a change back to me.",
        "rename `NEVER` in never-cache.ts to `NO_CACHE`",
    ]


def test_ide_state_never_becomes_a_candidate(home: Home) -> None:
    _install_ide_rollout(home)
    result = scan(home.paths, home.roots, facts=[], instruction_bodies=[])
    assert [m.body.strip() for m in result.memories] == [
        "Always run the type checker before you hand a change back to me."
    ]
    assert all(".env" not in line for m in result.memories for line in m.evidence)


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        ("- always-on.ts: src/always-on.ts", None),
        ("Open src/lib/never-cache.ts and fix the import", None),
        ("Call it with `--always` set", None),
        ("the never_cache flag is wrong", None),
        ("Never commit the .env file.", "never"),
        ("Remember: staging is read-only.", "remember"),
        ("以后都用中文回复。", "以后"),
    ],
)
def test_markers_are_words_of_prose_only(text: str, marker: str | None) -> None:
    assert find_marker(text) == marker


def test_marker_in_a_file_name_proposes_nothing(home: Home) -> None:
    write_session(
        home, "claude-code", "s1", ["Files touched:\n- always-on.ts: src/always-on.ts\n- done"]
    )
    assert scan(home.paths, home.roots, facts=[], instruction_bodies=[]).memories == ()


@pytest.mark.parametrize(
    ("statement", "name"),
    [
        ("Always use pnpm instead of npm in this repo.", "use-pnpm-instead-npm-repo"),
        ("Never force-push to main or release branches.", "force-push-main-release-branches"),
        ("I prefer tabs over spaces.", "tabs-over-spaces"),
        ("以后提交信息都用中文写。", "提交信息-用中文写"),
    ],
)
def test_candidate_names_come_from_the_content(statement: str, name: str) -> None:
    assert candidate_name(statement, set()) == name
