"""The read-only memory tool (S9.1)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from context_engine.errors import FactNotFound
from context_engine.recall import Recaller
from context_engine.tools.memory import MemoryToolError, run_memory_tool
from support.recall import NOW, fact, sample_store


def run(args: dict[str, object], facts: list | None = None) -> str:  # type: ignore[type-arg]
    return run_memory_tool(sample_store() if facts is None else facts, args, now=NOW)


def test_search_finds_by_reference_not_path() -> None:
    store = [
        replace(f, path=Path("/home/alice/.reasonix/projects/x/memory") / f"{f.name}.md")
        for f in sample_store()
    ]
    out = run({"operation": "search", "query": "AuthHandler 6928"}, store)
    assert "project/auth-handler-panic.md" in out
    assert "/home/alice" not in out and ".reasonix" not in out
    assert out.splitlines()[0].startswith("1 saved memory matched")


def test_search_includes_global_user_facts() -> None:
    store = [
        *sample_store(),
        fact("tabs-pref", "Prefer tabs in Makefiles", type="user", scope="global"),
    ]
    out = run({"operation": "search", "query": "Makefiles tabs"}, store)
    assert "global/tabs-pref.md" in out


def test_search_zero_results_guidance() -> None:
    out = run({"operation": "search", "query": "nonexistent-thing xyzzy"})
    lines = out.splitlines()
    assert lines[0] == 'No saved memories matched "nonexistent-thing xyzzy".'
    assert lines[1] == "0 results does not prove the fact was never recorded."
    assert [line[:2] for line in lines[2:]] == ["1.", "2.", "3."]
    assert "distinctive terms" in lines[2] and "URL" in lines[3] and "history tool" in lines[4]


def test_search_filters_and_limit() -> None:
    store = [
        fact(f"n{i}", f"quokka note {i}", type="reference" if i % 2 else "project")
        for i in range(30)
    ]
    out = run({"operation": "search", "query": "quokka", "type": "reference", "limit": 50}, store)
    entries = [line for line in out.splitlines() if re.match(r"\d+\. ", line)]
    assert len(entries) == 15
    assert all("type=reference" in e for e in entries)
    out = run({"operation": "search", "query": "quokka"}, store)
    assert len([line for line in out.splitlines() if re.match(r"\d+\. ", line)]) == 8
    out = run({"operation": "search", "query": "quokka", "limit": 40}, store)
    assert len([line for line in out.splitlines() if re.match(r"\d+\. ", line)]) == 20


def test_search_relative_floor_015() -> None:
    strong = fact("strong", "quokka gateway router " * 5)
    weak = fact("weak", "quokka " + "padding words " * 200)
    others = [fact(f"o{i}", f"alpha beta {i}") for i in range(40)]
    recaller = Recaller([strong, weak, *others])
    hits = recaller.search("quokka gateway router")
    top = hits[0].score
    assert all(h.score >= 0.15 * top for h in hits)
    assert [h.fact.name for h in hits] == ["strong"]


def test_search_snippet_is_short_and_redacted() -> None:
    body = "quokka " + "x " * 400 + "see /Users/bob/notes quokka"
    out = run({"operation": "search", "query": "quokka"}, [fact("long", body)])
    snippet_line = out.splitlines()[2]
    assert len(snippet_line.strip()) <= 260
    assert "/Users/bob" not in out


def test_read_by_any_ref() -> None:
    store = sample_store()
    for ref in ("release-target", "project/release-target.md", "mem_p_release-target"):
        out = run({"operation": "read", "name": ref}, store)
        assert out.startswith("project/release-target.md")
        assert "Thursdays" in out


def test_read_missing_fact() -> None:
    with pytest.raises(FactNotFound):
        run({"operation": "read", "name": "nope"})


def test_list_with_filters() -> None:
    store = [*sample_store(), fact("g-ref", "Global ref", type="reference", scope="global")]
    out = run({"operation": "list", "scope": "global"}, store)
    assert out.splitlines()[0] == "1 saved memory:"
    assert "global/g-ref.md" in out
    out = run({"operation": "list"}, store)
    assert out.splitlines()[0] == f"{len(store)} saved memories:"


def test_archived_facts_never_appear() -> None:
    archived = replace(fact("old-secret-plan", "quokka archived plan"),
                       path=Path("/s/memory/.archive/20260101-000000.000-old-secret-plan.md"))
    store = [*sample_store(), archived]
    assert "old-secret-plan" not in run({"operation": "list"}, store)
    assert "old-secret-plan" not in run(
        {"operation": "search", "query": "quokka archived plan"}, store
    )
    with pytest.raises(FactNotFound):
        run({"operation": "read", "name": "old-secret-plan"}, store)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"operation": "list", "type": "note"},
         "type must be one of user, feedback, project, reference"),
        ({"operation": "search", "query": "x", "scope": "team"},
         "scope must be one of project, global"),
        ({"operation": "search"}, "missing required argument: query"),
        ({"operation": "read"}, "missing required argument: name"),
        ({}, "missing required argument: operation"),
        ({"operation": "write"}, "operation must be one of search, read, list"),
        ({"operation": "search", "query": "x", "limit": 0}, "limit must be a positive integer"),
    ],
)
def test_invalid_arguments(args: dict[str, object], message: str) -> None:
    with pytest.raises(MemoryToolError) as info:
        run(args)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)
