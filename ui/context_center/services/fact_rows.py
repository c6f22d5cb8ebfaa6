"""Facts-tab rows built off the GUI thread: freshness, overrides and duplicates in words."""

from __future__ import annotations

import gc
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from operator import attrgetter, countOf, indexOf
from typing import Any

from context_engine.facts.freshness import freshness
from context_engine.facts.model import (
    Diagnostic,
    Fact,
    normalize_key,
)

_ID = attrgetter("fact.id")
_TYPE = attrgetter("fact.type")
_SCOPE = attrgetter("fact.scope")
_FRESHNESS = attrgetter("freshness")
FREEZE_FROM = 5_000  # rows: a table this large is frozen out of the cyclic GC's scans
KEY_WORDS = {"id": "the same id", "name": "the same name", "title": "the same title"}


@dataclass(frozen=True, slots=True)
class FactRow:
    """One active fact as the Facts table shows it."""

    fact: Fact
    freshness: str
    note: str = ""  # override / possible duplicate, explained in words
    overridden: bool = False  # a global fact hidden by an equivalent project fact
    haystack: str = ""  # lowercased searchable text
    conflict: bool = False  # another file has the same id, or the same name in this scope
    keys: tuple[str, ...] = ()  # every key relating it to other rows (for per-file patches)
    lazy: bool = False  # built from the derived index: the body is read when shown
    number: int = -1  # its row number in a column table (``fact_table.Table``), else -1

    @property
    def key(self) -> tuple[str, str]:
        """Stable identity in the table: (scope, id)."""
        return (self.fact.scope, self.fact.id)

    @property
    def updated(self) -> str:
        """``updated_at`` (else ``created_at``) as ``YYYY-MM-DD HH:MM``."""
        stamp = self.fact.timestamp
        return stamp.strftime("%Y-%m-%d %H:%M") if stamp else ""


@dataclass(frozen=True, slots=True)
class FactsSnapshot:
    """Everything the Facts tab shows, immutable; compared by ``signature`` to skip echoes."""

    # A tuple, or a column table's rows (``fact_table.Rows``: made per row when read).
    rows: Sequence[FactRow]
    diagnostics: tuple[Diagnostic, ...]
    archived: int = 0
    partial: bool = False  # a first page; the complete listing is still to come
    reading: bool = False  # (partial) rows parsed so far: the rest of the files are still read
    # Rows of the project store, counted where the snapshot is made (a worker), not on the GUI.
    project: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        columns = getattr(self.rows, "project", None)
        project = columns() if callable(columns) else countOf(map(_SCOPE, self.rows), "project")
        object.__setattr__(self, "project", project)

    @property
    def columns(self) -> bool:
        """Whether the rows are a column table's (``fact_table.Rows``)."""
        return hasattr(self.rows, "table")

    @property
    def signature(self) -> tuple[object, ...]:
        """(scope, id, revision, name, stamp) of every row plus the diagnostics' paths."""
        made = getattr(self.rows, "signature", None)
        return (
            made() if callable(made) else tuple(
                (r.fact.scope, r.fact.id, r.fact.revision, r.fact.name, _stamp(r.fact.stamp))
                for r in self.rows
            ),
            tuple((str(d.path), d.code, d.message) for d in self.diagnostics),
            self.archived,
        )

    def counts(self) -> list[tuple[str, dict[str, int]]]:
        """Spread over type, scope and freshness, for the chart."""
        made = getattr(self.rows, "counts", None)
        if callable(made):
            result: list[tuple[str, dict[str, int]]] = made()
            return result
        # C-level getters and counting: ~10x faster than generator expressions (100k rows).
        types = Counter(map(_TYPE, self.rows))
        scopes = Counter(map(_SCOPE, self.rows))
        fresh = Counter(map(_FRESHNESS, self.rows))
        return [
            ("type", {k: types.get(k, 0) for k in ("user", "feedback", "project", "reference")}),
            ("scope", {k: scopes.get(k, 0) for k in ("project", "global")}),
            ("freshness", {k: fresh.get(k, 0) for k in ("fresh", "current", "stale")}),
        ]


SortKey = Callable[[FactRow], Any]  # a column's sort value for one row


