"""The plain Python scorer and NumPy's give the same recall, float for float (issue 14).

A hook process answers through the plain path (no NumPy import); a long-lived host through
NumPy's. Both must produce the very same trace: hits, scores, drops and counts.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import asdict

import pytest
from context_engine.recall import Recaller, index
from context_engine.recall.index import DocMeta, SparseIndex
from hypothesis import given, settings
from hypothesis import strategies as st
from support.quality import NOW as SET_NOW
from support.quality import load_facts, load_turns
from support.recall import NOW, fact

WORDS = ["docker", "kernel", "socket", "vault", "retry", "cache", "release", "budget", "the",
         "build", "fix", "缓存", "发布", "超时", "2.x", "6928"]


def traces(recaller: Recaller, message: str, plain: bool, monkeypatch: pytest.MonkeyPatch,
           now: object = NOW) -> tuple[dict[str, object], list[object]]:
    """The recall trace and a search's hits with one scorer forced."""
    monkeypatch.setattr(index, "use_python", lambda postings: plain)
    trace = asdict(recaller.recall(message, now=now).trace)  # type: ignore[arg-type]
    found = [(h.fact.id, h.score) for h in recaller.search(message)]
    return trace, found


facts_strategy = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=12),
        st.sampled_from(["project", "global"]),
        st.sampled_from(["project", "reference", "user", "feedback"]),
        st.floats(min_value=0, max_value=400),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(facts_strategy, st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
def test_random_stores_score_the_same_on_both_paths(specs, query) -> None:  # type: ignore[no-untyped-def]
    store = [
        fact(f"f{i}-{words[0]}", " ".join(words), scope=scope, type=kind,  # type: ignore[arg-type]
             age_days=age)
        for i, (words, scope, kind, age) in enumerate(specs)
    ]
    recaller = Recaller(store)
    message = " ".join(query)
    with pytest.MonkeyPatch.context() as patch:
        assert traces(recaller, message, True, patch) == traces(recaller, message, False, patch)


LONG = [f"term{i}" for i in range(60)]  # more query terms than the bitmask holds


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(LONG[40:] + WORDS), min_size=1, max_size=10),
            st.sampled_from(["project", "global"]),
        ),
        min_size=1,
        max_size=20,
    ),
    st.lists(st.sampled_from(WORDS), max_size=4),
)
def test_queries_longer_than_the_bitmask_score_the_same_on_both_paths(specs, extra) -> None:  # type: ignore[no-untyped-def]
    """Terms past ``MASK_TERMS`` have no bit: NumPy's gate then counts them per posting."""
    store = [
        fact(f"f{i}", " ".join(words), scope=scope)  # type: ignore[arg-type]
        for i, (words, scope) in enumerate(specs)
    ]
    recaller = Recaller(store)
    message = " ".join(LONG + extra)
    with pytest.MonkeyPatch.context() as patch:
        assert traces(recaller, message, True, patch) == traces(recaller, message, False, patch)


def test_the_quality_set_scores_the_same_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    recaller = Recaller(load_facts())
    turns = load_turns()
    assert len(turns) > 20
    for turn in turns:
        plain = traces(recaller, turn.text, True, monkeypatch, SET_NOW)
        assert plain == traces(recaller, turn.text, False, monkeypatch, SET_NOW), turn.text


def test_a_process_scores_plainly_first_then_with_numpy() -> None:
    code = (
        "import sys\n"
        "from context_engine.recall.index import use_python, PYTHON_POSTINGS\n"
        "assert not use_python(PYTHON_POSTINGS + 1)\n"
        "from context_engine.recall import Recaller\n"
        "from context_engine.facts.model import Fact\n"
        "f = Fact(id='a', revision=1, name='n', title='t', description='d', type='project',"
        " scope='project', body='docker kernel socket')\n"
        "assert Recaller([f]).recall('docker kernel').trace.hits\n"
        "assert 'numpy' not in sys.modules, 'the plain path imported NumPy'\n"
        "from context_engine.recall import index\n"
        "used = index._scorings[0]\n"
        "assert [use_python(10) for _ in range(9)].count(True) == index.PLAIN_SCORINGS - used\n"
        "import numpy\n"
        "assert not use_python(10)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_removing_from_a_long_posting_finds_the_slot() -> None:
    built = SparseIndex()
    built.add_many((f"k{i}", {"common": 1 + i % 3, f"own{i}": 1}, DocMeta()) for i in range(300))
    built.remove("k150", ["common", "own150"])
    assert built.df("common") == 299 and built.df("own150") == 0
    built.remove("k299", ["common", "own299"])
    assert built.df("common") == 298
    assert "k150" not in built and "k0" in built
