"""Model-based test: random sequences of store operations agree with a simple in-memory model.

Operations: unqualified saves (S4.1, S4.11), updates and renames by id (S4.2), restores (S4.6),
bare-name forgets (S4.7) and recovers (S4.8). After every step the store must equal the model:
the same active (id, name, scope, revision, body), every id active at most once, contiguous
history, MEMORY.md listing exactly the active names, and no temp files.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import hypothesis.strategies as st
import pytest
from context_engine.errors import AlreadyActive, NameInUse
from context_engine.facts.memory import Memory
from context_engine.facts.model import Scope
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from support.store import make_paths, temp_files

NAMES = st.sampled_from(["alpha", "beta", "gamma"])
SCOPES = st.sampled_from(["project", "global"])


@dataclass
class Active:
    name: str
    scope: Scope
    revision: int
    bodies: dict[int, str] = field(default_factory=dict)


@dataclass
class Entry:
    path: Path
    fact_id: str
    name: str
    scope: Scope
    revision: int


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="store-model-"))
        self.memory = Memory(make_paths(self.tmp))
        self.active: dict[str, Active] = {}
        self.bodies: dict[str, dict[int, str]] = {}
        self.archive: list[Entry] = []
        self.counter = itertools.count()

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _holder(self, name: str, scope: str) -> str | None:
        return next((i for i, a in self.active.items() if (a.name, a.scope) == (name, scope)), None)

    def _body(self) -> str:
        return f"body {next(self.counter)}"

    def _bump(self, fact_id: str, body: str) -> None:
        fact = self.active[fact_id]
        fact.revision += 1
        self.bodies[fact_id][fact.revision] = body

    @rule(name=NAMES, scope=SCOPES)
    def save(self, name: str, scope: Scope) -> None:
        body = self._body()
        changes = self.memory.save(name=name, scope=scope, description="d", body=body)
        holder = self._holder(name, scope)
        assert changes.fact is not None
        if holder is None:
            self.active[changes.fact.id] = Active(name, scope, 1)
            self.bodies[changes.fact.id] = {1: body}
        else:
            assert changes.fact.id == holder
            self._bump(holder, body)
        other = self._holder(name, "global" if scope == "project" else "project")
        assert len(changes.archived) == (1 if other else 0)
        if other:
            gone = self.active.pop(other)
            self.archive.append(
                Entry(changes.archived[0], other, gone.name, gone.scope, gone.revision)
            )

    @rule(data=st.data())
    def update_by_id(self, data: st.DataObject) -> None:
        if not self.active:
            return
        fact_id = data.draw(st.sampled_from(list(self.active)))  # insertion order: replayable
        body = self._body()
        self.memory.save(id=fact_id, body=body, expected_revision=self.active[fact_id].revision)
        self._bump(fact_id, body)

    @rule(data=st.data(), name=NAMES)
    def rename(self, data: st.DataObject, name: str) -> None:
        if not self.active:
            return
        fact_id = data.draw(st.sampled_from(list(self.active)))  # insertion order: replayable
        fact = self.active[fact_id]
        holder = self._holder(name, fact.scope)
        if holder is not None and holder != fact_id:
            try:
                self.memory.save(id=fact_id, name=name)
            except NameInUse:
                return
            raise AssertionError("rename onto a used name succeeded")
        self.memory.save(id=fact_id, name=name)
        fact.name = name
        self._bump(fact_id, self.bodies[fact_id][fact.revision])

    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        candidates = [i for i, a in self.active.items() if a.revision > 1]
        if not candidates:
            return
        fact_id = data.draw(st.sampled_from(candidates))
        revision = data.draw(st.integers(1, self.active[fact_id].revision - 1))
        self.memory.restore(fact_id, revision)
        self._bump(fact_id, self.bodies[fact_id][revision])

    @rule(name=NAMES)
    def forget(self, name: str) -> None:
        changes = self.memory.forget(name)
        gone = sorted(i for i, a in self.active.items() if a.name == name)
        assert sorted(changes.ids) == gone
        for path, fact_id in zip(changes.archived, changes.ids, strict=True):
            fact = self.active.pop(fact_id)
            self.archive.append(Entry(path, fact_id, fact.name, fact.scope, fact.revision))

    @rule(data=st.data())
    def recover(self, data: st.DataObject) -> None:
        if not self.archive:
            return
        entry = data.draw(st.sampled_from(self.archive))
        blocked = entry.fact_id in self.active or self._holder(entry.name, entry.scope)
        if blocked:
            try:
                self.memory.recover(entry.path)
            except AlreadyActive:
                return
            raise AssertionError("recover of an active id or name succeeded")
        changes = self.memory.recover(entry.path)
        assert changes.fact is not None
        top = max(self.bodies[entry.fact_id])
        self.active[entry.fact_id] = Active(entry.name, entry.scope, top + 1)
        self.bodies[entry.fact_id][top + 1] = self.bodies[entry.fact_id][entry.revision]
        self.archive.remove(entry)

    @invariant()
    def store_matches_model(self) -> None:
        facts = self.memory.list_all()
        seen = {(f.id, f.name, f.scope, f.revision, f.body) for f in facts}
        want = {
            (i, a.name, a.scope, a.revision, self.bodies[i][a.revision])
            for i, a in self.active.items()
        }
        assert seen == want
        assert len({f.id for f in facts}) == len(facts)
        for fact_id, fact in self.active.items():
            history = [f.revision for f in self.memory.revisions(fact_id)]
            assert history == list(range(fact.revision - 1, 0, -1))
        assert {str(e.path) for e in self.memory.list_archived()} == {
            str(e.path) for e in self.archive
        }
        for scope, store in (
            ("project", self.memory.paths.project_store),
            ("global", self.memory.paths.global_store),
        ):
            index = store / "MEMORY.md"
            text = index.read_text() if index.exists() else ""
            names = sorted(a.name for a in self.active.values() if a.scope == scope)
            assert [
                line.split("](")[1].split(".md)")[0]
                for line in text.splitlines()
                if line.startswith("- [")
            ] == names
        assert temp_files(self.tmp) == []


StoreMachine.TestCase.settings = settings(
    max_examples=40, stateful_step_count=20, deadline=None, database=None
)
TestStoreModel = pytest.mark.slow(StoreMachine.TestCase)
