"""The recall quality set (tests/engine/data/quality): facts, judged turns and the metrics.

Shared by the quality tests and ``bench/quality_bench.py``: success@4, MRR and precision over
the specific turns; false injection over the generic and weak turns (which must inject
nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from context_engine.facts.model import Fact, FactType, Scope

from support import DATA as TEST_DATA

DATA = TEST_DATA / "quality"
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Turn:
    """One judged user turn."""

    text: str
    expected: frozenset[str]
    split: str  # "d" (dev) or "h" (held out)
    kind: str  # "s" specific, "g" generic, "w" weak

    @property
    def chinese(self) -> bool:
        """Whether the turn holds CJK text."""
        return any("\u4e00" <= ch <= "\u9fff" for ch in self.text)


@dataclass(frozen=True)
class Scores:
    """The four figures of one system on one group of turns."""

    success: float
    mrr: float
    precision: float
    false_injection: float
    specific: int
    quiet: int
    injected: int


def _lines(name: str) -> list[str]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def load_facts() -> list[Fact]:
    """Every fact of the set, ages relative to :data:`NOW`."""
    out: list[Fact] = []
    for n, line in enumerate(_lines("facts.txt")):
        name, ftype, scope, age, title, description, body = line.split("|", 6)
        stamp = NOW - timedelta(days=float(age))
        out.append(
            Fact(id=f"mem-{n:032x}", revision=1, name=name, title=title, description=description,
                 type=_type(ftype), scope=_scope(scope), body=body, created_at=stamp,
                 updated_at=stamp)
        )
    return out


def _type(value: str) -> FactType:
    assert value in ("user", "feedback", "project", "reference"), value
    return value  # type: ignore[return-value]


def _scope(value: str) -> Scope:
    assert value in ("project", "global"), value
    return value  # type: ignore[return-value]


def load_turns() -> list[Turn]:
    """Every judged turn."""
    out: list[Turn] = []
    for line in _lines("turns.txt"):
        expected, split, kind, text = line.split("|", 3)
        names = frozenset(n for n in expected.split(",") if n)
        out.append(Turn(text, names, split, kind))
    return out


def evaluate(turns: Sequence[Turn], system: Callable[[str], Sequence[str]]) -> Scores:
    """Score ``system`` (turn text → injected fact names, best first) on ``turns``."""
    found = reciprocal = 0.0
    right = injected = quiet = noisy = specific = 0
    for turn in turns:
        names = list(system(turn.text))
        if turn.kind == "s":
            specific += 1
            ranks = [i for i, name in enumerate(names[:4]) if name in turn.expected]
            if ranks:
                found += 1
                reciprocal += 1 / (ranks[0] + 1)
            right += sum(1 for name in names if name in turn.expected)
            injected += len(names)
        else:
            quiet += 1
            noisy += bool(names)
    return Scores(success=found / specific if specific else 0.0,
                  mrr=reciprocal / specific if specific else 0.0,
                  precision=right / injected if injected else 1.0,
                  false_injection=noisy / quiet if quiet else 0.0, specific=specific, quiet=quiet,
                  injected=injected)
