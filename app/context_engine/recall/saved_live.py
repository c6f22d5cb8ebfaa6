"""A watched host on a saved recall state: the files the kernel names applied to that state.

A host opened on a settled saved state answers quiet turns from it (``recall/quiet.py``) and
never reads every fact. ``recall/live.py`` needs every entry loaded before it can apply one
change, so a host's first change used to read both stores in full (~23 s and 1.5 GB RSS at
100,000 facts). Here the named files are applied to the state-backed view instead, the way
``recall/delta.py`` brings a saved state up for a cold process: each file's old fact (its saved
record) out of the lazily opened index and its new one in (``Recaller.remove``/``upsert``),
the masks re-decided only for globals sharing an S7.2 key with an old or new version, the
session marks as an overlay on the saved ones with a digest that follows them. Nothing is
written to the state: the next cold process brings it up from its own listing.

A duplicate id or reference, an archived path or too many files: ``None``, and the caller
reads the stores in full as before (``LiveStores.rebase``).
"""

from __future__ import annotations

import bisect
import marshal
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..facts.model import Diagnostic, Fact, Scope
from .engine import _is_archived, _same
from .quiet import QuietFacts, holder_mark, moved_digest

if TYPE_CHECKING:
    from ..paths import EnginePaths
    from ..session.notes import FactMark

SCOPES: tuple[Scope, Scope] = ("project", "global")
MAX_CHANGED = 256  # above this many named files at once, the full read is the simpler path
_LOG = 256  # generations a notes baseline may lag behind and still compare changed ids only
_Mark = tuple[str, int, str]
_NO_ENTRY = object()  # a file whose reference is ``<scope>/<name>``, or gone: not in ``_odd``


class SavedHostFacts(QuietFacts):
    """One generation of a host's saved-state view: marks, masks and facts with the files
    the kernel named since applied (the saved rows plus ``SavedLive``'s overlay)."""

    def __init__(self, live: SavedLive, generation: int) -> None:
        base = live.base
        meta = {**base._meta, "count": live.count, "marks_digest": live.digest_now,
                "masked": sorted(live.masked)}
        super().__init__(base.reader, base.recaller, meta, base._listing, base._materialize)
        self._live = live
        self.generation = generation
        self._frozen_masked = frozenset(live.masked)

    def marks(self) -> Mapping[str, FactMark]:
        """id → (id, revision, reference) of every fact now (the saved marks, overlaid)."""
        if self._marks is None:
            self._marks = self._live.all_marks()
        return self._marks

    def mark(self, fact_id: str) -> FactMark | None:
        """The mark of one id now (``None``: no fact holds it)."""
        return self._live.mark(fact_id)

    def masked(self) -> frozenset[str]:
        """Ids of global facts an equivalent project fact overrides."""
        return self._frozen_masked

    def fact(self, fact_id: str) -> Fact:
        """One fact by id (its saved record, or the file read again)."""
        mark = self._live.mark(fact_id)
        if mark is None:
            raise KeyError(fact_id)
        return self.recaller._tracker.facts[mark.reference]

    def since(self, digest: str | None) -> frozenset[str] | None:
        """Ids whose mark may differ from the generation whose digest is ``digest``."""
        return self._live.affected_since(digest, self.generation)


