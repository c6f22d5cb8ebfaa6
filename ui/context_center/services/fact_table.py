"""The Facts table as columns: rows are numbers into per-field lists, a ``FactRow`` is made
only for a row someone looks at (a cell's row, the selection, the detail pane).

Built from ``context_engine.facts.table_columns.FactColumns`` (the derived index's rows, no
``Fact`` per row). Notes (overrides, possible duplicates, copies) are the words of
``fact_rows.build_rows``, computed over columns; filters, sorting and counts work on row
numbers; the search words are looked up in the derived index (``search`` of :class:`Table`),
never in a lowercased text per row held here. Pure Python, for the read pool.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import countOf, indexOf
from pathlib import Path
from typing import Any, overload

from context_engine.facts.copies import Copies
from context_engine.facts.freshness import freshness_of
from context_engine.facts.model import Fact, FileStamp, normalize_key
from context_engine.facts.table_columns import (
    FactColumns,
    search_text,
    stamp_identity,
    unpacked,
)

from .fact_rows import KEY_WORDS, FactFilter, FactRow

# Search words, file names to look at, whether the caller still wants the answer → the file
# names per store (``None`` for a store without a usable index).
Search = Callable[[Sequence[str], "Sequence[set[str] | None] | None", "Callable[[], bool] | None"],
                  "list[set[str] | None]"]
_SHARED = {s: s for s in ("project", "global", "user", "feedback", "reference", "fresh",
                          "current", "stale")}
_TYPES = ("user", "feedback", "project", "reference")


def normalized(values: Sequence[str]) -> list[str]:
    """``normalize_key`` of each value: one lowercasing of the joined text, then the letters
    and digits of each (``filter(str.isalnum)``, C-level; about twice the regex's speed).

    Exactly ``[normalize_key(v) for v in values]`` (tested): ``str.lower`` of the joined text
    is that of each value, since NUL is not cased (the final-sigma rule sees the same
    neighbours), and ``normalize_key``'s class is the complement of ``isalnum``.
    """
    if not values:
        return []
    joined = "\x00".join(values)
    if joined.count("\x00") != len(values) - 1:
        return [normalize_key(v) for v in values]
    alnum = str.isalnum
    return ["".join(filter(alnum, v)) for v in joined.lower().split("\x00")]


def name_keys(names: Sequence[str]) -> list[str]:
    """``equivalence.name_key`` of each name (the name itself when already a slug).

    The names that are not ASCII slugs are slugged together: one lowercasing and one regex
    pass over their joined text instead of a call per name (~10 µs each); any name where that
    could differ (a sigma, a character lowering to several, an empty or long slug) is slugged
    alone.
    """
    from context_engine.facts.equivalence import _ASCII_SLUG, name_key
    from context_engine.paths import NAME_SLUG_MAX_BYTES

    out = list(names)
    plain = _ASCII_SLUG.fullmatch
    todo = [i for i, n in enumerate(out) if not (n.isascii() and plain(n))]
    if not todo:
        return out
    joined = "\x00".join(map(out.__getitem__, todo))
    lowered = joined.lower()
    if joined.count("\x00") != len(todo) - 1 or len(lowered) != len(joined) or \
            "\u03a3" in joined:
        for i in todo:
            out[i] = name_key(out[i])
        return out
    for i, slug in zip(todo, _SLUG_RUNS.sub("-", lowered).split("\x00"), strict=True):
        slug = slug.strip("-")
        if not slug or len(slug.encode("utf-8")) > NAME_SLUG_MAX_BYTES:
            slug = name_key(out[i])
        out[i] = slug
    return out


_SLUG_RUNS = re.compile(r"(?:[^\w\x00]|_)+")  # ``paths._NON_ALNUM``, the separator kept


@dataclass(slots=True)
class Table:
    """Columns plus what the table shows of each row (freshness, notes), and the live rows.

    Never changed once published: a patch makes a new ``Table`` (its lists copied, the
    strings shared), so the GUI thread can keep reading the old one.
    """

    cols: FactColumns
    fresh: list[str]
    tkey: list[str]  # normalize_key(title)
    dkey: list[str]  # normalize_key(description)
    nkey: list[str]  # name_key(name)
    notes: dict[int, str]
    overridden: set[int]
    conflict: set[int]
    alive: bytearray  # 1 for a row still shown; a patch appends rows and kills old ones
    search: Search | None = None
    keys: KeyRows | None = None  # built for the first patch, then kept by every patched table

    # -- one row -------------------------------------------------------------------------------

    def path(self, i: int) -> Path:
        """The fact file of row ``i``."""
        root = self.cols.roots[self.cols.store[i]]
        make = getattr(root, "_make_child_relpath", None)  # pathlib's fast child (no parse)
        return make(self.cols.file[i]) if make is not None else root / self.cols.file[i]

    def reference(self, i: int) -> str:
        """``scope/name.md`` of row ``i``."""
        return f"{self.cols.scope[i]}/{self.cols.name[i]}.md"

    def fact(self, i: int) -> Fact:
        """Row ``i`` as a body-less ``Fact`` (made now, not kept)."""
        c = self.cols
        ident = c.ident[i]
        file_stamp = FileStamp(*unpacked(ident)[:4]) if ident else None
        return Fact(
            c.id[i], c.revision[i], c.name[i], c.title[i], c.description[i],
            c.type[i], c.scope[i], "", _when(c.created[i]),  # type: ignore[arg-type]  # reason: checked strs
            _when(c.updated[i]), self.path(i), file_stamp,
        )

    def row(self, i: int) -> FactRow:
        """Row ``i`` as the ``FactRow`` the tab's columns and panes read."""
        return FactRow(self.fact(i), self.fresh[i], self.notes.get(i, ""),
                       i in self.overridden, self.cols.texts.get(i, ""), i in self.conflict,
                       (), True, number=i)

    def updated_text(self, i: int) -> str:
        """``updated_at`` (else ``created_at``) as ``YYYY-MM-DD HH:MM``."""
        stamp = _when(self.cols.updated[i] or self.cols.created[i])
        return stamp.strftime("%Y-%m-%d %H:%M") if stamp else ""

    def live(self) -> array[int]:
        """Every live row number, in table order."""
        alive = self.alive
        if alive.count(0) == 0:
            return array("i", range(len(alive)))
        from itertools import compress

        return array("i", compress(range(len(alive)), alive))

    def find(self, scope: str, fact_id: str, among: Sequence[int]) -> int:
        """Position in ``among`` of the first row with (scope, id), else -1 (C-level scans)."""
        ids, scopes = self.cols.id, self.cols.scope
        start = 0
        getter = ids.__getitem__
        while True:
            try:
                at = start + indexOf(map(getter, _tail(among, start)), fact_id)
            except ValueError:
                return -1
            if scopes[among[at]] == scope:
                return at
            start = at + 1

    def with_search(self, search: Search | None) -> Table:
        """This table looking search words up with ``search``."""
        self.search = search
        return self


def _stamp_of(ident: bytes | tuple[int, ...]) -> tuple[int, ...]:
    return unpacked(ident)[:4] if ident else ()


def _tail(values: Sequence[int], start: int) -> Sequence[int]:
    return values if start == 0 else values[start:]


def _when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def build_table(cols: FactColumns, now: datetime | None = None,
                search: Search | None = None, notes: bool = True) -> Table:
    """The table of ``cols``: freshness and every row's notes, as ``build_rows`` words them.

    ``notes=False``: no notes and no keys yet (rows shown at once, before the files are
    checked; :func:`with_notes` completes a table of the checked columns).
    """
    from context_engine.facts.store import gc_paused

    with gc_paused():
        for column in (cols.type, cols.scope):
            column[:] = [_SHARED.get(v, v) for v in column]
        n = len(cols)
        moment = now or datetime.now(UTC)
        fresh = _freshness(cols, range(n), moment)
        unkeyed = [""] * n  # an empty key is no key: no row shares it
        table = Table(cols, fresh, unkeyed, unkeyed, unkeyed, {}, set(), set(),
                      bytearray(b"\x01") * n, search)
    return with_notes(table, cols) if notes else table


def with_notes(table: Table, cols: FactColumns) -> Table:
    """``table`` (built without notes) for ``cols`` — the very rows, checked against their
    files — with every row's keys and notes: a new table sharing its lists."""
    from context_engine.facts.store import gc_paused

    with gc_paused():
        n = len(cols)
        new = Table(cols, table.fresh, normalized(cols.title), normalized(cols.description),
                    name_keys(cols.name), {}, set(), set(), bytearray(b"\x01") * n,
                    table.search)
        new.notes, new.overridden, new.conflict = _notes(new, range(n))
    return new


def _freshness(cols: FactColumns, rows: Iterable[int], moment: datetime) -> list[str]:
    """``freshness_of`` each row's type and stamp at ``moment``.

    A UTC stamp to the second (``YYYY-MM-DDTHH:MM:SS+00:00``, what the codec writes) is
    compared as text with the window edges of its type; a stamp within the edges' second,
    or of any other form, is parsed and asked of ``freshness_of`` itself.
    """
    from context_engine.facts.freshness import WINDOWS

    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC)
    now_s = utc.strftime("%Y-%m-%dT%H:%M:%S")
    edges = {kind: ((utc - fresh).strftime("%Y-%m-%dT%H:%M:%S"),
                    (utc - current).strftime("%Y-%m-%dT%H:%M:%S"))
             for kind, (fresh, current) in WINDOWS.items()}
    default = edges["project"]
    zero = "1971-01-01T00:00:00"
    out = []
    types, updated, created = cols.type, cols.updated, cols.created
    for i in rows:
        stamp = updated[i] or created[i]
        kind = types[i]
        if stamp is not None and len(stamp) == 25 and stamp.endswith("+00:00"):
            second = stamp[:19]
            fresh_edge, current_edge = edges.get(kind, default)
            if zero < second < now_s and second not in (fresh_edge, current_edge):
                out.append("fresh" if second > fresh_edge else
                           "current" if second > current_edge else "stale")
                continue
            if second > now_s:  # a later second than now: the future is "current"
                out.append("current")
                continue
        value = freshness_of(kind, _when(stamp), moment)
        out.append(_SHARED.get(value, value))
    return out


