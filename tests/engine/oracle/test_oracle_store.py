"""Differential: our store against the real Reasonix code, both directions (S3–S5).

Facts written by one side are read by the other field by field; legacy ids of every encoding;
migration in either order; MEMORY.md rewritten over a Reasonix-built one; the two save
semantics decided in docs/decisions.md. Differences must be the documented ones.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from context_engine.facts.memory import Memory
from context_engine.facts.model import Fact
from context_engine.paths import EnginePaths
from support.oracle import Oracle, check_case, require_oracle

pytestmark = pytest.mark.slow

FIELDS = ("id", "revision", "name", "title", "description", "type", "scope")


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Oracle, EnginePaths]:
    require_oracle()
    home, ws = tmp_path / "home", tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    home.mkdir()
    return Oracle(home, ws), EnginePaths.resolve(home=home, workspace=ws)


def _micros(value: str) -> datetime:
    """An RFC 3339 time with up to nanoseconds, cut to microseconds, in UTC."""
    head, _, frac = value.rstrip("Z").partition(".")
    parsed = datetime.fromisoformat(head).replace(tzinfo=UTC)
    return parsed.replace(microsecond=int((frac + "000000")[:6])) if frac else parsed


def _ours(fact: Fact) -> dict[str, Any]:
    row = {key: getattr(fact, key) for key in FIELDS}
    row["body"] = fact.body.strip("\n")
    row["created_at"] = fact.created_at
    row["updated_at"] = fact.updated_at
    return row


def _theirs(fact: dict[str, Any]) -> dict[str, Any]:
    row = {key: fact[key] for key in FIELDS}
    row["body"] = str(fact["body"]).strip("\n")
    row["created_at"] = _micros(fact["created_at"])
    row["updated_at"] = _micros(fact["updated_at"])
    return row


def _compare(oracle: Oracle, paths: EnginePaths) -> dict[str, list[str]]:
    """Per fact name, the fields on which the two readings differ."""
    ours = {f.name + "@" + f.scope: _ours(f) for f in Memory(paths).snapshot().facts}
    theirs = {f["name"] + "@" + f["scope"]: _theirs(f) for f in oracle.facts()}
    assert sorted(ours) == sorted(theirs)
    return {
        key: [field for field in ours[key] if ours[key][field] != theirs[key][field]]
        for key in ours
        if ours[key] != theirs[key]
    }


REASONIX_FACTS: list[dict[str, object]] = [
    {"name": "release-target", "title": "Release target", "description": "Release branch",
     "type": "project", "body": "Artifacts are published from main-v2."},
    {"name": "记忆召回", "title": "记忆召回设计", "description": "自动召回: 预算 2400 字符",
     "type": "project", "body": "只在真实用户回合触发。\n\n第二段。"},
    {"name": "api-docs", "description": "Docs: see https://x.example/api?a=1#b",
     "type": "reference", "body": "- type: x\n- '#quoted' \"and\" 'single'"},
    {"name": "prefers-tabs", "description": "Tabs", "type": "user", "scope": "global",
     "body": "I prefer tabs."},
    {"name": "review-style", "description": "- leading dash: and colon", "type": "feedback",
     "scope": "global", "body": "Be terse.\nSecond line."},
    {"name": "shared-name", "description": "global reference", "type": "reference",
     "scope": "global", "body": "A global reference."},
]


def test_reasonix_written_facts_read_the_same(pair: tuple[Oracle, EnginePaths]) -> None:
    oracle, paths = pair
    for args in REASONIX_FACTS:
        assert oracle.remember(**args)["error"] == ""
    assert _compare(oracle, paths) == {}


def test_our_facts_read_the_same_in_reasonix(pair: tuple[Oracle, EnginePaths]) -> None:
    oracle, paths = pair
    memory = Memory(paths)
    for args in REASONIX_FACTS:
        memory.save(**{k: v for k, v in args.items()})  # type: ignore[arg-type]
    memory.save(name="release-target", body="Artifacts now come from main-v3.")  # revision 2
    assert _compare(oracle, paths) == {}
    for name, body in (("indented", "    indented first line\nsecond"), ("crlf", "a\r\nb")):
        memory.save(name=name, description=name, type="project", body=body)
        diff = _compare(oracle, paths)
        shown = {"body_first_line_indent"} if diff == {f"{name}@project": ["body"]} else set(diff)
        check_case(f"{name} body", shown, {"body_first_line_indent"})
        memory.forget(name)


def _legacy(name: str, keys: str, body: str = "Body.") -> str:
    return f"---\n{name}{keys}---\n\n{body}\n"


LEGACY = {
    "plain.md": _legacy("name: legacy-fact\n", "description: L\nmetadata:\n  type: project\n")
    .encode(),
    "bom.md": b"\xef\xbb\xbf" + _legacy("name: bom-fact\n", "type: reference\n").encode(),
    "crlf.md": _legacy("name: crlf-fact\n", "type: project\n").replace("\n", "\r\n").encode(),
    "gb.md": _legacy("name: 中文事实\n", "description: 旧编码\ntype: project\n", "正文。")
    .encode("gb18030"),
    "utf16.md": b"\xff\xfe" + _legacy("name: utf16-fact\n", "type: project\n").encode("utf-16-le"),
    "flat-user.md": _legacy("name: shared-name\n", "type: user\n", "x").encode(),
    "no-name.md": _legacy("", "description: stem is the name\ntype: project\n").encode(),
}


def _write_legacy(paths: EnginePaths) -> None:
    paths.project_store.mkdir(parents=True, exist_ok=True)
    for file, data in LEGACY.items():
        (paths.project_store / file).write_bytes(data)


def test_legacy_ids_of_every_encoding_agree(pair: tuple[Oracle, EnginePaths]) -> None:
    oracle, paths = pair
    _write_legacy(paths)
    ours = {f.name: f.id for f in Memory(paths).snapshot().facts}
    theirs = {f["name"]: f["id"] for f in oracle.facts()}
    assert ours == theirs
    assert all(value.startswith("legacy-") for value in ours.values())


@pytest.mark.parametrize("first", ["reasonix", "ours"])
def test_migration_either_order(pair: tuple[Oracle, EnginePaths], first: str) -> None:
    oracle, paths = pair
    _write_legacy(paths)
    before = {f.name: f.id for f in Memory(paths).snapshot().facts}
    if first == "reasonix":
        assert oracle.run("migrate")["migrated"] > 0
        assert Memory(paths).migrate() == 0
    else:
        assert Memory(paths).migrate() > 0
        assert oracle.run("migrate")["migrated"] == 0
    assert _compare(oracle, paths) == {}
    assert {f["name"]: f["id"] for f in oracle.facts()} == before  # legacy ids are kept


def test_rewriting_a_reasonix_built_memory_md(pair: tuple[Oracle, EnginePaths]) -> None:
    oracle, paths = pair
    for args in REASONIX_FACTS[:3]:
        oracle.remember(**args)
    index = paths.project_store / "MEMORY.md"
    assert "\n\n- " in index.read_text(encoding="utf-8")  # Reasonix separates entries
    Memory(paths).save(name="zeta", description="Zeta", type="project", body="z")
    text = index.read_text(encoding="utf-8")
    assert not text.endswith("\n\n") and "\n\n- " not in text.split("\n\n", 1)[1]
    theirs = [line for line in oracle.run("index")["index"].splitlines() if "project/" in line]
    assert [line for line in text.splitlines() if line.startswith("- ")] == theirs


def _twin(oracle: Oracle, paths: EnginePaths) -> tuple[Oracle, EnginePaths]:
    """A copy of the home for the Reasonix side of a semantics case."""
    home = paths.home.parent / "rx"
    shutil.copytree(paths.home, home)
    return Oracle(home, oracle.ws), EnginePaths.resolve(home=home, workspace=oracle.ws)


def test_bare_name_saved_into_the_other_scope(pair: tuple[Oracle, EnginePaths]) -> None:
    oracle, paths = pair
    args = {"name": "moving", "description": "Moves", "type": "reference", "body": "b"}
    oracle.remember(**args)
    (first,) = Memory(paths).snapshot().facts
    rx, rx_paths = _twin(oracle, paths)
    Memory(paths).save(name="moving", scope="global", body="b2")
    rx.remember(**{**args, "scope": "global", "body": "b2"})
    (ours,) = Memory(paths).snapshot().facts
    (theirs,) = Memory(rx_paths).snapshot().facts
    assert (ours.scope, theirs.scope) == ("global", "global")
    assert theirs.id == first.id  # Reasonix moves the fact
    assert list((paths.project_store / ".archive").glob("*-moving.md"))  # ours archives it
    shown = {"scope_move_new_id"} if ours.id != first.id else set()
    check_case("bare name into the other scope", shown, {"scope_move_new_id"})


def test_update_by_id_omitting_title_and_type(pair: tuple[Oracle, EnginePaths]) -> None:
    oracle, paths = pair
    args = {"name": "typed", "title": "Typed fact", "description": "d", "type": "reference",
            "body": "one"}
    oracle.remember(**args)
    (fact,) = Memory(paths).snapshot().facts
    rx, rx_paths = _twin(oracle, paths)
    Memory(paths).save(id=fact.id, description="d", body="two")
    rx.remember(id=fact.id, description="d", body="two")
    (ours,) = Memory(paths).snapshot().facts
    (theirs,) = Memory(rx_paths).snapshot().facts
    assert (ours.title, ours.type, ours.body.strip()) == ("Typed fact", "reference", "two")
    shown = {"update_keeps_omitted_fields"} if (theirs.title, theirs.type) != (
        ours.title, ours.type) else set()
    check_case("update by id omitting title and type", shown, {"update_keeps_omitted_fields"})


def test_order_of_index_lines_in_the_prefix(pair: tuple[Oracle, EnginePaths]) -> None:
    from click.testing import CliRunner
    from context_engine.cli.main import cli

    oracle, paths = pair
    for args in REASONIX_FACTS:
        oracle.remember(**args)
    out = CliRunner().invoke(
        cli, ["--home", str(paths.home), "--workspace", str(paths.workspace), "prefix"]
    )
    assert out.exit_code == 0, out.output
    ours = [line for line in out.output.splitlines() if line.startswith("- [")]
    theirs = [line for line in oracle.run("prefix")["block"].splitlines() if line.startswith("- [")]
    assert sorted(ours) == sorted(theirs)  # the same lines
    scopes = [line.split("— [", 1)[1].split("/", 1)[0] for line in ours]
    assert scopes == sorted(scopes, key=lambda s: s != "project")  # project first, then global
    shown = {"prefix_index_order"} if ours != theirs else set()
    check_case("index line order", shown, {"prefix_index_order"})


def test_guidance_masking_compares_titles_as_written(pair: tuple[Oracle, EnginePaths]) -> None:
    from click.testing import CliRunner
    from context_engine.cli.main import cli

    oracle, paths = pair
    oracle.remember(name="foo-bar", description="global pref", type="user", scope="global",
                    body="Widgets are blue.")
    oracle.remember(name="foobar", description="project note", type="project", body="Red.")
    oracle.remember(name="g-one", title="Widgets Pref", description="g", type="feedback",
                    scope="global", body="Small diffs.")
    oracle.remember(name="p-two", title="widgets-pref", description="p", type="project",
                    body="Big.")
    out = CliRunner().invoke(
        cli, ["--home", str(paths.home), "--workspace", str(paths.workspace), "prefix"]
    )
    assert out.exit_code == 0, out.output
    theirs = oracle.run("prefix")["block"]
    for block in (out.output, theirs):
        assert "### foo bar (global/user)\n\nWidgets are blue." in block  # display title only
        assert "### Widgets Pref" not in block  # the same title as written: masked