class SavedLive:
    """The overlay a host keeps on its saved state while the kernel names changed files."""

    def __init__(self, paths: EnginePaths, base: QuietFacts) -> None:
        self.base = base
        self.reader = base.reader
        self.recaller = base.recaller
        self._roots = {"project": paths.project_store, "global": paths.global_store}
        meta = base._meta
        more = meta if "odd" in meta else self.reader.meta("odd", "skipped_scopes")
        # Without the saved ``odd`` map (a state from older code) a file's old reference is
        # unknown: every change goes to the full read.
        self.usable = "odd" in more
        self._odd: dict[tuple[str, str], str | None] = dict(more.get("odd") or {})
        self._held_by = {ref: key for key, ref in self._odd.items() if ref is not None}
        skipped = list(meta.get("skipped") or ())
        scopes = list(more.get("skipped_scopes") or ["project"] * len(skipped))
        # (scope, file name) → its diagnostic (the saved ones as saved: no line number).
        self._skipped: dict[tuple[str, str], Diagnostic] = {
            (scope, file): Diagnostic(code, self._roots[scope] / file, message)
            for (code, file, message), scope in zip(skipped, scopes, strict=True)
        }
        self._marks: dict[str, tuple[int, str] | None] = {}  # id → mark now (None: gone)
        self._holders: dict[str, list[str]] = {}  # equivalence key → holders now
        moved = base._moved
        if moved is not None:  # brought up at open (recall/delta.py): its changes first
            for fact_id, _, _ in moved.dropped:
                self._marks[fact_id] = None
            for fact_id, revision, reference in moved.added:
                self._marks[fact_id] = (revision, reference)
            self._moved_holders(moved.dropped, moved.added)
        self.masked: set[str] = set(base.masked())
        self.count = len(base)
        self.digest_now = base.digest()
        self.generation = 0
        self._digests: dict[str, int] = {self.digest_now: 0}
        self._log: deque[tuple[int, frozenset[str]]] = deque(maxlen=_LOG)
        self.diagnostics = self._ordered_diagnostics()

    # -- what the notes ask -----------------------------------------------------------------

    def mark(self, fact_id: str) -> FactMark | None:
        """One id's mark now."""
        from ..session.notes import FactMark

        if fact_id in self._marks:
            now = self._marks[fact_id]
            return None if now is None else FactMark(fact_id, *now)
        saved = self.reader.mark(fact_id)
        return None if saved is None else FactMark(fact_id, *saved)

    def all_marks(self) -> dict[str, FactMark]:
        """Every mark now (the saved ones read once, the overlay applied)."""
        from ..session.notes import FactMark

        out = {i: FactMark(i, rev, ref) for i, rev, ref in self.reader.marks()}
        for fact_id, now in self._marks.items():
            if now is None:
                out.pop(fact_id, None)
            else:
                out[fact_id] = FactMark(fact_id, *now)
        return out

    def affected_since(self, digest: str | None, generation: int) -> frozenset[str] | None:
        """Ids changed after the generation with ``digest``, up to ``generation``."""
        since = None if digest is None else self._digests.get(digest)
        if since is None or since > generation:
            return None
        if since == generation:
            return frozenset()
        if not self._log or self._log[0][0] > since + 1:
            return None
        out: set[str] = set()
        for gen, ids in self._log:
            if since < gen <= generation:
                out |= ids
        return frozenset(out)

    # -- applying the kernel's names ----------------------------------------------------------

    def _tracked(self) -> Any:
        return self.recaller._tracker.facts

    def _old_reference(self, scope: str, name: str) -> str | None:
        """The reference file ``name`` held before this change (``None``: none)."""
        key = (scope, name)
        if key in self._odd:
            return self._odd[key]
        reference = f"{scope}/{name}"
        # Every file whose reference is not ``<scope>/<name>`` is in ``_odd``: a record under
        # that reference, held by no odd file, is this file's.
        if reference in self._held_by or self._tracked().get(reference) is None:
            return None
        return reference

    def apply(self, changed: Iterable[tuple[Scope, str]]) -> SavedHostFacts | None:
        """The named entries read again and applied; ``None``: read the stores in full."""
        from ..facts.store import read_store_entry

        named = sorted(set(changed))
        if not self.usable or len(named) > MAX_CHANGED:
            return None
        tracked = self._tracked()
        old_refs: dict[str, Fact] = {}
        new_facts: dict[str, Fact] = {}
        new_odd: dict[tuple[str, str], object] = {}
        new_problems: dict[tuple[str, str], Diagnostic | None] = {}
        for scope, name in named:
            held = self._old_reference(scope, name)
            if held is not None:
                was = tracked.get(held)
                if was is not None:
                    old_refs[held] = was
            found = read_store_entry(self._roots[scope], scope, name)
            new_problems[(scope, name)] = found if isinstance(found, Diagnostic) else None
            if isinstance(found, Fact):
                if _is_archived(found) or found.reference in new_facts:
                    return None
                new_facts[found.reference] = found
            # ``<scope>/<name>`` (and no entry at all) needs no ``_odd`` entry; another
            # reference, or a diagnostic (``None``), does.
            if isinstance(found, Diagnostic):
                new_odd[(scope, name)] = None
            elif found is not None and found.reference != f"{scope}/{name}":
                new_odd[(scope, name)] = found.reference
            else:
                new_odd[(scope, name)] = _NO_ENTRY
        ids = {fact.id for fact in new_facts.values()}
        if len(ids) != len(new_facts):
            return None
        for reference, fact in new_facts.items():
            holder = self.mark(fact.id)
            if holder is not None and holder.reference not in old_refs:
                return None  # an id another file holds: the full read reports it
            if reference not in old_refs and tracked.get(reference) is not None:
                return None  # a reference another file holds

        for reference in old_refs.keys() - new_facts.keys():
            self.recaller.remove(reference)
            self.recaller._failed.pop(reference, None)
        for reference, new in new_facts.items():
            old = tracked.get(reference)
            if old is not None and _same(old, new):
                continue  # the same indexed text (touched): nothing moves
            self.recaller.upsert(new)

        dropped: list[_Mark] = [(f.id, f.revision, f.reference) for f in old_refs.values()]
        added: list[_Mark] = [(f.id, f.revision, f.reference) for f in new_facts.values()]
        for fact_id, _, _ in dropped:
            self._marks[fact_id] = None
        for fact_id, revision, reference in added:
            self._marks[fact_id] = (revision, reference)
        self.count += len(added) - len(dropped)
        self.digest_now = moved_digest(self.digest_now, dropped, added)
        self._remask(list(old_refs.values()), list(new_facts.values()))

        for key, value in new_odd.items():
            previous = self._odd.pop(key, None)
            if previous is not None and self._held_by.get(previous) == key:
                del self._held_by[previous]
            if value is not _NO_ENTRY:
                held = cast("str | None", value)
                self._odd[key] = held
                if held is not None:
                    self._held_by[held] = key
        for key, problem in new_problems.items():
            self._skipped.pop(key, None)
            if problem is not None:
                self._skipped[key] = problem
        self.diagnostics = self._ordered_diagnostics()
        from .trace import TraceSkip

        self.recaller._skipped = tuple(
            TraceSkip(code=d.code, file=d.path.name, message=d.message) for d in self.diagnostics
        )

        self.generation += 1
        self._log.append((self.generation, frozenset(m[0] for m in dropped + added)))
        self._digests[self.digest_now] = self.generation
        if len(self._digests) > 4 * _LOG:  # only recent generations can be diffed anyway
            oldest = self.generation - _LOG
            self._digests = {d: g for d, g in self._digests.items() if g >= oldest}
        return SavedHostFacts(self, self.generation)

    def _holders_of(self, key: str) -> list[str]:
        if key not in self._holders:
            raw = self.reader.holders(key)
            self._holders[key] = list(marshal.loads(raw)) if raw is not None else []
        return self._holders[key]

    def _moved_holders(self, dropped: Sequence[_Mark], added: Sequence[_Mark]) -> None:
        """The holders overlay for the changes a state brought up at open already made."""
        from ..facts.equivalence import equivalence_keys
        from .persist import stand_in

        for _, _, reference in dropped:
            blob = self.reader.record(reference)  # the reader is the state before them
            if blob is not None:
                was = stand_in(blob)
                self._shift(equivalence_keys(was), holder_mark(was), -1)
        for _, _, reference in added:
            fact = self._tracked().get(reference)
            if fact is not None:
                self._shift(equivalence_keys(fact), holder_mark(fact), 1)

    def _shift(self, keys: Iterable[str], mark: str, step: int) -> None:
        for key in keys:
            held_by = self._holders_of(key)
            if step < 0:
                if mark in held_by:
                    held_by.remove(mark)
            else:
                bisect.insort(held_by, mark)

    def _remask(self, old: Sequence[Fact], new: Sequence[Fact]) -> None:
        """Masked globals re-decided for those sharing a key with an old or new version."""
        from ..facts.equivalence import equivalence_keys

        changed_keys: set[str] = set()
        for fact in old:
            keys = equivalence_keys(fact)
            self._shift(keys, holder_mark(fact), -1)
            changed_keys.update(keys)
        for fact in new:
            keys = equivalence_keys(fact)
            self._shift(keys, holder_mark(fact), 1)
            changed_keys.update(keys)
        self.masked -= {fact.id for fact in old}
        tracked = self._tracked()
        candidates = {
            m[2:] for key in changed_keys for m in self._holders_of(key) if m[0] == "g"
        }
        for fact_id in candidates:
            self.masked.discard(fact_id)
            mark = self.mark(fact_id)
            candidate = None if mark is None else tracked.get(mark.reference)
            if candidate is None:
                continue
            if any(
                any(m[0] == "p" for m in self._holders_of(key))
                for key in equivalence_keys(candidate)
            ):
                self.masked.add(fact_id)

    def _ordered_diagnostics(self) -> tuple[Diagnostic, ...]:
        """Project's then global's, each by path (as ``Memory.snapshot`` reports them)."""
        out: list[Diagnostic] = []
        for scope in SCOPES:
            found = [d for (s, _), d in self._skipped.items() if s == scope]
            out.extend(sorted(found, key=lambda d: str(d.path)))
        return tuple(out)