def _notes(table: Table, rows: Iterable[int]) -> tuple[dict[int, str], set[int], set[int]]:
    """Notes of ``rows`` among themselves: ``fact_rows._build_rows``' rules, over columns.

    Counted first (C-level ``Counter``s): only rows in a copy, an override or a group of
    possible duplicates get words; at 100,000 facts that is a handful.
    """
    c = table.cols
    full = isinstance(rows, range) and rows == range(len(c.id))  # every row, in row order
    rows = list(rows)

    def take(values: list[Any]) -> list[Any]:
        return values if full else list(map(values.__getitem__, rows))

    ids, names, scopes = take(c.id), take(c.name), take(c.scope)
    tkey, dkey, nkey = take(table.tkey), take(table.dkey), take(table.nkey)
    stripped = [v.strip() for v in ids]
    ref = table.reference
    # k: a position in ``rows``; rows[k]: the row number.
    proj = [k for k, s in enumerate(scopes) if s == "project"]
    glob = [k for k, s in enumerate(scopes) if s == "global"]
    first: list[dict[str, int]] = [{}, {}, {}]  # id, name, title → first project position
    for values, held in zip((stripped, nkey, tkey), first, strict=True):
        for k in reversed(proj):
            if values[k]:
                held[values[k]] = k
    overridden_by: dict[int, tuple[int, str]] = {}
    overrides: dict[int, list[str]] = defaultdict(list)
    if proj:
        for k in glob:
            for kind, values, held in zip(("id", "name", "title"), (stripped, nkey, tkey),
                                          first, strict=True):
                winner = held.get(values[k]) if values[k] else None
                if winner is not None:
                    why = KEY_WORDS[kind]
                    overridden_by[k] = (winner, why)
                    overrides[winner].append(f"{ref(rows[k])} ({why})")
                    break
    id_count = Counter(ids)
    name_count = Counter(zip(scopes, names, strict=True))
    t_count = Counter(tkey)
    d_count = Counter(dkey)
    copied = [k for k in range(len(rows)) if id_count[ids[k]] > 1
              or name_count[(scopes[k], names[k])] > 1]
    copy_notes: dict[int, str] = {}
    if copied:
        by_id: dict[str, list[int]] = defaultdict(list)
        by_name: dict[tuple[str, str], list[int]] = defaultdict(list)
        for k in copied:
            if id_count[ids[k]] > 1:
                by_id[ids[k]].append(k)
            if name_count[(scopes[k], names[k])] > 1:
                by_name[(scopes[k], names[k])].append(k)
        for what, sharing in [*((f"id {key}", v) for key, v in by_id.items()),
                              *((f"name {s}/{n}.md", v) for (s, n), v in by_name.items())]:
            copies = Copies(what, tuple(table.path(rows[k]) for k in sharing))
            for k in sharing:
                copy_notes.setdefault(k, f"Conflict: {copies.message}.")
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k in range(len(rows)):
        if tkey[k] and t_count[tkey[k]] > 1:
            groups[("title", tkey[k])].append(k)
        if dkey[k] and d_count[dkey[k]] > 1:
            groups[("desc", dkey[k])].append(k)
    noted = sorted({*copy_notes, *overridden_by, *overrides,
                    *(k for group in groups.values() for k in group)})
    notes: dict[int, str] = {}
    group_refs: dict[tuple[str, str], set[str]] = {}
    for k in noted:
        parts = []
        if k in copy_notes:
            parts.append(copy_notes[k])
        hidden = overridden_by.get(k)
        if hidden is not None:
            winner, why = hidden
            parts.append(
                f"Overridden: the project fact {ref(rows[winner])} has {why}, so it wins over "
                f"this global fact in recall and in the session prefix."
            )
        if overrides.get(k):
            parts.append(
                "Overrides " + ", ".join(overrides[k]) + ": project facts win "
                "over equivalent global facts."
            )
        dups = [key for key in (("title", tkey[k]), ("desc", dkey[k])) if key in groups]
        if dups:
            paired = {ref(rows[k])}
            if hidden is not None:
                paired.add(ref(rows[hidden[0]]))
            paired.update(r.split(" ", 1)[0] for r in overrides.get(k, ()))
            for key in dups:
                group = groups[key]
                twins: list[str] = []
                for other in group:
                    other_ref = ref(rows[other])
                    if other_ref not in paired:
                        twins.append(other_ref)
                        if len(twins) == 3:
                            break
                if twins:
                    refs = group_refs.get(key)
                    if refs is None:
                        refs = group_refs[key] = {ref(rows[o]) for o in group}
                    more = len(refs) - len(paired & refs) - len(twins)
                    extra = f" and {more} more" if more > 0 else ""
                    what = "title" if key[0] == "title" else "description"
                    parts.append(
                        f"Possible duplicate of {', '.join(twins)}{extra}: the same {what}. "
                        "Automatic writes treat this as an existing memory and ask first."
                    )
                    paired.update(twins)
        if parts:
            notes[rows[k]] = " ".join(parts)
    return notes, {rows[k] for k in overridden_by}, {rows[k] for k in copy_notes}


