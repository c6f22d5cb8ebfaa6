"""The agent-session baseline file: its marks stay encoded until something reads them."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest
from context_engine.hooks.state import BaselineStore, _file
from context_engine.session.notes import Baseline, FactMark


def _marks(n: int) -> dict[str, FactMark]:
    return {f"id{i}": FactMark(f"id{i}", i % 7, f"project/f{i}.md") for i in range(n)}


def _marks_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.marks"))


def test_a_loaded_baseline_keeps_its_marks_encoded_until_they_are_read(tmp_path: Path) -> None:
    saved = Baseline(_marks(50), {"CLAUDE.md": "d1"}, frozenset({"id3"}), digest="abc")
    BaselineStore(tmp_path).save("claude-code", "s", saved)
    (marks_file,) = _marks_files(tmp_path)
    loaded = BaselineStore(tmp_path).load("claude-code", "s")
    assert loaded is not None
    # What a quiet turn reads: the digest, instructions and masked ids, never the marks.
    assert (loaded.digest, dict(loaded.instructions), loaded.masked) == (
        "abc", {"CLAUDE.md": "d1"}, frozenset({"id3"})
    )
    assert loaded.facts._list is None and loaded.facts._packed is None  # type: ignore[attr-defined]
    # Saved again as read: the document names the same marks file, left as it was.
    before = marks_file.stat()
    BaselineStore(tmp_path).save("claude-code", "s", loaded)
    assert _marks_files(tmp_path) == [marks_file]
    assert marks_file.stat().st_mtime_ns == before.st_mtime_ns
    document = marshal.loads(_file(tmp_path, "claude-code", "s").read_bytes())
    assert document["marks_file"] == marks_file.name and "facts" not in document
    assert loaded.facts._list is None  # type: ignore[attr-defined]
    # Looked at, the marks are the saved ones.
    assert loaded.facts.get("id7") == FactMark("id7", 0, "project/f7.md")
    assert dict(loaded.facts) == saved.facts and loaded == saved


def test_a_moved_baseline_saves_only_its_overlay_and_reads_as_the_moved_marks(
    tmp_path: Path,
) -> None:
    from context_engine.session.notes import _moved

    store = BaselineStore(tmp_path)
    plain = _marks(60)
    store.save("claude-code", "s", Baseline(plain, {}, frozenset(), digest="a"))
    (marks_file,) = _marks_files(tmp_path)
    size = _file(tmp_path, "claude-code", "s").stat().st_size
    for step in range(5):
        loaded = store.load("claude-code", "s")
        assert loaded is not None
        changed = {f"id{step}": FactMark(f"id{step}", 100 + step, f"project/n{step}.md"),
                   f"new{step}": FactMark(f"new{step}", 1, f"project/new{step}.md")}
        gone = [f"id{50 + step}"]
        moved = _moved(loaded.facts, changed, gone)
        table = getattr(loaded.facts, "_base", loaded.facts)
        assert table._list is None  # not decoded to move
        store.save("claude-code", "s", Baseline(moved, {}, frozenset(), digest=f"d{step}"))
        plain = {**plain, **changed}
        for key in gone:
            del plain[key]
        # The marks file stays as written; the document carries the few marks that moved.
        assert _marks_files(tmp_path) == [marks_file]
        assert _file(tmp_path, "claude-code", "s").stat().st_size < size + 1000
        again = store.load("claude-code", "s")
        assert again is not None and again.digest == f"d{step}"
        assert dict(again.facts) == plain and len(again.facts) == len(plain)
        for key in [*changed, *gone, "id55", "none"]:
            assert again.facts.get(key) == plain.get(key)


def test_an_overlay_grown_past_its_bound_is_written_to_a_new_marks_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.session import notes
    from context_engine.session.notes import _moved

    monkeypatch.setattr(notes, "_FLATTEN_PAST", 3)
    store = BaselineStore(tmp_path)
    plain = _marks(20)
    store.save("codex", "s", Baseline(plain, {}, frozenset(), digest="a"))
    first = _marks_files(tmp_path)
    for step in range(6):
        loaded = store.load("codex", "s")
        assert loaded is not None
        changed = {f"id{step}": FactMark(f"id{step}", 50 + step, f"project/f{step}.md")}
        store.save("codex", "s", Baseline(_moved(loaded.facts, changed, []), {}, frozenset(), "d"))
        plain = {**plain, **changed}
    assert len(_marks_files(tmp_path)) == 1 and _marks_files(tmp_path) != first
    again = store.load("codex", "s")
    assert again is not None and dict(again.facts) == plain


def test_a_missing_marks_file_reads_as_no_baseline_and_a_save_writes_a_new_one(
    tmp_path: Path,
) -> None:
    from context_engine.session.notes import _moved

    store = BaselineStore(tmp_path)
    store.save("codex", "s", Baseline(_marks(10), {}, frozenset(), digest="a"))
    loaded = store.load("codex", "s")
    assert loaded is not None
    assert loaded.facts.get("id1") == FactMark("id1", 1, "project/f1.md")  # read while there
    (marks_file,) = _marks_files(tmp_path)
    marks_file.unlink()
    assert store.load("codex", "s") is None  # start afresh, as for an unreadable file
    moved = _moved(loaded.facts, {"id1": FactMark("id1", 9, "project/f1.md")}, [])
    store.save("codex", "s", Baseline(moved, {}, frozenset(), digest="b"))
    again = store.load("codex", "s")
    assert again is not None and again.facts.get("id1") == FactMark("id1", 9, "project/f1.md")
    assert len(again.facts) == 10 and len(_marks_files(tmp_path)) == 1


def test_marks_files_of_pruned_sessions_go_once_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from context_engine.hooks import state

    monkeypatch.setattr(state, "KEEP_SESSIONS", 2)
    store = BaselineStore(tmp_path)
    for i in range(3):
        store.save("codex", f"s{i}", Baseline(_marks(3), {}, frozenset(), digest="a"))
        document = _file(tmp_path, "codex", f"s{i}")
        os.utime(document, ns=(i * 10**9, i * 10**9))  # s0 the oldest: pruned
    orphan = next(p for p in _marks_files(tmp_path)
                  if p.name.startswith(_file(tmp_path, "codex", "s0").stem + "."))
    store.save("codex", "s1", store.load("codex", "s1"))  # type: ignore[arg-type]
    assert not _file(tmp_path, "codex", "s0").exists() and orphan.exists()  # too young
    os.utime(orphan, (1, 1))
    store.save("codex", "s1", store.load("codex", "s1"))  # type: ignore[arg-type]
    assert not orphan.exists() and len(_marks_files(tmp_path)) == 2


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
