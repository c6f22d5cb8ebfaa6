"""The secret rule table (S10.2): every row's fixtures, held-out formats, look-alikes, redaction."""

from __future__ import annotations

import pytest
from context_engine.policy.secret_rules import PREFILTERS, ROWS, expand_fixture
from context_engine.policy.sensitive import GATES, RULE_IDS, redact, scan_fields, scan_text
from context_engine.policy.write_policy import Controller, evaluate_remember, parse_remember_args
from support.secrets import HELD_OUT, LOOK_ALIKES

ROW_IDS = [row.id for row in ROWS]


def _rules(text: str) -> set[str]:
    return {finding.rule for finding in scan_text(text)}


def test_table_rows_are_unique_and_complete() -> None:
    """One row per rule id; every row names a known gate and has both fixtures."""
    assert len(set(ROW_IDS)) == len(ROW_IDS)
    assert set(ROW_IDS) == set(RULE_IDS)
    for row in ROWS:
        assert row.gate in GATES, row.id
        assert row.positive and row.negative, row.id


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_row_positive_fixture_is_flagged(row) -> None:  # type: ignore[no-untyped-def]
    """Each row's positive fixture yields that row's rule, alone and inside prose."""
    sample = expand_fixture(row.positive)
    assert row.id in _rules(sample)
    assert row.id in _rules(f"Notes:\n{sample}\nend")


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_row_negative_fixture_is_not_flagged_by_that_rule(row) -> None:  # type: ignore[no-untyped-def]
    """Each row's near miss does not yield that row's rule."""
    assert row.id not in _rules(expand_fixture(row.negative))


@pytest.mark.parametrize(("rule", "sample"), sorted(HELD_OUT.items()))
def test_held_out_formats_are_flagged_and_not_auto_written(rule: str, sample: str) -> None:
    """The formats issue 17 found auto-written: flagged by their rule; remember asks."""
    assert rule in _rules(sample)
    for field in ("body", "description", "title"):
        raw = {
            "name": "ops-note",
            "title": "Ops note",
            "description": "Where the deploy credentials live",
            "type": "project",
            "body": "Deploy notes.",
        }
        raw[field] = f"{raw[field]} {sample}"
        decision = evaluate_remember(parse_remember_args(raw), [], Controller("headless"))
        assert decision.kind != "auto", (rule, field)
        assert decision.reason == "memory may contain sensitive information"
        assert rule in decision.findings
        assert sample not in repr(decision)


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alike_is_not_flagged(text: str) -> None:
    """Git SHAs, UUIDs, base64 images, documented placeholders, long identifiers: 0 findings."""
    assert scan_text(text) == ()


def test_look_alikes_together_are_not_flagged() -> None:
    """The whole look-alike corpus as one fact body: still 0 false positives."""
    assert scan_fields({"body": "\n".join(LOOK_ALIKES)}) == ()


def test_findings_carry_the_rule_id_only() -> None:
    """A finding holds the rule and the field, never the secret."""
    sample = HELD_OUT["sendgrid_api_key"]
    findings = scan_fields({"body": f"key {sample}"})
    assert [f.rule for f in findings] == ["sendgrid_api_key"]
    assert sample not in repr(findings)


@pytest.mark.parametrize(("rule", "sample"), sorted(HELD_OUT.items()))
def test_redact_replaces_the_secret_with_its_rule(rule: str, sample: str) -> None:
    """S8.10: the trace keeps ``[redacted:<rule>]`` in place of the secret."""
    text = redact(f"please remember {sample} for later")
    assert sample not in text
    assert f"[redacted:{rule}]" in text or "[redacted:" in text
    assert text.startswith("please remember ")
    assert text.endswith(" for later")
    assert scan_text(text) == ()


def test_redact_leaves_clean_text_alone() -> None:
    """No finding, no change."""
    text = "\n".join(LOOK_ALIKES)
    assert redact(text) == text


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_row_positive_is_flagged_inside_a_long_text(row) -> None:  # type: ignore[no-untyped-def]
    """Long texts take the other prefilter path: every rule still fires there."""
    filler = "release build main-v2 config.toml port 8443 " * 500  # > 16 KB
    sample = expand_fixture(row.positive)
    assert row.id in _rules(f"{filler}\n{sample}\n{filler}")


def test_every_prefilter_needle_is_in_its_positive_fixture() -> None:
    """A prefilter may only skip a rule that cannot match: each fixture holds a needle."""
    for row in ROWS:
        sample = expand_fixture(row.positive)
        subject = sample.lower() if row.lower else sample
        needles = PREFILTERS.get(row.id, ())
        assert not needles or any(n in subject for n in needles), row.id


def test_format_character_class_covers_every_cf_character() -> None:
    """The written-out Cf class holds every Cf character this interpreter knows."""
    import sys
    import unicodedata

    from context_engine.policy.sensitive import strip_format_chars

    every = "".join(
        chr(cp) for cp in range(0x80, sys.maxunicode + 1) if unicodedata.category(chr(cp)) == "Cf"
    )
    assert strip_format_chars("a" + every + "b") == "ab"