# -- rows in an order (what the model shows) ---------------------------------------------------


class Rows(Sequence[FactRow]):
    """Some live rows of a :class:`Table` in an order: a sequence of ``FactRow`` made on
    demand. Comparing or counting goes through the columns, never through made rows."""

    __slots__ = ("order", "table")
    on_demand = True  # a model keeps it as it is (``RowTableModel.set_rows``)

    def __init__(self, table: Table, order: array[int] | None = None) -> None:
        self.table = table
        self.order: array[int] = table.live() if order is None else order

    def __len__(self) -> int:
        return len(self.order)

    @overload
    def __getitem__(self, index: int) -> FactRow: ...
    @overload
    def __getitem__(self, index: slice) -> Rows: ...
    def __getitem__(self, index: int | slice) -> FactRow | Rows:
        if isinstance(index, slice):
            return Rows(self.table, self.order[index])
        return self.table.row(self.order[index])

    def __iter__(self) -> Iterator[FactRow]:
        row = self.table.row
        return (row(i) for i in self.order)

    def __bool__(self) -> bool:
        return len(self.order) > 0

    def find(self, key: object) -> int:
        """Position of the row with ``key`` (scope, id), else -1."""
        if not isinstance(key, tuple) or len(key) != 2:
            return -1
        return self.table.find(key[0], key[1], self.order)

    def positions(self) -> dict[tuple[str, str], int]:
        """(scope, id) → position of its first row: for many look-ups of one set of rows."""
        c = self.table.cols
        order = self.order
        back = order[::-1]  # the first row holding a key wins
        keys = zip(map(c.scope.__getitem__, back), map(c.id.__getitem__, back), strict=True)
        return dict(zip(keys, range(len(order) - 1, -1, -1), strict=True))

    def first_with(self, text: str) -> int:
        """Position of the first row whose reference or name is ``text``, else -1."""
        names = self.table.cols.name
        for at, i in enumerate(self.order):
            if names[i] == text or self.table.reference(i) == text:
                return at
        return -1

    def revision_of(self, fact_id: str) -> int | None:
        """The revision of the first row with ``fact_id`` (any scope), else ``None``."""
        ids = self.table.cols.id
        for i in self.order:
            if ids[i] == fact_id:
                return self.table.cols.revision[i]
        return None

    def counts(self) -> list[tuple[str, dict[str, int]]]:
        """Spread over type, scope and freshness, for the chart."""
        c = self.table.cols
        order = self.order
        every = len(order) == len(c.id)
        types = Counter(c.type if every else map(c.type.__getitem__, order))
        scopes = Counter(c.scope if every else map(c.scope.__getitem__, order))
        fresh = Counter(self.table.fresh if every else map(self.table.fresh.__getitem__, order))
        return [
            ("type", {k: types.get(k, 0) for k in _TYPES}),
            ("scope", {k: scopes.get(k, 0) for k in ("project", "global")}),
            ("freshness", {k: fresh.get(k, 0) for k in ("fresh", "current", "stale")}),
        ]

    def project(self) -> int:
        """How many shown rows are of the project store."""
        scope = self.table.cols.scope
        if len(self.order) == len(scope):
            return countOf(scope, "project")
        return countOf(map(scope.__getitem__, self.order), "project")

    def signature(self) -> tuple[object, ...]:
        """(scope, id, revision, name, stamp) of every row, as ``FactsSnapshot.signature``."""
        c = self.table.cols
        return tuple((c.scope[i], c.id[i], c.revision[i], c.name[i], _stamp_of(c.ident[i]))
                     for i in self.order)

    # -- sorting and filtering -----------------------------------------------------------------

    def sorted_by(self, column: int, descending: bool) -> Rows:
        """These rows sorted by the Facts tab's ``column`` (stable, as ``sort_for``)."""
        keys = sort_values(self.table, column)
        if keys is None:
            return self
        order = sorted(self.order, key=keys.__getitem__, reverse=descending)
        return Rows(self.table, array("i", order))

    def filtered(self, criteria: FactFilter, narrowing: bool = False,
                 cancelled: Callable[[], bool] | None = None) -> Rows:
        """The rows matching ``criteria``, in this order (every word of the text, AND): the
        final result, bodies searched in the derived index (aborted when ``cancelled``)."""
        return self._filtered(criteria, narrowing, True, cancelled)

    def filtered_fields(self, criteria: FactFilter, narrowing: bool = False) -> Rows:
        """The first phase of :meth:`filtered`: words matched in the fields held here (name,
        title, description, type, scope; the whole text of rows not in the index) — no query,
        a subset of the final result in the same order."""
        return self._filtered(criteria, narrowing, False, None)

    def needs_bodies(self, criteria: FactFilter) -> bool:
        """Whether :meth:`filtered` can find more than :meth:`filtered_fields` (a body search)."""
        return bool(criteria.text.split()) and self.table.search is not None

    def _filtered(self, criteria: FactFilter, narrowing: bool, bodies: bool,
                  cancelled: Callable[[], bool] | None) -> Rows:
        t = self.table
        order: Iterable[int] = self.order
        if criteria.type:
            types, want = t.cols.type, criteria.type
            order = [i for i in order if types[i] == want]
        if criteria.scope:
            scopes, want = t.cols.scope, criteria.scope
            order = [i for i in order if scopes[i] == want]
        if criteria.freshness:
            fresh, want = t.fresh, criteria.freshness
            order = [i for i in order if fresh[i] == want]
        words = criteria.text.lower().split()
        if words:
            order = list(order)
            if bodies:
                matched = self._matching(words, order if narrowing else None, cancelled)
                order = [i for i in order if i in matched]
            else:
                order = self._matching_fields(words, order)
        return Rows(t, order if isinstance(order, array) else array("i", order))

    def _matching_fields(self, words: list[str], among: list[int]) -> list[int]:
        """Rows of ``among`` whose own fields (or whole held text) hold every word."""
        c = self.table.cols
        texts = c.texts
        name, title, desc, kind, scope = c.name, c.title, c.description, c.type, c.scope
        out = []
        for i in among:
            text = texts.get(i)
            if text is None:
                text = "\n".join((name[i], title[i], desc[i], kind[i], scope[i])).lower()
            if all(w in text for w in words):
                out.append(i)
        return out

    def _matching(self, words: list[str], among: list[int] | None,
                  cancelled: Callable[[], bool] | None = None) -> set[int]:
        """Row numbers (of ``among``, else of every row) whose text holds every word."""
        t = self.table
        c = t.cols
        texts = c.texts
        candidates = among if among is not None else t.live()
        by_store: list[set[str] | None] = [set() for _ in c.roots]
        if among is not None and len(among) <= NARROW_BY_NAME:
            for i in among:
                if i not in texts:
                    held = by_store[c.store[i]]
                    if held is not None:
                        held.add(c.file[i])
            names: Sequence[set[str] | None] | None = by_store
        else:
            names = None
        found = t.search(words, names, cancelled) if t.search is not None \
            else [None] * len(c.roots)
        matched: set[int] = set()
        files, stores = c.file, c.store
        for i in candidates:
            text = texts.get(i)
            if text is not None:
                if all(w in text for w in words):
                    matched.add(i)
                continue
            hits = found[stores[i]]
            if hits is None:  # no usable index for this store: the row's own fields only
                own = search_text(c.name[i], c.title[i], c.description[i], "", c.type[i],
                                  c.scope[i])
                if all(w in own for w in words):
                    matched.add(i)
            elif files[i] in hits:
                matched.add(i)
        return matched


