"""The generic table and tree models pass Qt's model contract (qtmodeltester)."""

from __future__ import annotations

from dataclasses import dataclass

from context_center.models import roles
from context_center.models.table import SCANS_BEFORE_INDEX, Column, RowTableModel, sort_rows
from context_center.models.tree import Node, NodeTreeModel
from PySide6.QtCore import Qt


@dataclass(frozen=True)
class Row:
    name: str
    size: int


COLUMNS = (
    Column("Name", lambda r: r.name),
    Column("Size", lambda r: str(r.size), sort_key=lambda r: r.size),
)


def test_table_model_contract(qtmodeltester):
    model = RowTableModel(COLUMNS, key=lambda r: r.name)
    model.set_rows([Row("b", 2), Row("a", 10), Row("c", 1)])
    qtmodeltester.check(model)
    assert model.rowCount() == 3
    assert model.data(model.index(1, 0)) == "a"
    assert model.data(model.index(1, 1), roles.ROW) == Row("a", 10)
    assert model.find("c") == 2
    model.set_rows([])
    qtmodeltester.check(model)
    assert model.find("c") == -1


def test_find_answers_the_first_row_holding_a_key():
    model = RowTableModel(COLUMNS, key=lambda r: r.name)
    model.set_rows([Row("a", 1), Row("b", 2), Row("a", 3), Row("b", 4)])
    assert (model.find("a"), model.find("b"), model.find("z")) == (0, 1, -1)


def test_table_sort_is_requested_not_done(qtbot):
    model = RowTableModel(COLUMNS, key=lambda r: r.name)
    rows = (Row("b", 2), Row("a", 10), Row("c", 1))
    model.set_rows(rows)
    with qtbot.waitSignal(model.sort_requested) as blocker:
        model.sort(1, Qt.SortOrder.DescendingOrder)
    assert blocker.args[0] == 1
    assert model.rows == rows  # untouched until the owner swaps in the sorted snapshot
    assert [r.size for r in sort_rows(rows, COLUMNS[1], True)] == [10, 2, 1]


def test_tree_model_contract(qtmodeltester):
    model = NodeTreeModel(["Label", "Scope"])
    root = Node(values=())
    doc = root.add(Node(("AGENTS.md", "project"), kind="document"))
    doc.add(Node(("docs/a.md", ""), kind="import")).add(Node(("docs/b.md", ""), kind="import"))
    root.add(Node(("CLAUDE.md", "user"), kind="document"))
    model.set_root(root)
    qtmodeltester.check(model)
    first = model.index(0, 0)
    assert model.rowCount(first) == 1
    child = model.index(0, 0, first)
    assert model.parent(child) == first
    assert model.data(child, roles.KIND) == "import"


def test_a_lookup_finds_keys_without_indexing_every_row():
    asked: list[object] = []

    def lookup(rows, key):
        asked.append(key)
        return next((i for i, r in enumerate(rows) if r.name == key), -1)

    model = RowTableModel(COLUMNS, key=lambda r: r.name, lookup=lookup)
    model.set_rows([Row("a", 1), Row("b", 2)])
    assert (model.find("b"), model.find("b"), model.find("z")) == (1, 1, -1)
    assert asked == ["b", "z"]  # remembered until the rows change
    model.set_rows([Row("b", 2)])
    assert model.find("b") == 0 and asked == ["b", "z", "b"]
    # Many keys of one set of rows: indexed once, every later key answered without a scan.
    model.set_rows([Row(str(i), i) for i in range(100)])
    asked.clear()
    assert [model.find(str(i)) for i in range(100)] == list(range(100))
    assert len(asked) == SCANS_BEFORE_INDEX


def test_a_fact_row_is_found_by_scope_and_id():
    from datetime import UTC, datetime

    from context_center.services.fact_rows import FactRow, find_fact_row
    from context_engine.facts.model import Fact

    when = datetime(2026, 1, 1, tzinfo=UTC)

    def row(scope: str, fact_id: str) -> FactRow:
        return FactRow(Fact(fact_id, 1, "n", "", "d", "project", scope, "", when, when), "fresh")

    rows = (row("global", "mem-1"), row("project", "mem-2"), row("project", "mem-1"))
    assert find_fact_row(rows, ("project", "mem-1")) == 2  # past the global one with that id
    assert find_fact_row(rows, ("global", "mem-1")) == 0
    assert find_fact_row(rows, ("global", "mem-2")) == -1
    assert find_fact_row(rows, "mem-1") == -1
