"""Transcript readers: only real user turns, per format (S11.2, transcripts.md §1, §4-§6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from context_engine.suggestions.readers import FINDERS, claude_code, codex, gemini, reasonix
from context_engine.suggestions.sessions import list_sessions, load_recent
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.suggest import EN, FORMATS, ZH, Home, install, make_home, session_dir


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


def _turns(home: Home, fmt: str) -> tuple[list[str], int]:
    finder = dict(FINDERS)[fmt]
    texts: list[str] = []
    corrupt = 0
    for session in finder(home.paths.state, home.root, home.roots):
        if session.belongs is not None and not session.belongs(session):
            continue
        result = session.read(session)
        texts += [t.text for t in result.turns]
        corrupt += result.corrupt_lines
    return texts, corrupt


@pytest.mark.parametrize("fmt", FORMATS)
def test_fixture_yields_exactly_the_typed_turns(home: Home, fmt: str) -> None:
    install(home, fmt)
    texts, corrupt = _turns(home, fmt)
    expected = [ZH, EN, "Fix the flaky parser test please."]
    if fmt == "gemini":  # two chat files: the .json one and the newer .jsonl one
        assert sorted(texts) == sorted([*expected, ZH, EN])
        assert corrupt == 1
    else:
        assert texts == expected
        assert corrupt == 1
    assert not any("INJECTED" in t for t in texts)


@pytest.mark.parametrize("fmt", FORMATS)
def test_negative_fixture_has_no_marker_turns(home: Home, fmt: str) -> None:
    from support.suggest import DATA

    install(home, fmt, DATA / "negative" / fmt)
    texts, _ = _turns(home, fmt)
    assert texts == ["Thanks, looks good."]


def test_reasonix_sidecars_subagents_and_cleanup_pending_are_not_sessions(home: Home) -> None:
    install(home, "reasonix")
    directory = session_dir(home, "reasonix")
    (directory / "20260901-000000.000000000-x.jsonl").write_text(
        '{"role":"user","content":"hidden"}\n'
    )
    (directory / "20260901-000000.000000000-x.cleanup-pending.json").write_text("{}")
    ids = [s.session_id for s in reasonix.find_sessions(home.paths.state, home.root, home.roots)]
    assert ids == ["20260801-093015.123456789-deepseek-v4-flash"]


def test_reasonix_global_sessions_kept_only_when_the_sidecar_names_the_root(home: Home) -> None:
    glob = home.paths.state / "sessions"
    glob.mkdir(parents=True)
    for name, ws in (("mine", str(home.root)), ("theirs", "/elsewhere/proj"), ("bare", None)):
        (glob / f"{name}.jsonl").write_text('{"role":"user","content":"x"}\n')
        if ws is not None:
            (glob / f"{name}.jsonl.meta").write_text(json.dumps({"workspace_root": ws}))
    found = reasonix.find_sessions(home.paths.state, home.root, home.roots)
    ids = [s.session_id for s in found if s.belongs is None or s.belongs(s)]
    assert ids == ["mine"]


def test_reasonix_user_text_rules() -> None:
    wrapped = (
        "<reasoning-language>\nzh\n</reasoning-language>\n"
        "<hook-context>x</hook-context>\nhello there"
    )
    assert reasonix.user_text({"role": "user", "content": wrapped}) == "hello there"
    trailing = "do it\n<memory-recall>\nproject/x.md\n</memory-recall>"
    assert reasonix.user_text({"role": "user", "content": trailing}) == "do it"
    assert reasonix.user_text({"role": "user", "content": "Host progress check: x"}) is None
    assert reasonix.user_text({"role": "user", "origin": "host", "content": "typed?"}) is None
    raw = {"role": "user", "content": "<memory-update>x</memory-update>y", "raw_content": "typed"}
    assert reasonix.user_text(raw) == "typed"


def test_reasonix_memory_v5_turn_reads_as_the_original_prompt() -> None:
    contract = {
        "type": "memory_v5_execution_contract",
        "planner_ir": {"source_event": "Always keep answers short."},
    }
    content = (
        "<memory-update>\nnote\n</memory-update>\n<memory-compiler-execution>"
        + json.dumps(contract)
        + "</memory-compiler-execution>"
    )
    assert reasonix.user_text({"role": "user", "content": content}) == "Always keep answers short."
    broken = "<memory-compiler-execution>{not json</memory-compiler-execution>"
    assert reasonix.user_text({"role": "user", "content": broken}) is None  # unrecoverable


def test_claude_memory_shortcut_is_an_explicit_turn(home: Home) -> None:
    line = {
        "type": "user",
        "cwd": str(home.root),
        "message": {"role": "user", "content": "<user-memory-input>use pnpm</user-memory-input>"},
    }
    turn = claude_code.user_turn(line, home.root, "s")
    assert turn is not None and turn.explicit and turn.text == "use pnpm"


def test_claude_line_from_a_colliding_directory_is_not_this_workspace(home: Home) -> None:
    # /x/my_app and /x/my-app share one sanitized directory: the per-line cwd decides.
    line = {"type": "user", "cwd": str(home.root) + "_other", "message": {"content": "hello"}}
    assert claude_code.user_turn(line, home.root, "s") is None
    sub = {"type": "user", "cwd": str(home.root / "sub"), "message": {"content": "hello"}}
    assert claude_code.user_turn(sub, home.root, "s") is not None


def test_codex_fallback_filters_contextual_messages(home: Home) -> None:
    directory = session_dir(home, "codex")
    directory.mkdir(parents=True)
    rows = [
        {"type": "session_meta", "payload": {"cwd": str(home.root)}},
        *(
            {
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": role,
                    "content": [{"type": "input_text", "text": text}],
                },
            }
            for role, text in (
                (
                    "user",
                    f"# AGENTS.md instructions for {home.root}\n\n"
                    f"<INSTRUCTIONS>\n{EN}\n</INSTRUCTIONS>",
                ),
                ("user", f"<USER_INSTRUCTIONS>{EN}</USER_INSTRUCTIONS>"),
                ("developer", EN),
                ("user", "## My request for Codex:\nship it"),
            )
        ),
    ]
    path = directory / "rollout-2026-08-01T00-00-00-a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (session,) = codex.find_sessions(home.paths.state, home.root, home.roots)
    assert [t.text for t in session.read(session).turns] == ["ship it"]


def test_codex_old_kind_field_keeps_only_plain(home: Home) -> None:
    directory = session_dir(home, "codex")
    directory.mkdir(parents=True)
    rows = [
        {"type": "session_meta", "payload": {"cwd": str(home.root / "pkg")}},
        {
            "type": "event_msg",
            "payload": {"type": "user_message", "message": EN, "kind": "user_instructions"},
        },
        {
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "typed", "kind": "plain"},
        },
    ]
    (directory / "rollout-x.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (session,) = codex.find_sessions(home.paths.state, home.root, home.roots)
    assert session.belongs is not None and session.belongs(session)  # cwd under the root
    assert [t.text for t in session.read(session).turns] == ["typed"]


def test_gemini_slug_directory_found_by_project_root_marker(home: Home) -> None:
    directory = session_dir(home, "gemini", gemini_slug=True)
    directory.mkdir(parents=True)
    (directory / "session-2026-08-01T09-30-aaaa.json").write_text(
        json.dumps({"messages": [{"id": "1", "type": "user", "content": [{"text": "hi there"}]}]})
    )
    found = gemini.find_sessions(home.paths.state, home.root, home.roots)
    assert [s.session_id for s in found] == ["session-2026-08-01T09-30-aaaa"]


def test_gemini_registry_slug(home: Home) -> None:
    project = home.roots.gemini / "tmp" / "custom-slug" / "chats"
    project.mkdir(parents=True)
    (project / "session-x.json").write_text(json.dumps({"messages": []}))
    (home.roots.gemini / "projects.json").write_text(
        json.dumps({"projects": {str(home.root): "custom-slug"}})
    )
    assert [d.name for d in gemini.project_dirs(home.roots.gemini, home.root)] == ["custom-slug"]


def test_a_corrupt_whole_file_is_counted_not_fatal(home: Home) -> None:
    directory = session_dir(home, "gemini")
    directory.mkdir(parents=True)
    (directory / "session-bad.json").write_bytes(b"\xff\xfe{not json")
    recent = load_recent(home.paths.state, home.root, home.roots)
    assert recent.sessions == []
    assert [d.code for d in recent.diagnostics] == ["corrupt_lines"]


def test_listing_is_stat_only_and_newest_first(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    for fmt in FORMATS:
        install(home, fmt)
    opened: list[Path] = []
    from context_engine.suggestions.readers import _io

    real = _io.read_bytes
    monkeypatch.setattr(_io, "read_bytes", lambda p: opened.append(p) or real(p))
    sessions = list_sessions(home.paths.state, home.root, home.roots)
    assert len(sessions) == 5
    assert [s.mtime_ns for s in sessions] == sorted((s.mtime_ns for s in sessions), reverse=True)
    # Listing reads no session: only Gemini's project registry is looked up.
    assert [p.name for p in opened] == ["projects.json"]
    opened.clear()
    load_recent(home.paths.state, home.root, home.roots)
    read = sorted(p.name for p in opened if p.name != "projects.json")
    assert read == sorted(s.path.name for s in sessions)  # the seam does see every session


def test_unreadable_session_is_a_diagnostic(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    from context_engine.suggestions.readers import _io

    install(home, "claude-code")
    install(home, "codex")

    def broken(path: Path) -> bytes:
        if path.suffix == ".jsonl" and "claude" in str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    real = _io.read_bytes
    monkeypatch.setattr(_io, "read_bytes", broken)
    recent = load_recent(home.paths.state, home.root, home.roots)
    assert [s.source for s, _ in recent.sessions] == ["codex"]
    assert "unreadable" in [d.code for d in recent.diagnostics]


def test_a_reader_failure_costs_one_session(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    install(home, "gemini")
    install(home, "codex")

    def explode(data: Any, jsonl: bool, result: Any) -> list[Any]:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(gemini, "_messages", explode)
    recent = load_recent(home.paths.state, home.root, home.roots)
    assert [s.source for s, _ in recent.sessions] == ["codex"]
    assert [d.code for d in recent.diagnostics].count("unreadable") == 2


def test_deeply_nested_json_is_a_corrupt_line(home: Home) -> None:
    directory = session_dir(home, "claude-code")
    directory.mkdir(parents=True)
    line = json.dumps({"type": "user", "message": {"content": "Always keep notes."}})
    (directory / "s.jsonl").write_text("[" * 100_000 + "\n" + line + "\n")
    (session,) = claude_code.find_sessions(home.paths.state, home.root, home.roots)
    result = session.read(session)
    assert result.corrupt_lines == 1 and [t.text for t in result.turns] == ["Always keep notes."]


def test_bom_and_huge_lines(home: Home) -> None:
    directory = session_dir(home, "reasonix")
    directory.mkdir(parents=True)
    huge = "x" * 3_000_000
    lines = [
        json.dumps({"role": "user", "content": "Always keep the changelog current."}),
        json.dumps({"role": "assistant", "content": huge}),
        json.dumps({"role": "user", "content": "short"}),
    ]
    (directory / "s.jsonl").write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode())
    (session,) = reasonix.find_sessions(home.paths.state, home.root, home.roots)
    result = session.read(session)
    assert [t.text for t in result.turns] == ["Always keep the changelog current.", "short"]
    assert result.corrupt_lines == 0


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_LINE = st.one_of(
    _JSON.map(json.dumps),
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", 3]),
            "type": st.sampled_from(["user", "event_msg", "response_item", "session_meta"]),
            "content": _JSON,
            "message": _JSON,
            "payload": _JSON,
            "raw_content": _JSON,
        }
    ).map(json.dumps),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)


@pytest.mark.slow
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_LINE, max_size=8))
def test_any_content_never_breaks_a_scan(tmp_path: Path, lines: list[str]) -> None:
    from context_engine.suggestions.scanner import scan

    home = make_home(tmp_path / str(abs(hash(tuple(lines)))))
    text = "\n".join(lines)
    for fmt in FORMATS:
        directory = session_dir(home, fmt)
        directory.mkdir(parents=True, exist_ok=True)
        name = {"codex": "rollout-x.jsonl", "gemini": "session-x.json"}.get(fmt, "s.jsonl")
        body = text
        if fmt == "codex":
            body = (
                json.dumps({"type": "session_meta", "payload": {"cwd": str(home.root)}})
                + "\n"
                + text
            )
        (directory / name).write_text(body, encoding="utf-8", errors="surrogatepass")
    result = scan(home.paths, home.roots, facts=[], instruction_bodies=[])
    assert result.available
