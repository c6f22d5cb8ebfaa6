"""A revision history over the wire keeps who wrote each revision (the write journal)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from context_engine.catalog.base import History
from context_engine.catalog.wire import decode_history, encode_history
from context_engine.facts.model import Fact


def _fact(revision: int) -> Fact:
    stamp = datetime(2026, 11, 1, tzinfo=UTC)
    return Fact(id="mem-1", revision=revision, name="n", title="T", description="d",
                type="project", scope="project", body="b", created_at=stamp, updated_at=stamp)


def test_writers_survive_the_wire() -> None:
    history = History(_fact(3), (_fact(2), _fact(1)), {3: "the app", 1: "the CLI"})
    back = decode_history(json.loads(json.dumps(encode_history(history))))
    assert dict(back.writers) == {3: "the app", 1: "the CLI"}
    assert back.active == history.active and back.revisions == history.revisions


def test_a_server_without_writers_knows_none() -> None:
    data = encode_history(History(_fact(2), (_fact(1),)))
    del data["writers"]
    assert dict(decode_history(data).writers) == {}
