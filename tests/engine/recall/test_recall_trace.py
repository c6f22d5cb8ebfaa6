"""Trace content and persistence: last trace and bounded history, never in a store (S8.10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from context_engine.recall import Recaller, TraceLog
from context_engine.recall.trace import RecallTrace
from support.recall import NOW, sample_store


def test_trace_json_round_trip() -> None:
    trace = Recaller(sample_store()).recall("AuthHandler #6928", now=NOW).trace
    data = json.loads(json.dumps(trace.to_dict()))
    assert RecallTrace.from_dict(data) == trace
    assert {"query", "hits", "omitted", "char_budget", "used_chars", "suppressed"} <= set(data)


def test_last_and_bounded_history(tmp_path: Path) -> None:
    log = TraceLog(tmp_path / "data" / "recall", limit=5)
    assert log.last() is None
    for i in range(13):
        log.record(RecallTrace(query=f"q{i}", char_budget=2400))
    assert log.last() is not None and log.last().query == "q12"  # type: ignore[union-attr]
    history = log.history()
    assert [t.query for t in history] == [f"q{i}" for i in range(8, 13)]
    lines = log.history_path.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 10  # compacted at twice the limit
    assert not [p for p in log.directory.iterdir() if p.name.startswith(".")]  # no temp leftovers


def test_torn_history_line_is_ignored(tmp_path: Path) -> None:
    log = TraceLog(tmp_path / "recall")
    log.record(RecallTrace(query="ok"))
    with open(log.history_path, "a", encoding="utf-8") as handle:
        handle.write('{"query": "tor')
    assert [t.query for t in log.history()] == ["ok"]


def test_trace_log_refuses_store_directory(tmp_path: Path) -> None:
    store = tmp_path / "projects" / "x" / "memory"
    with pytest.raises(ValueError):
        TraceLog(store / "recall", stores=(store,))


@pytest.mark.slow
def test_default_history_limit_is_200(tmp_path: Path) -> None:
    log = TraceLog(tmp_path / "recall")
    assert log.limit == 200
    for i in range(205):
        log.record(RecallTrace(query=f"q{i}"))
    history = log.history()
    assert len(history) == 200 and history[-1].query == "q204" and history[0].query == "q5"


def test_text_trace_lists_drops_and_reasons() -> None:
    from support.recall import fact

    store = [
        fact("deploy-steps", "kubectl rollout project way", scope="project"),
        fact("deploy-steps", "kubectl rollout global way", scope="global"),
    ]
    text = Recaller(store).recall("kubectl rollout", now=NOW).trace.to_text()
    assert "project override" in text and "overridden by project/deploy-steps.md" in text


def test_a_long_lived_log_reads_the_history_only_when_another_writer_touched_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = TraceLog(tmp_path / "recall", limit=4)
    other = TraceLog(tmp_path / "recall", limit=4)  # e.g. a cold hook process
    reads = []
    real = TraceLog._count_lines
    monkeypatch.setattr(TraceLog, "_count_lines", lambda self: reads.append(self) or real(self))
    host.record(RecallTrace(query="q0"))
    first = len(reads)
    for i in range(1, 4):
        host.record(RecallTrace(query=f"q{i}"))
    assert len(reads) == first  # its own appends: counted, not re-read
    other.record(RecallTrace(query="other"))
    host.record(RecallTrace(query="q4"))
    assert len(reads) > first  # someone else appended: read again
    for i in range(5, 30):
        (host if i % 3 else other).record(RecallTrace(query=f"q{i}"))
        lines = (tmp_path / "recall" / "recall-history.jsonl").read_text().splitlines()
        assert len(lines) <= 2 * 4 + 1
    assert [t.query for t in host.history()][-1] == "q29"


def test_a_cold_log_counts_the_history_without_decoding_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = TraceLog(tmp_path / "recall", limit=4)
    for i in range(6):
        writer.record(RecallTrace(query=f"é{i} — 记忆"))
    torn = TraceLog(tmp_path / "torn")
    torn.record(RecallTrace(query="ok"))
    with open(torn.history_path, "a", encoding="utf-8") as handle:
        handle.write('{"query": "tor')
    for log in (TraceLog(tmp_path / "recall"), torn, TraceLog(tmp_path / "none")):
        assert log._count_lines() == len(log._lines())
    (tmp_path / "none").mkdir()
    TraceLog(tmp_path / "none").history_path.write_bytes(b"")
    assert TraceLog(tmp_path / "none")._count_lines() == 0
    cold = TraceLog(tmp_path / "recall", limit=4)
    real = TraceLog._lines
    decoded: list[int] = []
    monkeypatch.setattr(TraceLog, "_lines", lambda self: decoded.append(1) or real(self))
    cold.record(RecallTrace(query="q6"))
    cold.record(RecallTrace(query="q7"))  # 8 lines: not past twice the limit, nothing decoded
    assert decoded == [] and cold._count == 8
    TraceLog(tmp_path / "recall", limit=4).record(RecallTrace(query="q8"))  # 9 > 8: compacted
    assert decoded and len(real(cold)) == 4
    assert [t.query for t in cold.history()] == ["é5 — 记忆", "q6", "q7", "q8"]


def _asdict_form(trace: RecallTrace) -> dict[str, object]:
    """The reference: ``dataclasses.asdict`` with the records as lists (the former to_dict)."""
    from dataclasses import asdict

    data = asdict(trace)
    data["hits"] = [asdict(h) for h in trace.hits]
    data["dropped"] = [asdict(d) for d in trace.dropped]
    data["skipped"] = [asdict(s) for s in trace.skipped]
    return data


def _traces():  # type: ignore[no-untyped-def]
    from context_engine.recall.trace import TraceDrop, TraceHit, TraceSkip
    from hypothesis import strategies as st

    text = st.text(max_size=12)
    number = st.integers(min_value=-3, max_value=10**6)
    score = st.floats(allow_nan=False, allow_infinity=False)
    head = (text, number, text, text, text, score)
    hit = st.builds(lambda *a: TraceHit(*a), *head, text, text, text)
    drop = st.builds(lambda *a: TraceDrop(*a), *head, text, text)
    skip = st.builds(TraceSkip, text, text, text)
    return st.builds(
        RecallTrace,
        query=text,
        hits=st.lists(hit, max_size=4).map(tuple),
        omitted=number,
        char_budget=number,
        used_chars=number,
        suppressed=st.none() | text,
        limit=number,
        dropped=st.lists(drop, max_size=6).map(tuple),
        dropped_counts=st.dictionaries(text, number, max_size=4),
        skipped=st.lists(skip, max_size=3).map(tuple),
        candidates=number,
        pool_size=number,
        at=text,
    )


@pytest.mark.slow
def test_to_dict_equals_the_asdict_form_key_for_key() -> None:
    """Same keys in the same order and the same values, so the JSON written is the same."""
    from hypothesis import given, settings

    @settings(max_examples=150, deadline=None)
    @given(_traces())
    def check(trace: RecallTrace) -> None:
        fast, slow = trace.to_dict(), _asdict_form(trace)
        assert json.dumps(fast) == json.dumps(slow)
        assert fast == slow
        assert fast["dropped_counts"] is not trace.dropped_counts

    check()


def test_to_dict_of_a_recall_equals_the_asdict_form() -> None:
    recaller = Recaller(sample_store())
    for query in ("why does the release build fail?", "docker cache release", "记忆召回"):
        trace = recaller.recall(query, limit=1, budget=300, now=NOW).trace
        assert json.dumps(trace.to_dict()) == json.dumps(_asdict_form(trace))