def _stamp(stamp: Any) -> tuple[int, ...]:
    """A ``FileStamp`` as the tuple a column table's signature holds."""
    return () if stamp is None else (stamp.device, stamp.inode, stamp.size, stamp.mtime_ns)


def build_rows(
    facts: Iterable[Fact],
    now: datetime | None = None,
    *,
    lazy: bool = False,
    bodies: Mapping[int, str] | None = None,
    texts: Mapping[int, str] | None = None,
) -> tuple[FactRow, ...]:
    """Rows for ``facts`` with project-over-global overrides and possible duplicates explained.

    ``lazy``: the facts carry no body (it is read when shown); ``bodies`` (``id(fact)`` →
    body) gives their search text, ``texts`` (``id(fact)`` → search text) a ready one.
    """
    from context_engine.facts.store import gc_paused

    # 100,000 rows are millions of acyclic objects: the cyclic GC would re-scan them all.
    with gc_paused():
        rows = _build_rows(facts, now, lazy, bodies, texts)
        if len(rows) >= FREEZE_FROM:
            # Long-lived and acyclic: out of the collector's sight for good (refcounting still
            # frees them). Else the first collection after the pause scans every new object —
            # about a second at 100,000 rows, on whichever thread allocates next (the GUI's).
            gc.freeze()
    return rows


def search_text(fact: Fact, body: str) -> str:
    """The lowercased text the search box matches words in."""
    return "\n".join((fact.name, fact.title, fact.description, body, fact.type, fact.scope)).lower()


class ListedTexts:
    """``on_fact`` of a listing: each fact's search text, reusing an earlier listing's rows.

    A fact equal to the one an earlier row shows (same fields, stamp and search text) is
    answered as that very object with its text: a relisting (F5) of 100,000 unchanged facts
    holds no second copy of them while the old rows are still on screen.
    """

    def __init__(self, previous: Iterable[FactRow] = ()) -> None:
        self._old = {(r.fact.scope, r.fact.path.name): r for r in previous
                     if r.lazy and r.fact.path is not None}
        self.bodies: dict[int, str] = {}
        self.texts: dict[int, str] = {}

    def __call__(self, fact: Fact, body: str) -> Fact | None:
        """Keep ``body`` for ``fact``'s row, or answer the earlier equal fact."""
        old = self._old.get((fact.scope, fact.path.name)) if fact.path is not None else None
        if old is not None and old.fact == fact and old.fact.stamp == fact.stamp \
                and search_text(fact, body) == old.haystack:
            self.texts[id(old.fact)] = old.haystack
            return old.fact
        self.bodies[id(fact)] = body
        return None

    def forget_previous(self) -> None:
        """Drop the map of the earlier rows (the listing is done with it)."""
        self._old = {}


def find_fact_row(rows: Sequence[FactRow], key: object) -> int:
    """Index of the first row whose (scope, id) is ``key``, else -1.

    A C-level scan of the ids, no index built: ~10 ms at 100,000 rows, where a dict of every
    row's key cost ~100 ms on the GUI thread after each new set of rows (every write).
    """
    if not isinstance(key, tuple) or len(key) != 2:
        return -1
    find = getattr(rows, "find", None)
    if callable(find):  # a column table's rows: a scan of its id column
        found: int = find(key)
        return found
    scope, fact_id = key
    start = 0
    while True:
        try:
            at = start + indexOf(map(_ID, islice(rows, start, None)), fact_id)
        except ValueError:
            return -1
        if rows[at].fact.scope == scope:
            return at
        start = at + 1  # the same id in the other scope (or a copy): look further


def still_shown(
    previous: FactsSnapshot, facts: Sequence[Fact], diagnostics: Sequence[Diagnostic],
    now: datetime | None = None,
) -> bool:
    """Whether ``previous`` already shows exactly ``facts`` (the very objects a relisting
    handed back unchanged, see :class:`ListedTexts`) and ``diagnostics``, freshness included.

    Then rebuilding its rows would give the same rows: F5 on an unchanged store at 100,000
    facts keeps the rows on screen instead of holding a second copy of them while it builds.
    """
    rows = previous.rows
    if len(rows) != len(facts) or tuple(previous.diagnostics) != tuple(diagnostics):
        return False
    held = {id(row.fact) for row in rows}
    if not all(id(fact) in held for fact in facts):
        return False
    when = now or datetime.now(UTC)  # one moment for every row
    return all(row.freshness == freshness(row.fact, when) for row in rows)


