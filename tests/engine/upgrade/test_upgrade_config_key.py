"""Removal of the retired [agent].memory_compiler key (S5.4): line-based, TOML-aware, the rest
of the file byte-identical, atomic, one notice."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from context_engine.upgrade import config_key
from context_engine.upgrade.config_key import remove_memory_compiler_key, strip_retired_key
from context_engine.upgrade.toml_lines import TomlScanError

CONFIG = '''# Reasonix settings
model = "deepseek"

[agent]
name = "coder"
system_prompt = """
memory_compiler = "this line is inside a string"
[agent]
"""
memory_compiler = "v5"   # retired in v2
literal = \'\'\'
memory_compiler = 'also inside'
\'\'\'
tools = [
  "read", # comment with memory_compiler = x
  "memory_compiler = y",
]
max_turns = 40

[other]
memory_compiler = "a different table keeps it"

[agent.sub]
memory_compiler = "a sub-table keeps it"
'''


def test_only_the_agent_key_lines_go_and_the_rest_is_byte_identical() -> None:
    updated, changed = strip_retired_key(CONFIG)
    assert changed
    assert updated == CONFIG.replace('memory_compiler = "v5"   # retired in v2\n', "")
    before = tomllib.loads(CONFIG)
    after = tomllib.loads(updated)
    del before["agent"]["memory_compiler"]
    assert after == before


def test_multiline_values_are_removed_whole() -> None:
    text = (
        "[agent]\n"
        'memory_compiler = """\nfirst\nmemory_compiler = x\n"""\n'
        "keep = 1\n"
        "[agent]\n"  # invalid TOML duplicate header is not our business: scanner only
    )
    updated, changed = strip_retired_key(text)
    assert changed
    assert updated == "[agent]\nkeep = 1\n[agent]\n"
    array = '[agent]\nmemory_compiler = [\n  "a",\n  # c\n  { x = 1 },\n]\nkeep = 2\n'
    assert strip_retired_key(array) == ("[agent]\nkeep = 2\n", True)


def test_dotted_root_key_quoted_key_and_crlf() -> None:
    text = 'a = 1\r\nagent.memory_compiler = "x"\r\n[agent]\r\n"memory_compiler" = 2\r\nb = 3\r\n'
    assert strip_retired_key(text) == ("a = 1\r\n[agent]\r\nb = 3\r\n", True)


def test_no_key_means_no_change() -> None:
    text = '[agent]\nname = "a"\n[other]\nmemory_compiler = 1\n'
    assert strip_retired_key(text) == (text, False)
    assert strip_retired_key("") == ("", False)


@pytest.mark.parametrize(
    "bad",
    ['[agent]\nmemory_compiler = """never closed\n', "[agent\nx = 1\n", "[agent]\nx 1\n"],
)
def test_unreadable_toml_raises_scan_error(bad: str) -> None:
    with pytest.raises(TomlScanError):
        strip_retired_key(bad)


def test_file_rewrite_returns_a_notice_once(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    raw = CONFIG.encode() + b"# latin-1 byte kept: \xe9\n"
    path.write_bytes(raw)
    os.chmod(path, 0o640)
    notice = remove_memory_compiler_key(path)
    assert notice is not None and "memory_compiler" in notice and str(path) in notice
    assert path.read_bytes() == raw.replace(b'memory_compiler = "v5"   # retired in v2\n', b"")
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert remove_memory_compiler_key(path) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_missing_or_unparseable_file_is_left_alone(tmp_path: Path) -> None:
    assert remove_memory_compiler_key(tmp_path / "absent.toml") is None
    bad = tmp_path / "config.toml"
    bad.write_bytes(b'[agent]\nmemory_compiler = "unterminated\n')
    assert remove_memory_compiler_key(bad) is None
    assert bad.read_bytes() == b'[agent]\nmemory_compiler = "unterminated\n'


def test_a_failed_write_leaves_the_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)

    def no_space(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(config_key.os, "replace", no_space)
    with pytest.raises(OSError):
        remove_memory_compiler_key(path)
    assert path.read_text() == CONFIG
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]


