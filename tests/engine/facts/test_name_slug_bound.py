"""Long fact names are bounded like Reasonix bounds them, and a bounded name is a fixed point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from context_engine.errors import InvalidName
from context_engine.paths import NAME_SLUG_MAX_BYTES, slugify
from hypothesis import given
from hypothesis import strategies as st
from support.oracle import Oracle, require_oracle

# Names whose cut at 235 bytes falls on a ``-``, inside a multi-byte letter, or just past it.
LONG_NAMES = [
    "a" * 234 + "-" + "b" * 30,
    "a" * 233 + "-" + "b" * 30,
    "a" * 235 + "-" + "b" * 30,
    "x" + "记" * 78 + "-" + "y" * 20,
    "x" * 2 + "记" * 78 + " tail words here",
    "Prefers Tabs " * 30,
]


@pytest.mark.parametrize("name", LONG_NAMES)
def test_bounded_name_is_a_fixed_point(name: str) -> None:
    slug = slugify(name)
    assert len(slug.encode("utf-8")) <= NAME_SLUG_MAX_BYTES
    assert "--" not in slug
    assert slugify(slug) == slug


@given(
    st.lists(
        st.sampled_from(["a", "b", "-", " ", "记", "é", "_", "Z"]), min_size=200, max_size=300
    ).map("".join)
)
def test_slugify_is_idempotent_on_long_names(text: str) -> None:
    try:
        slug = slugify(text)
    except InvalidName:
        return
    assert slugify(slug) == slug


def test_long_names_match_reasonix_file_names(tmp_path: Path) -> None:
    require_oracle()
    home, ws = tmp_path / "home", tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    home.mkdir()
    oracle = Oracle(home, ws)
    for name in LONG_NAMES:
        answer = oracle.remember(name=name, description="d", type="project", body="x")
        assert answer["error"] == "", json.dumps(answer)
    stems = {Path(fact["path"]).stem for fact in oracle.facts()}
    assert stems == {slugify(name) for name in LONG_NAMES}
