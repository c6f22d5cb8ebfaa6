"""Lenient reading (S3.4, S3.6, S5.1): legacy shapes, encodings, defaults; reading never fails
on a shape Reasonix itself reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from context_engine.facts.codec import (
    ParsedFact,
    format_timestamp,
    legacy_id,
    parse_fact,
    parse_fact_strict,
    parse_timestamp,
    render_fact,
)
from context_engine.facts.model import Scope

MTIME = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def read(data: bytes | str, name: str = "some-fact.md", scope: Scope = "project") -> ParsedFact:
    raw = data.encode() if isinstance(data, str) else data
    fast = parse_fact(raw, path=Path("/store") / name, store_scope=scope, mtime=MTIME)
    strict = parse_fact_strict(raw, path=Path("/store") / name, store_scope=scope, mtime=MTIME)
    assert fast == strict
    return fast


def test_flat_legacy_keys_and_defaults() -> None:
    parsed = read("---\ntype: user\nscope: global\ndescription: old style\n---\nhello\n")
    fact = parsed.fact
    assert parsed.needs_upgrade
    assert (fact.type, fact.scope, fact.name, fact.revision) == ("user", "global", "some-fact", 1)
    assert fact.id == legacy_id("some-fact", "global")
    assert fact.created_at == MTIME == fact.updated_at
    assert fact.body == "hello"
    assert fact.extra == ()


def test_legacy_id_scope_comes_from_frontmatter_else_type_s36() -> None:
    # No scope in the file: user/feedback hash as global, others as project — even when the
    # file sits in the other store (the type never implies the scope of the fact itself).
    user = read("---\nname: legacy-fact\nmetadata:\n  type: user\n---\nx", scope="project").fact
    assert user.id == legacy_id("legacy-fact", "global")
    assert user.scope == "project"
    proj = read("---\nname: legacy-fact\ntype: project\n---\nx", scope="global").fact
    assert proj.id == "legacy-0c0ec20229014fe8e310b2e1"
    assert proj.scope == "global"
    declared = read("---\nname: shared-name\ntype: user\nscope: project\n---\nx").fact
    assert declared.id == "legacy-d24aa09ff293a5fbd6838d46"
    assert read("---\nname: Shared Name\nscope: global\n---\n").fact.id == (
        "legacy-e46f4a527fb555b2e2ee9de4"
    )


def test_legacy_file_read_twice_gives_same_id() -> None:
    data = "---\ndescription: d\n---\nbody"
    assert read(data).fact.id == read(data).fact.id == legacy_id("some-fact", "project")


def test_fact_type_wins_over_type_and_unknown_type_is_project() -> None:
    both = "---\nname: a\nmetadata:\n  type: user\n  fact_type: reference\n  scope: global\n---\n"
    assert read(both).fact.type == "reference"
    bad_fact_type = "---\nname: a\nmetadata:\n  type: user\n  fact_type: bogus\n---\n"
    assert read(bad_fact_type).fact.type == "user"
    assert read("---\nname: a\ntype: decision\n---\n").fact.type == "project"
    nested_first = "---\nname: a\ntype: user\nmetadata:\n  type: reference\n---\n"
    assert read(nested_first).fact.type == "reference"


def test_invalid_or_missing_scope_reads_from_the_store() -> None:
    assert read("---\nname: a\nmetadata:\n  scope: galaxy\n---\n", scope="global").fact.scope == (
        "global"
    )
    assert read("---\nname: a\n---\n", scope="project").fact.scope == "project"


def test_revision_zero_or_negative_reads_as_one_and_needs_upgrade() -> None:
    for value in ("0", "-2", '"0"'):
        parsed = read(f"---\nid: mem-a\nrevision: {value}\nname: a\n---\n")
        assert parsed.fact.revision == 1
        assert parsed.needs_upgrade
    ok = read("---\nid: mem-a\nrevision: 7\nname: a\n---\n")
    assert (ok.fact.revision, ok.needs_upgrade) == (7, False)
    no_rev = read("---\nid: mem-a\nname: a\n---\n")
    assert no_rev.needs_upgrade
    empty_id = read('---\nid: ""\nrevision: 2\nname: a\n---\n')
    assert empty_id.needs_upgrade
    assert empty_id.fact.id == legacy_id("a", "project")


def test_missing_name_is_file_stem_and_names_are_slugged() -> None:
    assert read("---\ndescription: x\n---\n", name="Prefers Tabs.md").fact.name == "prefers-tabs"
    assert read("---\nname: ../outside\n---\n").fact.name == "outside"
    assert read("---\nname: 记忆召回\n---\n").fact.name == "记忆召回"


def test_unclosed_or_missing_fence_means_whole_file_is_body() -> None:
    unclosed = read("---\nname: x\ndescription: never closed\n")
    assert unclosed.fact.body == "---\nname: x\ndescription: never closed"
    assert unclosed.fact.name == "some-fact"
    assert unclosed.needs_upgrade
    plain = read("Just a note.\n\n")
    assert plain.fact.body == "Just a note."
    assert read("").fact.body == ""
    assert read("---").fact.body == "---"


def test_fence_lines_may_carry_trailing_blanks_and_crlf() -> None:
    data = "---  \r\nid: mem-a\r\nrevision: 2\r\nname: crlf\r\n--- \r\n\r\nline one\r\nline two\r\n"
    fact = read(data).fact
    assert (fact.id, fact.revision, fact.name) == ("mem-a", 2, "crlf")
    # Body line ends are kept (nothing lost); only the ends are trimmed.
    assert fact.body == "line one\r\nline two"


def test_only_the_first_closing_fence_splits() -> None:
    parsed = read("---\nname: a\ndescription: |\n  text\n  ---\n---\nbody\n---\nmore\n")
    assert parsed.fact.description == "text ---"
    assert parsed.fact.body == "body\n---\nmore"
    # "----" and "---x" are not fences; the file then has no closing fence: all body.
    assert read("---\nname: a\n----\n---x\n").fact.body == "---\nname: a\n----\n---x"


def test_utf8_bom_is_accepted() -> None:
    parsed = read(b"\xef\xbb\xbf---\nname: bom\n---\nbody")
    assert (parsed.fact.name, parsed.encoding) == ("bom", "utf-8-sig")


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_with_bom(encoding: str) -> None:
    text = "---\nname: 记忆\ntitle: 十六位\nmetadata:\n  type: user\n---\n正文\n"
    bom = b"\xff\xfe" if encoding.endswith("le") else b"\xfe\xff"
    parsed = read(bom + text.encode(encoding))
    assert (parsed.fact.name, parsed.fact.title, parsed.fact.body) == ("记忆", "十六位", "正文")
    assert parsed.encoding == encoding


def test_gb18030_file_reads_correctly() -> None:
    text = "---\nname: 项目约定\ndescription: 中文描述\nmetadata:\n  type: project\n---\n正文内容\n"
    data = text.encode("gb18030")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    parsed = read(data)
    assert (parsed.fact.name, parsed.fact.description, parsed.fact.body) == (
        "项目约定",
        "中文描述",
        "正文内容",
    )
    assert parsed.encoding == "gb18030"


def test_timestamps_offsets_dates_and_garbage() -> None:
    data = (
        "---\nid: mem-a\nrevision: 1\nname: a\n"
        'created_at: "2026-07-01"\nupdated_at: 2026-07-01T12:00:00+02:00\n---\n'
    )
    fact = read(data).fact
    assert fact.created_at == datetime(2026, 7, 1, tzinfo=UTC)
    assert fact.updated_at == datetime(2026, 7, 1, 10, tzinfo=UTC)
    garbage = read("---\nname: a\ncreated_at: soon\nupdated_at: 12\n---\n").fact
    assert garbage.created_at == MTIME == garbage.updated_at


def test_naive_mtime_is_taken_as_utc() -> None:
    naive = datetime(2026, 1, 1, 12)
    fact = parse_fact(b"x", path=Path("a.md"), store_scope="project", mtime=naive).fact
    assert fact.created_at == datetime(2026, 1, 1, 12, tzinfo=UTC)


def test_values_keep_their_source_text() -> None:
    data = "---\nname: a\ntitle: 010\ndescription: no\n---\n"
    fact = read(data).fact
    assert (fact.title, fact.description) == ("010", "no")
    assert read("---\nname: a\ntitle: ~\ndescription: null\n---\n").fact.title == ""


def test_stamp_and_path_are_filled_but_not_compared() -> None:
    from context_engine.facts.model import FileStamp

    stamp = FileStamp(device=1, inode=2, size=3, mtime_ns=4)
    parsed = parse_fact(b"x", path=Path("/s/a.md"), store_scope="global", mtime=MTIME, stamp=stamp)
    assert parsed.fact.stamp == stamp
    assert parsed.fact.path == Path("/s/a.md")


def test_migration_output_is_canonical_and_stable() -> None:
    parsed = read("---\ntype: feedback\n---\n\n  Keep answers short.  \n\n")
    first = render_fact(parsed.fact)
    again = read(first)
    assert not again.needs_upgrade
    assert again.fact == parsed.fact
    assert render_fact(again.fact) == first


def test_timestamp_format_and_parse() -> None:
    assert format_timestamp(datetime(2026, 7, 27, 10, 11, 12, 500000, tzinfo=UTC)) == (
        "2026-07-27T10:11:12.5Z"
    )
    assert format_timestamp(datetime(2026, 7, 1, tzinfo=UTC)) == "2026-07-01T00:00:00Z"
    plus2 = timezone(timedelta(hours=2))
    assert format_timestamp(datetime(2026, 7, 1, 2, tzinfo=plus2)) == "2026-07-01T00:00:00Z"
    assert format_timestamp(datetime(2026, 7, 1, 0, 0, 0, 120, tzinfo=UTC)) == (
        "2026-07-01T00:00:00.00012Z"
    )
    assert parse_timestamp("2026-07-27T10:11:12.123456789Z") == datetime(
        2026, 7, 27, 10, 11, 12, 123456, tzinfo=UTC
    )
    assert parse_timestamp("2026-02-30T00:00:00Z") is None
    assert parse_timestamp("yesterday") is None
    assert parse_timestamp("2026-07-01 10:00:00-0130") == datetime(2026, 7, 1, 11, 30, tzinfo=UTC)


def test_nfd_names_read_as_nfc_slugs_but_legacy_ids_hash_the_name_as_written() -> None:
    import unicodedata

    nfd = unicodedata.normalize("NFD", "Café Notes")
    nfc = unicodedata.normalize("NFC", "café-notes")
    assert nfd != unicodedata.normalize("NFC", nfd)
    legacy = read(f"---\nname: {nfd}\n---\nx").fact
    assert legacy.name == nfc
    assert legacy.id == legacy_id(nfd, "project")
    stem = read("---\ndescription: d\n---\nx", name=f"{nfd}.md").fact
    assert stem.name == nfc
    current = read(f"---\nid: mem-a\nrevision: 2\nname: {nfd}\n---\nx").fact
    assert current.name == nfc
