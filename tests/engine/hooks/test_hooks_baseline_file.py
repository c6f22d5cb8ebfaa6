"""The agent-session baseline file: its marks stay encoded until something reads them."""

from __future__ import annotations

import marshal
from pathlib import Path

from context_engine.hooks.state import BaselineStore, _file
from context_engine.session.notes import Baseline, FactMark


def _marks(n: int) -> dict[str, FactMark]:
    return {f"id{i}": FactMark(f"id{i}", i % 7, f"project/f{i}.md") for i in range(n)}


def test_a_loaded_baseline_keeps_its_marks_encoded_until_they_are_read(tmp_path: Path) -> None:
    saved = Baseline(_marks(50), {"CLAUDE.md": "d1"}, frozenset({"id3"}), digest="abc")
    BaselineStore(tmp_path).save("claude-code", "s", saved)
    loaded = BaselineStore(tmp_path).load("claude-code", "s")
    assert loaded is not None
    # What a quiet turn reads: the digest, instructions and masked ids, never the marks.
    assert (loaded.digest, dict(loaded.instructions), loaded.masked) == (
        "abc", {"CLAUDE.md": "d1"}, frozenset({"id3"})
    )
    assert loaded.facts.packed() is not None  # type: ignore[attr-defined]
    # Saved again as read: the marks' very bytes, nothing decoded and encoded again.
    before = marshal.loads(_file(tmp_path, "claude-code", "s").read_bytes())["facts"]
    BaselineStore(tmp_path).save("claude-code", "s", loaded)
    after = marshal.loads(_file(tmp_path, "claude-code", "s").read_bytes())["facts"]
    assert isinstance(before, bytes) and after == before
    assert loaded.facts.packed() is not None  # type: ignore[attr-defined]
    # Looked at, the marks are the saved ones.
    assert loaded.facts.get("id7") == FactMark("id7", 0, "project/f7.md")
    assert dict(loaded.facts) == saved.facts and loaded == saved


def test_a_baseline_without_digest_and_an_earlier_files_plain_list_read_alike(
    tmp_path: Path,
) -> None:
    store = BaselineStore(tmp_path)
    plain = Baseline(_marks(5), {}, frozenset())  # no digest: compared mark by mark
    store.save("codex", "a", plain)
    assert store.load("codex", "a") == plain
    # An earlier version's file: the facts list inline in the document.
    earlier = Baseline(_marks(5), {"AGENTS.md": "x"}, frozenset(), digest="d")
    _file(tmp_path, "codex", "b").write_bytes(marshal.dumps(earlier.to_json()))
    assert store.load("codex", "b") == earlier


def test_undecodable_marks_read_as_no_marks(tmp_path: Path) -> None:
    document = Baseline({}, {}, frozenset(), digest="d").to_json()
    document["facts"] = b"\xff not marshal"
    _file(tmp_path, "codex", "c").parent.mkdir(parents=True, exist_ok=True)
    _file(tmp_path, "codex", "c").write_bytes(marshal.dumps(document))
    loaded = BaselineStore(tmp_path).load("codex", "c")
    assert loaded is not None and loaded.digest == "d" and dict(loaded.facts) == {}