def same_rows(shown: Rows, cols: FactColumns, diagnostics: tuple[object, ...],
              now: datetime | None = None) -> bool:
    """Whether ``shown`` (every live row of its table) is exactly what ``cols`` lists: the
    very values (a relisting reused them all), in the same order, with the same
    diagnostics and freshness. Then a new table would show the same rows."""
    from operator import is_

    old = shown.table
    order = shown.order
    if cols.reused != len(cols) or len(order) != len(cols) or cols.texts or \
            tuple(cols.diagnostics) != diagnostics or len(order) != old.alive.count(1):
        return False
    for mine, theirs in ((cols.id, old.cols.id), (cols.name, old.cols.name),
                         (cols.revision, old.cols.revision), (cols.ident, old.cols.ident)):
        if not all(map(is_, mine, map(theirs.__getitem__, order))):
            return False
    fresh = _freshness(cols, range(len(cols)), now or datetime.now(UTC))
    return fresh == list(map(old.fresh.__getitem__, order))


NARROW_BY_NAME = 5_000  # a narrowing search looks these few files up by name, not a scan


def sort_values(table: Table, column: int) -> Sequence[Any] | None:
    """Per row number, the Facts tab's sort value for ``column`` (as ``SORT_KEYS``)."""
    c = table.cols
    if column == 0:
        return c.name
    if column == 1:
        return [(t or n.replace("-", " ")).lower() for t, n in zip(c.title, c.name, strict=True)]
    if column == 2:
        return c.type
    if column == 3:
        return [s + (" (conflict)" if i in table.conflict else
                     " (overridden)" if i in table.overridden else "")
                for i, s in enumerate(c.scope)]
    if column == 4:
        return table.fresh
    if column == 5:
        return c.revision
    if column == 6:  # the shown text is the ISO stamp's first 16 characters, "T" a space
        return [(u or k or "")[:16] for u, k in zip(c.updated, c.created, strict=True)]
    return None


