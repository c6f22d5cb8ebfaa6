"""Who wrote each revision: the door's journal, beside the index; fact files stay unchanged."""

from __future__ import annotations

import stat
from pathlib import Path

from context_engine.catalog import journal
from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.ops import Agent, Person, Save
from context_engine.facts.codec import render_fact
from support.store import make_paths


def test_each_revision_names_its_writer_and_the_files_keep_their_bytes(tmp_path: Path) -> None:
    catalog = LocalCatalog(make_paths(tmp_path))
    first = catalog.apply(Save(name="project/deploy.md", description="Deploy", body="v1",
                               type="project", scope="project"), Person("cli")).fact
    assert first is not None
    catalog.apply(Save(id=first.id, body="v2"), Person("app"))
    catalog.apply(Save(id=first.id, body="v3"), Person("app"))
    by_agent = catalog.apply(Save(name="project/agent-note.md", description="Noted by a tool",
                                  body="x", type="project", scope="project"),
                             Agent(controller="headless", mode="yolo"))
    assert by_agent.written and by_agent.fact is not None, by_agent
    assert catalog.revisions(by_agent.fact.id).writers == {1: "an agent's tool (headless)"}
    # An outside edit (another program): no line, so the history says so.
    active = catalog.read(first.id).fact
    from dataclasses import replace

    active.path.write_bytes(render_fact(replace(active, revision=4, body="v4")))  # type: ignore[union-attr]
    catalog.apply(Save(id=first.id, body="v5"), Person("app"))
    history = catalog.revisions(first.id)
    # 4, the outside edit, has no line.
    assert dict(history.writers) == {1: "the CLI", 2: "the app", 3: "the app", 5: "the app"}
    # The fact file and its revision snapshots are what the codec writes: no writer key.
    for file in [history.active.path, *catalog.paths.project_store.rglob(".revisions/*/*.md")]:
        assert b"the app" not in Path(file).read_bytes() and b"CLI" not in Path(file).read_bytes()
    log = journal.journal_path(catalog.paths, "project")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert not str(log).startswith(str(catalog.paths.project_store))


def test_a_broken_or_missing_journal_only_means_unknown(tmp_path: Path) -> None:
    paths = make_paths(tmp_path)
    assert journal.writers(paths, "project", "mem-x") == {}
    log = journal.journal_path(paths, "project")
    log.parent.mkdir(parents=True)
    log.write_bytes(b'garbage\n{"id": "mem-x", "revision": "2", "by": 1}\n'
                    b'{"id": "mem-x", "scope": "project", "revision": 3, "by": "the CLI"}\n')
    assert journal.writers(paths, "project", "mem-x") == {3: "the CLI"}
