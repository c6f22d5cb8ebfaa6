"""``@record`` behaves as ``@dataclass(frozen=True, slots=True)``, without importing it.

Each behaviour is checked against the dataclass twin of the same declaration: construction and
defaults, ``repr``, equality and hash (``compare=False`` fields left out), frozen fields,
slots, pickling and copying, ``match``, inheritance (a record of a record, a dataclass of a
record), and ``dataclasses.replace``/``fields``/``asdict`` on a record. And a cold ``remember``
process, the reason for it, imports no ``dataclasses`` (nor ``inspect``).
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from context_engine import records
from context_engine.records import field, record
from support.index import child_env


@record
class Point:
    """A record."""

    x: int
    y: int = 0
    label: str | None = field(default=None, compare=False)
    tags: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class PointDC:
    """Its dataclass twin."""

    x: int
    y: int = 0
    label: str | None = dataclasses.field(default=None, compare=False)
    tags: tuple[str, ...] = ()


@record
class Named(Point):
    """A record inheriting a record's fields."""

    name: str = ""
    items: list[int] = field(default_factory=list)


@dataclasses.dataclass(frozen=True, slots=True)
class NamedDC(PointDC):
    """Its dataclass twin."""

    name: str = ""
    items: list[int] = dataclasses.field(default_factory=list)


@record
class Cached:
    """A record with a field kept out of ``repr`` and ``==`` (a cache)."""

    text: str
    memo: dict[str, int] = field(default_factory=dict, compare=False, repr=False)


@dataclasses.dataclass(frozen=True, slots=True)
class CachedDC:
    """Its dataclass twin."""

    text: str
    memo: dict[str, int] = dataclasses.field(default_factory=dict, compare=False, repr=False)


@dataclasses.dataclass(frozen=True, slots=True)
class OnTop(Point):
    """A dataclass inheriting a record."""

    extra: int = 7


def test_construction_repr_and_defaults_match_the_dataclass() -> None:
    for args, kwargs in [((1,), {}), ((1, 2), {"label": "a"}), ((), {"x": 3, "tags": ("t",)})]:
        got, want = Point(*args, **kwargs), PointDC(*args, **kwargs)  # type: ignore[arg-type]
        assert repr(got).replace("Point(", "PointDC(", 1) == repr(want)
        assert dataclasses.astuple(got) == dataclasses.astuple(want)
    assert Point.__match_args__ == PointDC.__match_args__
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, nope=2)  # type: ignore[call-arg]


def test_a_field_left_out_of_repr_is_not_shown() -> None:
    got, want = Cached("a", {"k": 1}), CachedDC("a", {"k": 1})
    assert repr(got).replace("Cached(", "CachedDC(", 1) == repr(want) == "CachedDC(text='a')"
    assert got == Cached("a") and got.memo == {"k": 1}
    assert [f.repr for f in dataclasses.fields(Cached)] == [True, False]


def test_equality_and_hash_leave_out_uncompared_fields() -> None:
    assert Point(1, 2, "a") == Point(1, 2, "b")
    assert hash(Point(1, 2, "a")) == hash(Point(1, 2, "b"))
    assert Point(1, 2) != Point(1, 3)
    assert Point(1, 2) != PointDC(1, 2)  # another class is never equal, as dataclasses do
    assert (Point(1) == Named(1)) is False
    assert len({Point(1), Point(1, label="x"), Point(2)}) == 2


def test_fields_are_frozen_and_slotted() -> None:
    point = Point(1)
    with pytest.raises(AttributeError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.x  # type: ignore[misc]
    assert not hasattr(point, "__dict__")
    assert Point.__slots__ == ("x", "y", "label", "tags")  # type: ignore[attr-defined]


def test_pickle_copy_and_match() -> None:
    named = Named(1, 2, "l", ("t",), "n", [3])
    assert pickle.loads(pickle.dumps(named)) == named
    assert copy.copy(named) == named and copy.deepcopy(named) == named
    match named:
        case Named(x, y, _, _, name):
            assert (x, y, name) == (1, 2, "n")
        case _:
            raise AssertionError("no match")


def test_inheritance_and_factories_match_the_dataclass() -> None:
    got, want = Named(1, name="n"), NamedDC(1, name="n")
    assert dataclasses.astuple(got) == dataclasses.astuple(want)
    assert Named(1).items is not Named(1).items  # a fresh list each time
    assert Named.__match_args__ == NamedDC.__match_args__
    on_top = OnTop(1, extra=3)
    assert (on_top.x, on_top.extra) == (1, 3)
    assert dataclasses.replace(on_top, y=5) == OnTop(1, 5, extra=3)


def test_dataclasses_functions_work_on_records() -> None:
    point = Point(1, 2, "a", ("t",))
    assert dataclasses.is_dataclass(point)
    assert [f.name for f in dataclasses.fields(Point)] == [
        f.name for f in dataclasses.fields(PointDC)
    ]
    assert dataclasses.asdict(point) == dataclasses.asdict(PointDC(1, 2, "a", ("t",)))
    assert dataclasses.replace(point, y=9) == Point(1, 9, "a", ("t",))
    assert dataclasses.replace(point, label="b").label == "b"
    assert records.replace(point, y=9) == dataclasses.replace(point, y=9)
    assert records.replace(PointDC(1), y=4) == PointDC(1, 4)  # a dataclass: handed on
    with pytest.raises(TypeError):
        records.replace(point, nope=1)


@pytest.mark.slow
def test_a_cold_remember_imports_no_dataclasses(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from context_engine.cli import entry\n"
        "sys.argv = ['context-engine', '--home', sys.argv[1], '--workspace', sys.argv[2],"
        " 'remember', '--name', 'cold', '--body', 'A cold write.']\n"
        "import os\n"
        "real_exit = os._exit\n"
        "def leave(code):\n"
        "    print(sorted(m for m in ('dataclasses', 'inspect') if m in sys.modules))\n"
        "    real_exit(code)\n"
        "os._exit = leave\n"
        "entry.main()\n"
    )
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    for _ in range(2):  # the store's first write, then one on a store with a writer state
        out = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / "home"), str(workspace)],
            capture_output=True, text=True, env=child_env(), timeout=60, check=True,
        )
        assert "saved project/cold.md" in out.stdout
        assert out.stdout.strip().endswith("[]"), out.stdout
