"""Codec smoke tests: the S3.1 example round-trips byte for byte; legacy ids (S3.5, S3.6)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from context_engine.facts.codec import legacy_id, new_id, parse_fact, render_fact

S31_EXAMPLE = b"""---
id: mem-0123456789abcdef0123456789abcdef
revision: 3
created_at: "2026-07-01T00:00:00Z"
updated_at: "2026-07-27T10:11:12.5Z"
name: release-target
title: Release target
description: Release branch for this project
metadata:
  type: project
  scope: project
---

Release artifacts are published from main-v2.
"""

MTIME = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_s31_example_round_trips_byte_exact() -> None:
    parsed = parse_fact(
        S31_EXAMPLE, path=Path("release-target.md"), store_scope="project", mtime=MTIME
    )
    assert not parsed.needs_upgrade
    fact = parsed.fact
    assert (fact.id, fact.revision, fact.name, fact.type, fact.scope) == (
        "mem-0123456789abcdef0123456789abcdef",
        3,
        "release-target",
        "project",
        "project",
    )
    assert fact.updated_at == datetime(2026, 7, 27, 10, 11, 12, 500000, tzinfo=UTC)
    assert fact.body == "Release artifacts are published from main-v2."
    assert render_fact(fact) == S31_EXAMPLE


def test_legacy_id_check_values_s36() -> None:
    assert legacy_id("legacy-fact", "project") == "legacy-0c0ec20229014fe8e310b2e1"
    assert legacy_id("shared-name", "project") == "legacy-d24aa09ff293a5fbd6838d46"
    assert legacy_id("shared-name", "global") == "legacy-e46f4a527fb555b2e2ee9de4"


def test_new_id_shape_s35() -> None:
    ids = {new_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(re.fullmatch(r"mem-[0-9a-f]{32}", i) for i in ids)