def _build_rows(
    facts: Iterable[Fact],
    now: datetime | None,
    lazy: bool,
    bodies: Mapping[int, str] | None,
    texts: Mapping[int, str] | None,
) -> tuple[FactRow, ...]:
    # The recall package pulls in its index; import it here, on the worker, not at start-up.
    from context_engine.facts.equivalence import equivalence_keys

    facts = list(facts)
    eq_keys = [equivalence_keys(fact) for fact in facts]
    project_keys: dict[str, Fact] = {}
    for fact, keys in zip(facts, eq_keys, strict=True):
        if fact.scope == "project":
            for key in keys:
                project_keys.setdefault(key, fact)
    overridden_by: dict[str, tuple[Fact, str]] = {}
    overrides: dict[str, list[str]] = defaultdict(list)
    for fact, keys in zip(facts, eq_keys, strict=True):
        if fact.scope != "global":
            continue
        for key in keys:
            winner = project_keys.get(key)
            if winner is not None:
                why = KEY_WORDS.get(key.split(":", 1)[0], "an equivalent key")
                overridden_by[fact.reference] = (winner, why)
                overrides[winner.reference].append(f"{fact.reference} ({why})")
                break
    # Possible duplicates: the same normalized title or description (the write policy's test
    # for "an existing memory may already cover this fact", S10.1), override pairs excepted.
    groups: dict[str, list[Fact]] = defaultdict(list)
    dup_keys = [_duplicate_keys(fact) for fact in facts]
    for fact, keys in zip(facts, dup_keys, strict=True):
        for key in keys:
            groups[key].append(fact)
    group_refs: dict[str, set[str]] = {}  # filled lazily: most keys are unique
    # Copies: the same id in two files, or two files claiming one name in one store. Tools
    # and the CLI act on one of them only, so both paths are named.
    from context_engine.facts.copies import find_copies

    copy_notes: dict[str, str] = {}
    for copies in find_copies(facts):
        for path in copies.paths:
            copy_notes.setdefault(str(path), f"Conflict: {copies.message}.")
    rows = []
    for fact, keys, eq in zip(facts, dup_keys, eq_keys, strict=True):
        notes = []
        copy_note = copy_notes.get(str(fact.path)) if copy_notes else None
        conflict = copy_note is not None
        if copy_note:
            notes.append(copy_note)
        hidden = overridden_by.get(fact.reference)
        if hidden is not None:
            winner, why = hidden
            notes.append(
                f"Overridden: the project fact {winner.reference} has {why}, so it wins over "
                f"this global fact in recall and in the session prefix."
            )
        if overrides.get(fact.reference):
            notes.append(
                "Overrides " + ", ".join(overrides[fact.reference]) + ": project facts win "
                "over equivalent global facts."
            )
        paired = {fact.reference}
        if hidden is not None:
            paired.add(hidden[0].reference)
        paired.update(r.split(" ", 1)[0] for r in overrides.get(fact.reference, ()))
        for key in keys:
            group = groups.get(key, ())
            if len(group) < 2:
                continue
            # Name at most three twins: a large group must not make this quadratic.
            twins: list[str] = []
            for other in group:
                if other.reference not in paired:
                    twins.append(other.reference)
                    if len(twins) == 3:
                        break
            if twins:
                refs = group_refs.get(key)
                if refs is None:
                    refs = group_refs[key] = {f.reference for f in group}
                more = len(refs) - len(paired & refs) - len(twins)
                extra = f" and {more} more" if more > 0 else ""
                what = "title" if key.startswith("title:") else "description"
                notes.append(
                    f"Possible duplicate of {', '.join(twins)}{extra}: the same {what}. "
                    "Automatic writes treat this as an existing memory and ask first."
                )
                paired.update(twins)  # one sentence per twin, even when both keys match
        haystack = texts.get(id(fact)) if texts else None
        if haystack is None:
            haystack = search_text(
                fact, fact.body if bodies is None else bodies.get(id(fact), fact.body))
        rows.append(
            FactRow(
                fact=fact,
                freshness=freshness(fact, now),
                note=" ".join(notes),
                overridden=hidden is not None,
                haystack=haystack,
                conflict=conflict,
                keys=(*eq, *keys, f"ref:{fact.scope}/{fact.name}"),
                lazy=lazy,
            )
        )
    return tuple(rows)