# -- patches ------------------------------------------------------------------------------------


@dataclass(slots=True)
class TablePatch:
    """A patched table, the row numbers that left and came, and whether anything changed."""

    table: Table
    removed: tuple[int, ...] = ()
    added: tuple[int, ...] = ()
    changed: bool = True


class KeyRows:
    """Rows by file name and by id, name, title and description key, for patches.

    Built once (~0.2 s, one pass per column; the keys are the columns' own strings) and then
    shared by every table a patch makes from this one: rows a patch appends are added, dead
    ones are filtered out by the asking table's ``alive``. Only patches (serialised, on the
    read pool) read or change it.
    """

    def __init__(self, table: Table) -> None:
        c = table.cols
        self._maps: list[dict[str, int | list[int]]] = []
        for values in self._columns(table):
            found: dict[str, int | list[int]] = {}
            for i, value in enumerate(values):
                held = found.setdefault(value, i)
                if held != i:
                    if isinstance(held, int):
                        found[value] = [held, i]
                    else:
                        held.append(i)
            self._maps.append(found)
        self._size = len(c.id)

    @staticmethod
    def _columns(table: Table) -> tuple[list[str], ...]:
        c = table.cols
        return (c.file, c.id, table.nkey, table.tkey, table.dkey)

    def add(self, table: Table, row: int) -> None:
        """Index an appended row of ``table``."""
        for found, values in zip(self._maps, self._columns(table), strict=True):
            value = values[row]
            held = found.setdefault(value, row)
            if held != row:
                if isinstance(held, int):
                    found[value] = [held, row]
                else:
                    held.append(row)

    def holders(self, column: int, value: str, alive: bytearray) -> list[int]:
        """Live rows (by ``alive``) whose column ``column`` (file, id, name, title,
        description key) is ``value``."""
        held = self._maps[column].get(value)
        if held is None:
            return []
        rows = [held] if isinstance(held, int) else held
        size = len(alive)
        return [i for i in rows if i < size and alive[i]]


