"""Files sharing one id rank alike however their index was built (fresh, restored, synced).

Equal scores and times fall to the id (S8.6); files holding one id then go by name and scope,
never by slot order, which differs between a fresh build and a restored or changed index.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from context_engine.engine import ContextEngine
from context_engine.facts.model import Fact
from context_engine.paths import EnginePaths
from context_engine.recall import Recaller
from support.recall import NOW
from support.store import settle_all
from test_recall_delta import full, warm, write
from test_recall_persist import answers

SHARED = "mem-project-alpha"
# The same three words in another order: every holder scores the same for every query.
BODIES = {
    "alpha": ["docker", "release", "kernel"],
    "bravo": ["kernel", "docker", "release"],
    "charlie": ["release", "kernel", "docker"],
    "delta": ["docker", "kernel", "release"],
}


def holder(name: str) -> Fact:
    return Fact(
        id=SHARED, revision=1, name=name, title="", description=f"{name} note",
        type="project", scope="project", body=" ".join(BODIES[name]),
        created_at=NOW, updated_at=NOW,
    )


def test_holders_of_one_id_answer_alike_in_any_build_order() -> None:
    facts = [holder(name) for name in ("alpha", "bravo", "charlie")]
    expected = answers(Recaller(facts))
    hits = [h.fact.name for h in Recaller(facts).search("docker release kernel")]
    assert hits == ["alpha", "bravo", "charlie"]  # by name, as the snapshot lists them
    assert answers(Recaller(facts[::-1])) == expected
    synced = Recaller([holder("charlie"), holder("delta"), holder("alpha")])
    synced.sync(facts)  # delta's slot freed, then bravo added
    assert answers(synced) == expected
    applied = Recaller([holder("bravo"), holder("delta")])
    applied.apply([holder("charlie"), holder("alpha")], ["project/delta.md"])
    assert answers(applied) == expected


@pytest.fixture()
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EnginePaths:
    settle_all(monkeypatch)
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    return EnginePaths.resolve(home=tmp_path / "home", workspace=tmp_path / "ws")


def test_three_holders_of_one_id_restored_answer_as_a_fresh_build(paths: EnginePaths) -> None:
    for name in ("alpha", "bravo", "delta"):
        write(paths.project_store, f"{name}.md", BODIES[name], fact_id=SHARED)
    warm(paths)  # the state saved over alpha, bravo, delta
    (paths.project_store / "bravo.md").unlink()
    write(paths.project_store, "charlie.md", BODIES["charlie"], fact_id=SHARED)
    expected = full(paths)[0]
    for _process in range(2):  # the one bringing the saved state up, then the next one
        engine = ContextEngine(paths)
        assert answers(engine.recaller(engine.active_facts())) == expected
