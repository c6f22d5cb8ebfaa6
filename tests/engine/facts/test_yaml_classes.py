"""The YAML character classes, written as complements so they compile fast, are the S3 ranges."""

from __future__ import annotations

import re

import pytest
from context_engine.facts import yaml_text

# The printable set as a YAML reader defines it, listed range by range.
LISTED = r"\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"
EVERY_CHARACTER = "".join(map(chr, range(0x110000)))


@pytest.mark.slow  # every code point, three classes
@pytest.mark.parametrize(
    ("written", "listed"),
    [
        (yaml_text.PRINTABLE_CLASS, LISTED),
        (yaml_text._PLAIN_BODY_CLASS, LISTED.replace(r"\x20-\x7e", r"\x20-\x22\x24-\x39\x3b-\x7e")),
        (yaml_text.QUOTED_CLASS, LISTED.replace(r"\x20-\x7e", r"\x20\x21\x23-\x5b\x5d-\x7e")),
    ],
    ids=["printable", "plain", "quoted"],
)
def test_each_class_admits_exactly_the_listed_characters(written: str, listed: str) -> None:
    admitted = "".join(re.findall(f"[{written}]", EVERY_CHARACTER))
    assert admitted == "".join(re.findall(f"[{listed}]", EVERY_CHARACTER))
    assert 0 < len(admitted) < 0x110000


def test_a_class_is_cheap_to_compile() -> None:
    # The listed form made ``re`` fill a 64k-entry map per wide range; the complement lists
    # only a few short ranges (what the pattern says, not how long it takes).
    assert yaml_text.PRINTABLE_CLASS.startswith("^")
    assert "\\U0010ffff" not in yaml_text.PRINTABLE_CLASS