def patch_table(table: Table, changed: dict[str, Fact | None],
                now: datetime | None = None) -> TablePatch:
    """``table`` with the facts now at the ``changed`` paths (``None``: gone) applied.

    Rows whose notes could change — sharing an id, name, title or description key with an old
    or new fact — are rebuilt together with every row sharing a key with them (the rule of
    ``fact_delta.patch``), which gives exactly the notes of a full rebuild.
    """
    c = table.cols
    keys = table.keys if table.keys is not None else KeyRows(table)
    table.keys = keys
    where = {str(table.path(i)): i for i in _rows_at(table, changed, keys)}
    live = table.alive

    def same(i: int, fact: Fact | None) -> bool:
        if fact is None:
            return False
        st = fact.stamp
        stamp = (st.device, st.inode, st.size, st.mtime_ns) if st is not None else ()
        return (c.scope[i], c.id[i], c.revision[i], c.name[i], _stamp_of(c.ident[i])) == (
            fact.scope, fact.id, fact.revision, fact.name, stamp)

    if all(p in where and same(where[p], f) for p, f in changed.items()):
        return TablePatch(table, changed=False)
    # A new table: lists copied (pointers only), strings shared.
    roots = {root: n for n, root in enumerate(c.roots)}
    cols = FactColumns(
        c.roots, c.scopes, bytearray(c.store), list(c.file), list(c.id), list(c.revision),
        list(c.name), list(c.title), list(c.description), list(c.type), list(c.scope),
        list(c.created), list(c.updated), list(c.ident), dict(c.texts), c.diagnostics,
    )
    new = Table(cols, list(table.fresh), list(table.tkey), list(table.dkey), list(table.nkey),
                dict(table.notes), set(table.overridden), set(table.conflict),
                bytearray(live), table.search, keys)
    removed = []
    for path in changed:
        i = where.get(path)
        if i is not None:
            new.alive[i] = 0
            removed.append(i)
    added = []
    for path, fact in changed.items():
        if fact is None:
            continue
        store = roots.get(Path(path).parent)
        if store is None:
            continue
        st = fact.stamp
        i = cols.append_fact(store, fact, fact.body, stamp_identity(
            st.device, st.inode, st.size, st.mtime_ns) if st is not None else b"")
        cols.type[i] = _SHARED.get(cols.type[i], cols.type[i])
        cols.scope[i] = _SHARED.get(cols.scope[i], cols.scope[i])
        new.alive.append(1)
        new.tkey.append(normalize_key(fact.title))
        new.dkey.append(normalize_key(fact.description))
        new.nkey.extend(name_keys([fact.name]))
        new.fresh.extend(_freshness(cols, [i], now or datetime.now(UTC)))
        keys.add(new, i)
        added.append(i)
    # Rows whose notes may change (they share a key with a removed or added row); their notes
    # are made among every row sharing a key with one of them, as a full rebuild sees them.
    affected = _related(new, [*removed, *added], keys) | set(added)
    context = _related(new, affected, keys) | affected
    # In listing order (name, scope, id), as a full listing sees them: twins and winners are
    # named in that order.
    notes, overridden, conflict = _notes(new, sorted(
        context, key=lambda i: (cols.name[i], cols.scope[i], cols.id[i])))
    for i in (*affected, *removed):
        new.notes.pop(i, None)
        new.overridden.discard(i)
        new.conflict.discard(i)
    for i in affected:
        if i in notes:
            new.notes[i] = notes[i]
        if i in overridden:
            new.overridden.add(i)
        if i in conflict:
            new.conflict.add(i)
    changed_rows = sorted(affected - set(added))
    # An unchanged row whose notes were rebuilt is shown again: it leaves and comes back.
    return TablePatch(new, (*removed, *changed_rows), (*changed_rows, *added))