def _duplicate_keys(fact: Fact) -> tuple[str, ...]:
    """``title:<key>`` and ``desc:<key>`` (lowercase letters and digits), when not empty."""
    keys = []
    title = normalize_key(fact.title)
    if title:
        keys.append(f"title:{title}")
    desc = normalize_key(fact.description)
    if desc:
        keys.append(f"desc:{desc}")
    return tuple(keys)


@dataclass(frozen=True, slots=True)
class FactFilter:
    """The Facts tab's search box, three filters and the sort column."""

    text: str = ""
    type: str = ""
    scope: str = ""
    freshness: str = ""
    sort_column: int = 0
    descending: bool = False


def filter_rows(
    rows: Sequence[FactRow], criteria: FactFilter, sort_keys: Sequence[SortKey] = (),
    narrowing: bool = False,
) -> tuple[FactRow, ...]:
    """Rows matching ``criteria`` (every word of the text, AND), in the given order.

    Pure Python for the read pool. Sorting is separate (:func:`sort_for`) so a keystroke only
    filters an already sorted snapshot: order is kept, nothing is re-sorted per key press.
    A column table's rows filter (and search) through their columns and the derived index.
    """
    columns = getattr(rows, "filtered", None)
    if callable(columns):
        found: Any = columns(criteria, narrowing)
        return sort_for(found, criteria, sort_keys) if sort_keys else found
    out: Iterable[FactRow] = rows
    if criteria.type:
        out = [r for r in out if r.fact.type == criteria.type]
    if criteria.scope:
        out = [r for r in out if r.fact.scope == criteria.scope]
    if criteria.freshness:
        out = [r for r in out if r.freshness == criteria.freshness]
    for word in criteria.text.lower().split():
        out = [r for r in out if word in r.haystack]
    result = tuple(out)
    if sort_keys:
        result = sort_for(result, criteria, sort_keys)
    return result


def sort_for(
    rows: Sequence[FactRow], criteria: FactFilter, sort_keys: Sequence[SortKey]
) -> tuple[FactRow, ...]:
    """``rows`` sorted by the criteria's column (stable, pure Python)."""
    if not 0 <= criteria.sort_column < len(sort_keys):
        return rows if hasattr(rows, "table") else tuple(rows)  # type: ignore[return-value]  # reason: a column table's Rows stand for the tuple
    columns = getattr(rows, "sorted_by", None)
    if callable(columns):
        found: Any = columns(criteria.sort_column, criteria.descending)
        return found  # type: ignore[no-any-return]  # reason: duck-typed Rows.sorted_by
    key = sort_keys[criteria.sort_column]
    return tuple(sorted(rows, key=key, reverse=criteria.descending))


Counts = list[tuple[str, dict[str, int]]]
_COUNTED = {"type": _TYPE, "scope": _SCOPE, "freshness": _FRESHNESS}


def adjusted_counts(counts: Counts, removed: Iterable[FactRow], added: Iterable[FactRow]) -> Counts:
    """``counts`` of some rows, less ``removed`` and plus ``added`` (a patch: no full pass)."""
    out = [(name, dict(values)) for name, values in counts]
    gone, came = tuple(removed), tuple(added)
    for name, values in out:
        get = _COUNTED[name]
        for rows, step in ((gone, -1), (came, 1)):
            for row in rows:
                key = get(row)
                if key in values:  # the chart counts known values only, as counts() does
                    values[key] += step
    return out


def unfiltered(criteria: FactFilter) -> bool:
    """Whether ``criteria`` shows every row (a sort only)."""
    return not (criteria.text.split() or criteria.type or criteria.scope or criteria.freshness)


def counts_of(rows: Sequence[FactRow]) -> list[tuple[str, dict[str, int]]]:
    """Spread over type, scope and freshness of exactly ``rows`` (the shown ones)."""
    return FactsSnapshot(rows if hasattr(rows, "counts") else tuple(rows), ()).counts()
