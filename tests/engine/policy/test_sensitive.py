"""Sensitive-content rules (S10.2, RELIABILITY §3 D1–D6)."""

from __future__ import annotations

import time

import pytest
from context_engine.policy.sensitive import (
    MAX_SCAN_CHARS,
    OVERSIZED_RULE,
    RULE_IDS,
    scan_fields,
    scan_text,
    strip_format_chars,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from support.secrets import NEGATIVES, POSITIVES

POSITIVE_CASES = [(rule, sample) for rule, samples in POSITIVES.items() for sample in samples]


def _rules(text: str) -> set[str]:
    return {finding.rule for finding in scan_text(text)}


def test_every_rule_has_a_positive_sample() -> None:
    """D1: the corpus covers the whole rule set (a new rule without a sample fails here)."""
    assert set(POSITIVES) == set(RULE_IDS)
    assert len(RULE_IDS) >= 20


@pytest.mark.parametrize(("rule", "sample"), POSITIVE_CASES)
def test_positive_is_flagged_by_its_rule(rule: str, sample: str) -> None:
    """D1: each sample yields its rule, alone and inside prose."""
    assert rule in _rules(sample)
    assert rule in _rules(f"Note for later:\n  see {sample}\nthanks")


def test_documented_aws_sample_key_is_flagged() -> None:
    """The gitleaks EXAMPLE allow-list is not copied: the documented key is still a key."""
    assert "aws_access_key_id" in _rules("AKIA" + "IOSFODNN7" + "EXAMPLE")


@pytest.mark.parametrize("sample", NEGATIVES)
def test_negative_is_not_flagged(sample: str) -> None:
    """D2: digests, ids, references, scp remotes and npm specs are legitimate fact content."""
    assert scan_text(sample) == ()


def test_negatives_together_are_not_flagged() -> None:
    """D2 in one body, as a fact would hold them."""
    assert scan_text("\n".join(NEGATIVES)) == ()


@pytest.mark.parametrize("splitter", ["\u200b", "\u2060", "\u00ad"])
@pytest.mark.parametrize(("rule", "sample"), POSITIVE_CASES)
def test_positive_split_by_format_character_is_flagged(
    rule: str, sample: str, splitter: str
) -> None:
    """D4: a zero-width or soft-hyphen character inside the token does not hide it."""
    middle = len(sample) // 2
    split = sample[:middle] + splitter + sample[middle:]
    assert rule in _rules(split)


def test_strip_format_chars_keeps_other_text() -> None:
    """Only Cf characters go; letters of every script stay."""
    assert strip_format_chars("a\u200bb\u2060c\u00add\u202e记忆") == "abcd记忆"
    assert strip_format_chars("plain") == "plain"


@pytest.mark.parametrize("field", ["name", "title", "description", "body", "metadata.note"])
@pytest.mark.parametrize(("rule", "sample"), POSITIVE_CASES)
def test_positive_flagged_in_every_field(rule: str, sample: str, field: str) -> None:
    """D3: every string that will be written is scanned, nested values too."""
    fields: dict[str, object] = {"name": "n", "title": "t", "description": "d", "body": "b"}
    if field == "metadata.note":
        fields["metadata"] = {"note": sample}
    else:
        fields[field] = sample
    findings = scan_fields(fields)
    assert (rule, field) in {(f.rule, f.field) for f in findings}


@pytest.mark.parametrize(("rule", "sample"), POSITIVE_CASES)
def test_findings_never_echo_the_match(rule: str, sample: str) -> None:
    """D5: a finding names the rule and field only; no 8-character piece of the secret."""
    rendered = repr(scan_fields({"body": f"x {sample} y"}))
    assert rule in rendered
    for rule_id in RULE_IDS:  # rule names may share letters with the sample (``github_pat``)
        rendered = rendered.replace(rule_id, "")
    pieces = {sample[i : i + 8] for i in range(0, max(1, len(sample) - 8))}
    leaked = [p for p in pieces if p in rendered and not p.isspace()]
    assert leaked == []


ADVERSARIAL = {
    "a": "a" * 10**6,
    "password=": "password=" * (10**6 // 9),
    "BEGIN": "-----BEGIN" * 10**5,
    "BEGIN+A": ("-----BEGIN " + "A" * 39) * (10**6 // 50),
    "eyJ": "eyJ" * (10**6 // 3),
    "@labels": ("@" + "a" * 62 + ".") * (10**6 // 64),
    "local@": ("x" * 64 + "@") * (10**6 // 65),
    "k-": "k-" * (5 * 10**5),
    "zero-width": "\u200ba" * (5 * 10**5),
    "url": "http://a:" * (10**6 // 9),
}


@pytest.mark.slow
def test_adversarial_megabyte_inputs_are_bounded() -> None:
    """D6: 1 MB hostile inputs finish with no exception; the time is printed, not asserted
    beyond a generous sanity bound (S14.2)."""
    figures = []
    for label, text in ADVERSARIAL.items():
        started = time.perf_counter()
        scan_text(text)
        elapsed = time.perf_counter() - started
        figures.append((label, elapsed))
        assert elapsed < 10.0, label  # sanity only: catastrophic backtracking takes minutes
    print("\n" + "\n".join(f"scan {label:>10}: {sec * 1000:7.1f} ms" for label, sec in figures))


def test_oversized_input_fails_closed() -> None:
    """Text past the scan bound is itself a finding, so nothing hides beyond the limit."""
    text = "a" * (MAX_SCAN_CHARS + 10)
    assert [f.rule for f in scan_text(text)] == [OVERSIZED_RULE]


# -- properties --------------------------------------------------------------------------------

FRAGMENTS = (
    [s for samples in POSITIVES.values() for s in samples]
    + NEGATIVES
    + [
        "@",
        "://",
        ":",
        "=",
        " ",
        "\n",
        "-----BEGIN ",
        "eyJ",
        "k-",
        "password",
        "\u200b",
        "\u00ad",
    ]
)
MIXED = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=8), max_size=12).map("".join)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    MIXED,
    st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from("\u200b\u2060\u00ad\u202e\ufeff"))),
)
def test_format_characters_never_change_the_findings(
    text: str, inserts: list[tuple[int, str]]
) -> None:
    """The scanned copy has Cf removed, so inserting them anywhere cannot hide or add a finding."""
    spliced = text
    for position, char in inserts:
        at = position % (len(spliced) + 1)
        spliced = spliced[:at] + char + spliced[at:]
    assert scan_text(spliced) == scan_text(text)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(MIXED)
def test_any_text_scans_to_known_rule_ids(text: str) -> None:
    """No input raises; every finding is a known rule id of the scanned field."""
    for finding in scan_text(text, "body"):
        assert finding.rule in RULE_IDS and finding.field == "body"
