"""Filtering while typing narrows the last result and still equals a full filter (S13.2)."""

from __future__ import annotations

from datetime import UTC, datetime

from context_center.presenters.facts import FactsPresenter
from context_center.services.fact_rows import FactFilter, FactsSnapshot, build_rows, filter_rows
from context_center.services.hub import Hub
from context_center.services.tasks import TaskManager
from context_center.widgets.facts_tab import SORT_KEYS, FactsTab
from context_engine.facts.model import Fact

WORDS = ("release", "branch", "deploy", "tests", "docs", "ledger", "retry", "relay")


def _facts(n: int) -> list[Fact]:
    out = []
    for i in range(n):
        w = [WORDS[(i * k) % len(WORDS)] for k in (1, 3, 5)]
        stamp = datetime(2026, 1, 1 + i % 28, tzinfo=UTC)
        out.append(Fact(id=f"mem-{i:032x}", revision=1, name=f"fact-{i:04d}",
                        title=f"{w[0]} {w[1]}", description=f"about {w[2]}",
                        type=("project", "reference", "user", "feedback")[i % 4],
                        scope="global" if i % 3 == 0 else "project", body=" ".join(w),
                        created_at=stamp, updated_at=stamp))
    return out


def test_typing_sequence_matches_full_filtering(qtbot):
    rows = build_rows(_facts(400))
    tab = FactsTab()
    qtbot.addWidget(tab)
    tasks = TaskManager()
    presenter = FactsPresenter(tab, backend=None, tasks=tasks, hub=Hub())  # type: ignore[arg-type]
    try:
        presenter._on_snapshot(FactsSnapshot(rows, ()))
        qtbot.waitUntil(lambda: tab.model.rowCount() == 400, timeout=3000)
        tab.scope_box.setCurrentIndex(tab.scope_box.findData("project"))
        for text in ("r", "re", "rel", "rela", "rel", "re", "", "deploy t", "deploy te",
                     "deploy tes", "tests deploy", "zz", ""):
            tab.search.setText(text)
            expected = filter_rows(rows, FactFilter(text=text, scope="project"), SORT_KEYS)
            qtbot.waitUntil(lambda e=expected: tab.model.rows == e, timeout=3000)
    finally:
        tasks.shutdown()


def test_duplicates_by_title_or_description_but_not_override_pairs():
    def fact(i: int, name: str, scope: str, title: str, desc: str) -> Fact:
        return Fact(id=f"mem-{i:032x}", revision=1, name=name, title=title, description=desc,
                    type="project", scope=scope, body="b")  # type: ignore[arg-type]

    rows = {r.fact.reference: r for r in build_rows([
        fact(1, "a", "project", "Deploy window", "when deploys run"),
        fact(2, "b", "project", "deploy-window", "something else"),
        fact(3, "c", "project", "Other", "When deploys run!"),
        fact(4, "a", "global", "Deploy window", "when deploys run"),
    ])}
    note_b = rows["project/b.md"].note
    assert "project/a.md" in note_b and "the same title" in note_b
    note_c = rows["project/c.md"].note
    assert "project/a.md" in note_c and "the same description" in note_c
    assert rows["global/a.md"].overridden
    assert "Possible duplicate of global/a.md" not in rows["project/a.md"].note
    assert rows["project/a.md"].note.count("project/b.md") == 1
