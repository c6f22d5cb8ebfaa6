"""Memory v5 transcript turns read back as the original prompt (S5.3)."""

from __future__ import annotations

import json

import pytest
from context_engine.upgrade.transcript_v5 import (
    MAX_UNWRAP_DEPTH,
    SPEC_TRANSIENT_TAGS,
    unwrap_v5_turn,
)


def wrap(contract: object) -> str:
    body = contract if isinstance(contract, str) else json.dumps(contract, ensure_ascii=False)
    return f"<memory-compiler-execution>{body}</memory-compiler-execution>"


def contract(prompt: str, *, top_level: bool = False) -> dict[str, object]:
    if top_level:
        return {"type": "memory_v5_execution_contract", "source_event": prompt}
    return {
        "type": "memory_v5_execution_contract",
        "planner_ir": {"source_event": prompt, "steps": ["recall", "compile"]},
        "budget": {"tokens": 1200},
    }


def test_planner_ir_source_event_is_the_prompt() -> None:
    assert unwrap_v5_turn(wrap(contract("Fix the flaky test in ci.yml"))) == (
        "Fix the flaky test in ci.yml"
    )


def test_top_level_source_event_is_the_prompt() -> None:
    turn = wrap(contract("把发布分支改成 main-v2", top_level=True))
    assert unwrap_v5_turn(turn) == "把发布分支改成 main-v2"


def test_pretty_printed_json_with_whitespace_around_it() -> None:
    body = "\n" + json.dumps(contract("multi\nline prompt"), indent=2) + "\n"
    assert unwrap_v5_turn("  \n" + wrap(body) + "\n") == "multi\nline prompt"


@pytest.mark.parametrize("tag", SPEC_TRANSIENT_TAGS)
def test_each_leading_transient_block_is_stripped(tag: str) -> None:
    turn = f'<{tag} lang="en">host text\nmore</{tag}>\n\nReal question?'
    # A memory-compiler-execution block that is not a contract, followed by text, is just
    # a transient block: the text after it is the turn.
    assert unwrap_v5_turn(turn) == "Real question?"


def test_several_leading_blocks_then_a_contract() -> None:
    turn = (
        "<reasoning-language>English</reasoning-language>\n"
        "<memory-update>prefer tabs</memory-update>"
        "<background-jobs>none</background-jobs>\n"
        + wrap(contract("<hook-context>x</hook-context> Deploy it"))
    )
    # The prompt itself may carry transient blocks: they are stripped too.
    assert unwrap_v5_turn(turn) == "Deploy it"


def test_nested_contracts_unwrap_to_the_innermost_prompt() -> None:
    turn = "Hello inner"
    for _ in range(5):
        turn = wrap(contract(turn))
    assert unwrap_v5_turn(turn) == "Hello inner"


def test_nesting_beyond_the_limit_reads_as_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each level doubles the JSON escaping, so the real limit (24) is exercised scaled down.
    assert MAX_UNWRAP_DEPTH == 24
    monkeypatch.setattr("context_engine.upgrade.transcript_v5.MAX_UNWRAP_DEPTH", 3)
    turn = "too deep"
    for _ in range(3):
        turn = wrap(contract(turn))
    assert unwrap_v5_turn(turn) == "too deep"
    assert unwrap_v5_turn(wrap(contract(turn))) == ""


@pytest.mark.parametrize(
    "body",
    [
        "{not json",
        "[1, 2]",
        json.dumps({"type": "something_else", "source_event": "x"}),
        json.dumps({"type": "memory_v5_execution_contract"}),
        json.dumps({"type": "memory_v5_execution_contract", "planner_ir": {"source_event": 3}}),
        "",
    ],
)
def test_unrecoverable_contract_reads_as_empty(body: str) -> None:
    assert unwrap_v5_turn(wrap(body)) == ""
    assert unwrap_v5_turn("<memory-compiler-execution>" + body) == ""


def test_plain_turns_and_non_leading_tags_are_untouched() -> None:
    assert unwrap_v5_turn("  plain text  ") == "plain text"
    text = "Explain <memory-update>x</memory-update> in the docs"
    assert unwrap_v5_turn(text) == text
    assert unwrap_v5_turn("<custom-tag>keep</custom-tag> me") == "<custom-tag>keep</custom-tag> me"
    # An unterminated ordinary block is not stripped: the user's text is never lost.
    assert unwrap_v5_turn("<hook-context>no end, real text") == "<hook-context>no end, real text"
    assert unwrap_v5_turn("") == ""


def test_event_object_with_text_is_accepted() -> None:
    body = {"type": "memory_v5_execution_contract", "planner_ir": {"source_event": {"text": "Hi"}}}
    assert unwrap_v5_turn(wrap(body)) == "Hi"