def _rows_at(table: Table, changed: dict[str, Fact | None], keys: KeyRows) -> list[int]:
    """Live rows whose file is one of the changed paths."""
    out = []
    for path in changed:
        for i in keys.holders(0, Path(path).name, table.alive):
            if str(table.path(i)) == path:
                out.append(i)
    return out


def _related(table: Table, rows: Iterable[int], keys: KeyRows) -> set[int]:
    """Every live row sharing an id, name, title or description key with ``rows`` (one name
    has one name key, so rows of one (scope, name) are among them)."""
    c = table.cols
    out: set[int] = set()
    alive = table.alive
    for i in rows:
        for column, values in ((1, c.id), (2, table.nkey), (3, table.tkey), (4, table.dkey)):
            value = values[i]
            if value:
                out.update(keys.holders(column, value, alive))
    return out


def merge_rows(shown: Rows, table: Table, patch: TablePatch, column: int,
               descending: bool) -> Rows:
    """``shown`` (sorted by ``column``) with the patch's rows taken out and put in place."""
    import bisect
    from itertools import filterfalse

    gone = set(patch.removed)
    order = list(filterfalse(gone.__contains__, shown.order))  # C-level
    keys = sort_values(table, column)
    if keys is None:
        return Rows(table, array("i", [*order, *patch.added]))
    if descending:
        order.reverse()
    for i in patch.added:
        if table.alive[i]:
            bisect.insort_right(order, i, key=keys.__getitem__)
    if descending:
        order.reverse()
    return Rows(table, array("i", order))
