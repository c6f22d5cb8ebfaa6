"""Malformed and hostile fact files (S3.4, RELIABILITY §4 F2-F5): a specific reason code and
line, never silent empty metadata, never code execution, bounded work."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from context_engine.errors import FactFormatError
from context_engine.facts import yaml_strict
from context_engine.facts.codec import parse_fact, parse_fact_strict
from context_engine.facts.decoding import MAX_FACT_BYTES

MTIME = datetime(2026, 1, 1, tzinfo=UTC)


def reason(data: bytes | str) -> tuple[str, int | None]:
    raw = data.encode() if isinstance(data, str) else data
    outcomes = []
    for parse in (parse_fact, parse_fact_strict):
        with pytest.raises(FactFormatError) as info:
            parse(raw, path=Path("bad.md"), store_scope="project", mtime=MTIME)
        outcomes.append((info.value.reason, info.value.line))
    assert outcomes[0] == outcomes[1]
    return outcomes[0]


def test_nul_bytes_are_binary() -> None:
    assert reason(b"---\nname: a\n---\nbo\x00dy") == ("binary", 4)


def test_utf16_bom_allows_nul_bytes_but_not_nul_characters() -> None:
    assert reason(b"\xff\xfe" + "a\n\0b".encode("utf-16-le")) == ("binary", 2)


def test_invalid_bytes_that_are_not_gb18030_either() -> None:
    assert reason(b"---\nname: a\n---\n\xff\xff body") == ("encoding", 4)
    assert reason(b"\xef\xbb\xbf\xc3(") == ("encoding", 1)


def test_oversized_file_is_refused_before_decoding() -> None:
    assert reason(b"a" * (MAX_FACT_BYTES + 1))[0] == "too_large"


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        ("- a\n- b\n", ("not_a_mapping", 2)),
        ("just a string\n", ("not_a_mapping", 2)),
        ("42\n", ("not_a_mapping", 2)),
        ('{"name": "json", "name": "again"}\n', ("duplicate_key", 2)),
        ("name: a\nrevision: 3\nrevision: 1\n", ("duplicate_key", 4)),
        ("metadata:\n  type: user\n  type: project\n", ("duplicate_key", 4)),
        ("name: a\n1: one\n", ("non_string_key", 3)),
        ("? [a, b]\n: c\n", ("non_string_key", 2)),
        ("true: x\n", ("non_string_key", 2)),
        ("name: [unclosed\n", ("yaml_syntax", 3)),
        ("name: a\n  bad indent: b\n", ("yaml_syntax", 3)),
        ("name: a\ttab: b\n", ("yaml_syntax", 2)),
        ("metadata: [a]\n", ("invalid_metadata", 2)),
        ("metadata: text\n", ("invalid_metadata", 2)),
        ("name: a\ntitle:\n  - list\n", ("invalid_field", 3)),
        ("id: ../../etc\n", ("invalid_id", 2)),
        ("id: mem a\n", ("invalid_id", 2)),
        ("revision: three\n", ("invalid_revision", 2)),
        ("revision: 1.5\n", ("invalid_revision", 2)),
        ("revision: true\n", ("invalid_revision", 2)),
        ("name: '!!!'\n", ("invalid_name", 2)),
        ("a: !!binary aGVsbG8=\n", ("tag_forbidden", 2)),
        ("a: !custom x\n", ("tag_forbidden", 2)),
        ("a: !!set {x}\n", ("tag_forbidden", 2)),
        ("a: !!timestamp 2026-01-01\n", ("tag_forbidden", 2)),
        ("a: &anchor 1\n", ("alias_forbidden", 2)),
        ("a: [1]\nb: *a\n", ("alias_forbidden", 3)),
    ],
)
def test_malformed_frontmatter_reason_and_line(front: str, expected: tuple[str, int]) -> None:
    assert reason(f"---\n{front}---\nbody\n") == expected


def test_name_stem_without_letters_is_invalid_name() -> None:
    with pytest.raises(FactFormatError) as info:
        parse_fact(b"body", path=Path("---.md"), store_scope="project", mtime=MTIME)
    assert info.value.reason == "invalid_name"


def test_billion_laughs_is_refused_at_the_first_anchor() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n in range(1, 9):
        prev = chr(ord("a") + n - 1)
        cur = chr(ord("a") + n)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    assert reason("---\n" + "\n".join(lines) + "\n---\n") == ("alias_forbidden", 2)


def test_recursive_alias_is_refused() -> None:
    assert reason("---\na: &x [*x]\n---\n")[0] == "alias_forbidden"


@pytest.mark.slow
def test_deep_nesting_is_refused_without_recursion_error() -> None:
    assert reason("---\na: " + "[" * 5000 + "]" * 5000 + "\n---\n")[0] == "too_deep"
    nested = "".join("  " * i + f"k{i}:\n" for i in range(40))
    assert reason("---\n" + nested + "---\n")[0] == "too_deep"


@pytest.mark.parametrize(
    "tag",
    [
        "!!python/object/apply:builtins.exec",
        "!!python/object/new:builtins.exec",
        "!!python/name:builtins.exec",
        "!!python/module:os",
        "!<tag:yaml.org,2002:python/object/apply:builtins.exec>",
    ],
)
def test_python_tags_are_rejected_without_execution(tag: str, tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    payload = f"---\nname: a\nx: {tag} [\"open({str(marker)!r}, 'w').close()\"]\n---\n"
    assert reason(payload) == ("tag_forbidden", 3)
    assert not marker.exists()


def test_the_strict_loader_is_the_one_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[type] = []
    original = yaml_strict.StrictLoader.__init__

    def spy(self: yaml_strict.StrictLoader, stream: str) -> None:
        used.append(type(self))
        original(self, stream)

    monkeypatch.setattr(yaml_strict.StrictLoader, "__init__", spy)
    parse_fact_strict(b"---\nname: a\n---\n", path=Path("a.md"), store_scope="project", mtime=MTIME)
    assert used == [yaml_strict.StrictLoader]
    assert issubclass(yaml_strict.StrictLoader, __import__("yaml").SafeLoader)


def test_yaml_11_surprises_are_not_resolved() -> None:
    node = yaml_strict.compose("a: 010\nb: no\nc: 12:30\nd: 2026-01-01\ne: 0x1F\nf: 1_000\n")
    assert node is not None
    assert yaml_strict.construct(node) == (
        ("a", 10),
        ("b", "no"),
        ("c", "12:30"),
        ("d", "2026-01-01"),
        ("e", "0x1F"),
        ("f", "1_000"),
    )


def test_unexpected_exceptions_become_format_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    # A plain bug inside the codec must still surface as a FactFormatError to callers.
    def bug(_: str) -> None:
        raise KeyError("simulated bug")

    monkeypatch.setattr("context_engine.facts.codec.split_frontmatter", bug)
    with pytest.raises(FactFormatError) as info:
        parse_fact(b"x", path=Path("a.md"), store_scope="project", mtime=MTIME)
    assert info.value.reason == "unreadable"


def test_oversized_frontmatter_is_refused_but_a_big_body_is_fine() -> None:
    from context_engine.facts.codec import MAX_FRONTMATTER_CHARS

    big_front = "x: " + "a" * MAX_FRONTMATTER_CHARS + "\n"
    assert reason(f"---\n{big_front}---\nbody") == ("frontmatter_too_large", 1)
    body = "word " * (MAX_FRONTMATTER_CHARS // 2)
    fact = parse_fact(
        f"---\nname: big\n---\n{body}".encode(),
        path=Path("big.md"),
        store_scope="project",
        mtime=MTIME,
    ).fact
    assert fact.body == body.rstrip()
