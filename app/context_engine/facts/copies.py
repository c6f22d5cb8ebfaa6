"""Copies among active facts: one id in several files, or one name claimed twice in a store.

Such a store is ambiguous (a copied file, a hand edit): commands, recall and the app act on
one of the files only, so every surface names all of them instead of listing them silently.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class _Held(Protocol):
    """What a copy check needs of a fact (a ``Fact``, a listed fact)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def path(self) -> Path | None: ...


@dataclass(frozen=True, slots=True)
class Copies:
    """``what`` (``id mem-…`` or ``name project/x.md``) held by every file in ``paths``."""

    what: str
    paths: tuple[Path, ...]

    @property
    def message(self) -> str:
        """One line for a warning."""
        files = ", ".join(str(p) for p in self.paths)
        return (f"{len(self.paths)} files have the same {self.what}: {files}; commands act on "
                "one of them only (remove or rename the copy)")


def find_copies(facts: Iterable[_Held]) -> list[Copies]:
    """Every id and every (scope, name) held by more than one file, in first-seen order."""
    by_id: dict[str, list[_Held]] = defaultdict(list)
    by_name: dict[tuple[str, str], list[_Held]] = defaultdict(list)
    for fact in facts:
        by_id[fact.id].append(fact)
        by_name[(fact.scope, fact.name)].append(fact)
    out = [Copies(f"id {fid}", tuple(f.path for f in group if f.path is not None))
           for fid, group in by_id.items() if len(group) > 1]
    out += [Copies(f"name {scope}/{name}.md", tuple(f.path for f in group if f.path is not None))
            for (scope, name), group in by_name.items() if len(group) > 1]
    return out
