"""Stable prefix and turn-tail notes from explicit inputs (S7.1–S7.3)."""

from __future__ import annotations

from context_engine.facts.model import Fact
from context_engine.session.notes import Baseline, diff_notes, render_notes
from context_engine.session.prefix import (
    GLOBAL_HEADING,
    INDEX_HEADING,
    build_memory_block,
    build_stable_prefix,
    masked_global_ids,
)


def fact(
    name: str, scope: str = "project", type_: str = "project", body: str = "Body.", **kw: object
) -> Fact:
    values: dict[str, object] = {
        "id": f"mem-{scope}-{name}",
        "revision": 1,
        "name": name,
        "title": "",
        "description": f"About {name}",
        "type": type_,
        "scope": scope,
        "body": body,
    }
    values.update(kw)
    return Fact(**values)  # type: ignore[arg-type]


def test_global_feedback_is_in_the_guidance_section_sorted_by_name() -> None:
    facts = [
        fact("zeta-style", "global", "feedback", "Prefer small diffs."),
        fact("alpha-tabs", "global", "user", "Use tabs."),
        fact("no-body", "global", "feedback", "  "),
        fact("shared-ref", "global", "reference", "A link."),
    ]
    block = build_memory_block(facts)
    guidance = block.split(GLOBAL_HEADING, 1)[1].split(INDEX_HEADING, 1)[0]
    assert "### alpha tabs (global/user)\n\nUse tabs." in guidance
    assert guidance.index("alpha tabs") < guidance.index("zeta style")
    assert "no body" not in guidance  # a fact without a body has no guidance to give
    assert "shared" not in guidance  # only user/feedback types are guidance
    assert "- [shared ref](shared-ref.md) — [global/reference] About shared-ref" in block


def test_equivalent_project_fact_masks_global_by_id_name_or_title() -> None:
    g_name = fact("prefers-tabs", "global", "feedback")
    g_title = fact("other", "global", "user", title="Release Target!")
    g_id = fact("by-id", "global", "user", id="mem-same")
    project = [
        fact("prefers-tabs"),
        fact("rt", title="release target"),
        fact("unrelated", id="mem-same"),
    ]
    masked = masked_global_ids([g_name, g_title, g_id, *project])
    assert masked == {g_name.id, g_title.id, g_id.id}
    block = build_memory_block([g_name, *project])
    assert GLOBAL_HEADING not in block
    assert "global/" not in block


def test_prefix_is_memory_then_instructions() -> None:
    prefix = build_stable_prefix("# Memory\n", "# Instructions\n\nBe kind.\n")
    assert prefix.index("# Memory") < prefix.index("# Instructions")
    assert build_stable_prefix("# Memory\n", "") == "# Memory\n"


def test_notes_report_each_change_once_with_body() -> None:
    before = [fact("keep"), fact("gone"), fact("tabs", "global", "feedback", "Tabs.")]
    base = Baseline.capture(before, {"workspace/AGENTS.md": "old"})
    after = [
        fact("keep", revision=2, body="New body <b>."),
        fact("tabs", "global", "feedback", "Tabs."),
        fact("tabs", body="Spaces here."),
        fact("added", body="Fresh."),
    ]
    lines, nxt = diff_notes(base, after, {"workspace/AGENTS.md": "new rules"})
    text = render_notes(lines)
    assert text.startswith("<memory-update>\nThe following project-memory changes were just made")
    assert text.endswith("</memory-update>")
    assert "- updated project/keep.md" in text and "New body &lt;b&gt;." in text
    assert "- saved project/added.md" in text and "Fresh." in text
    assert "- forgot project/gone.md: disregard its loaded guidance and index entry" in text
    assert "global/tabs.md is now overridden" in text
    assert "standing instructions workspace/AGENTS.md changed" in text and "new rules" in text
    assert nxt == Baseline.capture(after, {"workspace/AGENTS.md": "new rules"})
    again, _ = diff_notes(nxt, after, {"workspace/AGENTS.md": "new rules"})
    assert again == [] and render_notes(again) == ""


def test_baseline_json_round_trip() -> None:
    base = Baseline.capture([fact("a"), fact("b", "global", "user")], {"user/AGENTS.md": "x"})
    assert Baseline.from_json(base.to_json()) == base


def test_prefix_and_pool_mask_the_same_globals_by_title_as_written() -> None:
    # ``foo-bar`` without a title displays as "foo bar", which normalizes like the project
    # fact ``foobar``; S7.2 compares titles as written (Reasonix keeps both), and the prefix
    # and the recall pool must agree on which globals are masked.
    from context_engine.recall.pool import POOL, SHADOWED, PoolTracker

    g_display = fact("foo-bar", "global", "user", "Widgets are blue.")
    g_untitled = fact("bar-baz", "global", "project", "Gadgets.")
    g_titled = fact("release", "global", "project", "Ship it.", title="Release Target!")
    project = [fact("foobar"), fact("barbaz"), fact("rt", title="release target")]
    facts = [g_display, g_untitled, g_titled, *project]
    assert masked_global_ids(facts) == {g_titled.id}
    assert "### foo bar (global/user)\n\nWidgets are blue." in build_memory_block(facts)
    tracker = PoolTracker()
    tracker.load(facts)
    assert tracker.membership[g_untitled.reference] == POOL
    assert tracker.membership[g_titled.reference] == SHADOWED