# ---------------------------------------------------------------- property test

import json  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_CONTENT = st.lists(
    st.one_of(
        st.sampled_from(["\n", "memory_compiler = 1\n", "[agent]\n", '"', "'", "#", "=", "\\"]),
        st.characters(min_codepoint=0x20, max_codepoint=0x2FF, exclude_characters="\x7f"),
    ),
    max_size=30,
).map("".join)


def _toml_value(kind: str, content: str) -> str:
    if kind == "int":
        return str(len(content))
    if kind == "basic":
        return json.dumps(content, ensure_ascii=False)
    if kind == "literal_ml":
        return "'''\n" + content.replace("'", "") + "'''"
    if kind == "basic_ml":
        escaped = content.replace("\\", "\\\\").replace('"', '\\"')
        return '"""\n' + escaped + '"""'
    return "[\n  " + json.dumps(content, ensure_ascii=False) + ", # c\n  2,\n]"


_KINDS = st.sampled_from(["int", "basic", "literal_ml", "basic_ml", "array"])
_ENTRY = st.tuples(st.sampled_from(["memory_compiler", "name", "x"]), _KINDS, _CONTENT)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["agent", "other", "agent.sub"]), st.lists(_ENTRY, max_size=4)),
        max_size=4,
        unique_by=lambda t: t[0],
    ),
    st.booleans(),
)
def test_removal_equals_deleting_the_key_from_the_parsed_document(
    tables: list[tuple[str, list[tuple[str, str, str]]]], crlf: bool
) -> None:
    lines: list[str] = []
    for table, entries in tables:
        lines.append(f"[{table}]")
        seen: set[str] = set()
        for key, kind, content in entries:
            if key in seen:
                continue
            seen.add(key)
            lines.append(f"{key} = {_toml_value(kind, content)}")
    text = "\n".join(lines) + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    try:
        expected = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return  # (e.g. "agent" after "agent.sub" redefinition rules) not a config to test
    updated, changed = strip_retired_key(text)
    agent = expected.get("agent", {})
    assert changed == ("memory_compiler" in agent)
    agent.pop("memory_compiler", None)
    assert tomllib.loads(updated) == expected
    if not changed:
        assert updated == text


def test_both_config_files_of_a_workspace(tmp_path: Path) -> None:
    from context_engine.paths import EnginePaths
    from context_engine.upgrade.config_key import remove_retired_config_keys

    home = tmp_path / "home"
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".reasonix").mkdir()
    home.mkdir()
    (home / "config.toml").write_text('[agent]\nmemory_compiler = "v5"\nname = "x"\n')
    (root / ".reasonix" / "config.toml").write_text('[agent]\nname = "y"\n')
    paths = EnginePaths.resolve(home=home, workspace=root)
    notices = remove_retired_config_keys(paths)
    assert len(notices) == 1 and str(home / "config.toml") in notices[0]
    assert (home / "config.toml").read_text() == '[agent]\nname = "x"\n'
    assert (root / ".reasonix" / "config.toml").read_text() == '[agent]\nname = "y"\n'
    assert remove_retired_config_keys(paths) == []


def test_a_symlinked_config_keeps_its_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "reasonix.toml"
    real.write_text('[agent]\nmemory_compiler = "v5"\n')
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    assert remove_memory_compiler_key(link) is not None
    assert link.is_symlink()
    assert real.read_text() == "[agent]\n"


def test_space_separated_datetimes_and_arrays_of_tables() -> None:
    text = (
        "[agent]\nsince = 1979-05-27 07:32:00Z\nmemory_compiler = 1\n"
        "[[agent.hooks]]\nmemory_compiler = 2\n"
    )
    assert strip_retired_key(text) == (
        "[agent]\nsince = 1979-05-27 07:32:00Z\n[[agent.hooks]]\nmemory_compiler = 2\n",
        True,
    )
    array_of_tables = "[[agent]]\nmemory_compiler = 1\n"
    assert strip_retired_key(array_of_tables) == (array_of_tables, False)
