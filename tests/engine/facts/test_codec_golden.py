"""Golden bytes (S3.1, S3.3): rendered facts equal hand-written files and read back identical."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from context_engine.facts.codec import parse_fact, parse_fact_strict, render_fact
from context_engine.facts.model import Fact
from context_engine.facts.yaml_strict import YamlMapping

DATA = Path(__file__).resolve().parents[1] / "data" / "codec"
T0 = datetime(2026, 7, 1, tzinfo=UTC)
MTIME = datetime(2030, 1, 1, tzinfo=UTC)


def _fact(**kw: object) -> Fact:
    base: dict[str, object] = {
        "revision": 1,
        "title": "",
        "type": "project",
        "scope": "project",
        "created_at": T0,
        "updated_at": T0,
    }
    base.update(kw)
    return Fact(**base)  # type: ignore[arg-type]


GOLDEN: dict[str, Fact] = {
    "plain.md": _fact(
        id="mem-0123456789abcdef0123456789abcdef", revision=3, name="release-target",
        title="Release target", description="Release branch for this project",
        body="Release artifacts are published from main-v2.",
        updated_at=datetime(2026, 7, 27, 10, 11, 12, 500000, tzinfo=UTC),
    ),
    "punctuation.md": _fact(
        id="mem-11111111111111111111111111111111", name="deploy-steps", title="Deploy: step #1",
        description='It\'s "fine" to say so, really', body="Run `make deploy`: then check #ops.",
        updated_at=datetime(2026, 7, 1, 0, 0, 0, 123000, tzinfo=UTC),
    ),
    "indicators.md": _fact(
        id="mem-22222222222222222222222222222222", revision=2, name="list-like",
        title="- not a list", description='* starred: and "quoted"', type="reference",
        body="- a real list item\n- another", updated_at=datetime(2026, 7, 2, tzinfo=UTC),
    ),
    "type-lookalike.md": _fact(
        id="mem-33333333333333333333333333333333", revision=4, name="lookalike",
        title="type: reference", description="2026-07-01T00:00:00Z",
        body="Titles that look like keys or timestamps stay strings.",
        updated_at=datetime(2026, 7, 3, 4, 5, 6, 789012, tzinfo=UTC),
    ),
    "yaml-words.md": _fact(
        id="mem-44444444444444444444444444444444", name="010", title="yes", description="12:30",
        type="feedback", body="YAML 1.1 would read these as a bool and numbers.",
    ),
    "cjk.md": _fact(
        id="mem-55555555555555555555555555555555", name="记忆召回", title="记忆召回：设计",
        description="说明: 中文与 ASCII 冒号", type="user", scope="global", body="正文保持原样。",
    ),
    "routing-global.md": _fact(
        id="mem-66666666666666666666666666666666", name="shared-build",
        description="A project fact kept in the global store", type="project", scope="global",
        body="Global project-type fact.",
    ),
    "routing-project.md": _fact(
        id="mem-77777777777777777777777777777777", name="prefers-tabs", title="Prefers tabs",
        description="User preference kept in the project store", type="user",
        body="The user prefers tabs.",
    ),
    "extras.md": _fact(
        id="mem-88888888888888888888888888888888", revision=5, name="with-extras",
        description="Unknown keys survive a rewrite", body="Body.",
        extra=(
            ("source", "hand-written"), ("related", ("one", "two")),
            ("owner", YamlMapping((("team", "infra"), ("on_call", False)))), ("empty_list", ()),
            ("metadata", YamlMapping((("tags", ("alpha", "010")), ("weight", 3)))),
        ),
    ),
    "escapes.md": _fact(
        id="mem-99999999999999999999999999999999", name="escapes", title='C:\\temp "x"',
        description="#leading hash", body='Backslashes \\ and "quotes" in the body are untouched.',
    ),
    "more-indicators.md": _fact(
        id="mem-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", revision=12, name="true",
        title="!important & @mention", description="~", type="feedback", scope="global",
        body="Extras keys and values that start with indicators are quoted.",
        extra=(
            ("% done", "`code`"), ("? maybe", "[not, a, list]"), ("{x}", "yes, please"),
            ("trailing", "tab\there"),
        ),
    ),
    "indented-code.md": _fact(
        id="mem-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", name="build-command",
        description="Starts with an indented code block", type="reference",
        body=(
            "    make release VERSION=2\n\n"
            "  Indentation of the first line is kept; trailing blank lines are not."
        ),
    ),
}


@pytest.mark.parametrize("filename", sorted(GOLDEN))
def test_render_equals_golden_bytes(filename: str) -> None:
    assert render_fact(GOLDEN[filename]) == (DATA / filename).read_bytes()


@pytest.mark.parametrize("filename", sorted(GOLDEN))
@pytest.mark.parametrize("parse", [parse_fact, parse_fact_strict])
def test_golden_reads_back_identical(filename: str, parse: object) -> None:
    fact = GOLDEN[filename]
    data = (DATA / filename).read_bytes()
    parsed = parse(  # type: ignore[operator]
        data, path=DATA / filename, store_scope=fact.scope, mtime=MTIME
    )
    assert not parsed.needs_upgrade
    assert parsed.fact == fact
    assert parsed.fact.path == DATA / filename
    assert render_fact(parsed.fact) == data


def test_minimal_fact_omits_empty_keys_and_writes_empty_body_as_nothing() -> None:
    fact = Fact(id="", revision=0, name="bare", title="", description="", type="project",
                scope="project", body="  \n")
    data = render_fact(fact)
    assert data == (DATA / "minimal.md").read_bytes()
    parsed = parse_fact(data, path=Path("bare.md"), store_scope="project", mtime=MTIME)
    assert parsed.needs_upgrade
    assert parsed.fact.body == ""
    assert parsed.fact.revision == 1
    assert parsed.fact.created_at == MTIME == parsed.fact.updated_at


def test_body_is_trimmed_of_blank_lines_but_keeps_first_indent() -> None:
    fact = GOLDEN["indented-code.md"]
    messy = replace(fact, body="\n  \t\n" + fact.body + "\n\n  \n")
    assert render_fact(messy) == (DATA / "indented-code.md").read_bytes()
    crlf = (DATA / "indented-code.md").read_bytes().replace(b"\n", b"\r\n") + b"\r\n\r\n"
    back = parse_fact(crlf, path=Path("build-command.md"), store_scope="project", mtime=MTIME)
    assert back.fact.body == fact.body.replace("\n", "\r\n")


def test_compatibility_routing_s33() -> None:
    expected = {
        ("global", "user"): ("user", None),
        ("global", "feedback"): ("feedback", None),
        ("global", "project"): ("user", "project"),
        ("global", "reference"): ("user", "reference"),
        ("project", "project"): ("project", None),
        ("project", "reference"): ("reference", None),
        ("project", "user"): ("project", "user"),
        ("project", "feedback"): ("project", "feedback"),
    }
    for (scope, fact_type), (route, real) in expected.items():
        fact = _fact(id="mem-x", name="n", description="d", body="b", type=fact_type, scope=scope)
        text = render_fact(fact).decode()
        assert f"\n  type: {route}\n" in text
        assert ("  fact_type: " in text) == (real is not None)
        if real is not None:
            assert f"\n  fact_type: {real}\n" in text
        assert f"\n  scope: {scope}\n" in text
        # The routing hint never changes what reads back, whichever store holds the file.
        for store_scope in ("project", "global"):
            back = parse_fact(
                text.encode(), path=Path("n.md"), store_scope=store_scope, mtime=MTIME
            ).fact
            assert (back.type, back.scope) == (fact_type, scope)


def test_title_and_description_are_collapsed_to_one_line() -> None:
    fact = _fact(id="mem-x", name="n", title=" Two\n\tlines  here ", description="a\r\nb", body="x")
    text = render_fact(fact).decode()
    assert "\ntitle: Two lines here\n" in text
    assert "\ndescription: a b\n" in text
