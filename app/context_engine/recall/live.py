"""Both stores as a long-lived host keeps them: told of changes by the kernel, not by a rescan.

``LiveStores`` watches the two store directories (``facts/dir_watch.py``) before the host's
first read. At each turn it drains the kernel's queue: nothing queued → the last facts stand
(no ``lstat``, no ``scandir``); named entries → only those files are read again and applied per
fact (``apply``: O(changed facts) plus one tuple copy); a queue overflow, a store directory
moved, removed, replaced or created, or an unreadable queue → the caller reads both stores in
full and hands the result to ``rebase``. Every entry is read after its event was drained, so
the facts are at least as new as every change the queue reported (issue 14).
"""

from __future__ import annotations

import os
import uuid
from bisect import bisect_left
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, overload

from ..facts.dir_watch import DirWatch, sees_every_change
from ..facts.equivalence import equivalence_keys
from ..facts.model import Diagnostic, Fact, Scope
from ..facts.stat_listing import is_fact_file_name
from ..session.notes import FactMark

if TYPE_CHECKING:
    from ..facts.store import Store
    from ..paths import EnginePaths

SCOPES: tuple[Scope, Scope] = ("project", "global")
_LOG = 256  # generations a baseline may lag behind and still be diffed by affected ids only
_Entry = Fact | Diagnostic
_Key = tuple[str, str, str]  # (name, scope, id): the order of Memory.snapshot (S4.10)


def _order(fact: Fact) -> _Key:
    return (fact.name, fact.scope, fact.id)


def _extra(count: int) -> int:
    """Holders beyond the first of one id or reference."""
    return count - 1 if count > 1 else 0


class MaskTracker:
    """``session.prefix.masked_global_ids`` kept up to date one fact at a time."""

    def __init__(self) -> None:
        self._project: Counter[str] = Counter()  # equivalence key → project facts holding it
        self._globals: dict[str, set[str]] = {}  # equivalence key → global fact ids
        self._keys: dict[str, tuple[str, ...]] = {}  # global fact id → its keys
        self.masked: set[str] = set()

    def add(self, fact: Fact) -> None:
        """Count ``fact`` in (ids are unique while a tracker is used)."""
        keys = equivalence_keys(fact)
        if fact.scope == "global":
            self._keys[fact.id] = keys
            for key in keys:
                self._globals.setdefault(key, set()).add(fact.id)
            if any(self._project[key] for key in keys):
                self.masked.add(fact.id)
            return
        for key in keys:
            self._project[key] += 1
            if self._project[key] == 1:
                self.masked.update(self._globals.get(key, ()))

    def remove(self, fact: Fact) -> None:
        """Count ``fact`` out."""
        keys = equivalence_keys(fact)
        if fact.scope == "global":
            self._keys.pop(fact.id, None)
            for key in keys:
                holders = self._globals.get(key)
                if holders is not None:
                    holders.discard(fact.id)
                    if not holders:
                        del self._globals[key]
            self.masked.discard(fact.id)
            return
        for key in keys:
            self._project[key] -= 1
            if self._project[key] <= 0:
                del self._project[key]
                for global_id in self._globals.get(key, ()):
                    if not any(self._project[k] for k in self._keys.get(global_id, ())):
                        self.masked.discard(global_id)


@dataclass(slots=True)
class Applied:
    """One turn's changes: the facts now, and what the recall index must do about them."""

    facts: Sequence[Fact]
    diagnostics: tuple[Diagnostic, ...]
    upserts: list[Fact] = field(default_factory=list)
    removals: list[str] = field(default_factory=list)  # references no longer in any file
    exact: bool = True  # False: duplicate ids or references, let ``Recaller.sync`` decide


class LiveFacts(Sequence[Fact]):
    """One generation of the live stores: the facts, sorted as ``Memory.snapshot`` sorts them.

    It answers the session notes as a saved view does (``marks``/``masked``/``fact``/
    ``digest``, see ``session/notes.SavedFacts``) and also ``since(digest)``: the ids whose
    fact may differ from an earlier generation's, so a turn compares those alone.
    """

    def __init__(
        self, live: LiveStores, facts: tuple[Fact, ...], generation: int, masked: frozenset[str]
    ) -> None:
        self._live = live
        self._facts = facts
        self.generation = generation
        self._masked = masked
        self._by_id: dict[str, Fact] | None = None

    def __len__(self) -> int:
        return len(self._facts)

    @overload
    def __getitem__(self, index: int) -> Fact: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Fact]: ...
    def __getitem__(self, index: int | slice) -> Fact | Sequence[Fact]:
        return self._facts[index]

    def __iter__(self) -> Iterator[Fact]:
        return iter(self._facts)

    def _index(self) -> dict[str, Fact]:
        if self._live.generation == self.generation:
            return self._live.by_id  # still the current generation: the live table is ours
        if self._by_id is None:
            self._by_id = {fact.id: fact for fact in self._facts}
        return self._by_id

    def marks(self) -> dict[str, FactMark]:
        """id → (id, revision, reference) of every fact."""
        return {f.id: FactMark(f.id, f.revision, f.reference) for f in self._facts}

    def mark(self, fact_id: str) -> FactMark | None:
        """One fact's mark, ``None`` when no fact has that id."""
        fact = self._index().get(fact_id)
        return None if fact is None else FactMark(fact.id, fact.revision, fact.reference)

    def masked(self) -> frozenset[str]:
        """Ids of global facts an equivalent project fact overrides."""
        return self._masked

    def fact(self, fact_id: str) -> Fact:
        """One fact by id."""
        return self._index()[fact_id]

    def digest(self) -> str:
        """A token for this generation: equal tokens, equal marks."""
        return f"{self._live.token}:{self.generation}"

    def since(self, digest: str | None) -> frozenset[str] | None:
        """Ids that may differ since the generation ``digest`` names; ``None``: unknown."""
        return self._live.affected_since(digest, self.generation)


class LiveStores:
    """The watched stores of one workspace, their entries, and the changes of each turn."""

    def __init__(
        self, paths: EnginePaths, watch: DirWatch, stores: Callable[[], Iterable[Store]]
    ) -> None:
        self.paths = paths
        self._watch = watch
        self._stores = stores
        self._roots: dict[Scope, Path] = {
            "project": paths.project_store,
            "global": paths.global_store,
        }
        self._wds: dict[int, Scope] = {}
        self._dirs: dict[Scope, tuple[int, int] | None] = {}
        self.token = f"live:{uuid.uuid4().hex}"
        self.generation = 0
        self.based = False
        self._log: deque[tuple[int, frozenset[str]]] = deque(maxlen=_LOG)
        self._entries: dict[tuple[Scope, str], _Entry] = {}
        self._keys: list[_Key] = []
        self._sorted: list[Fact] = []
        self.by_id: dict[str, Fact] = {}
        self._ids: Counter[str] = Counter()
        self._refs: Counter[str] = Counter()
        self._dups = 0  # ids or references held by more than one file
        self._masks = MaskTracker()
        self._stale = False  # by_id and the masks wait for duplicates to go away
        self._problems: dict[tuple[Scope, str], Diagnostic] = {}
        self._diagnostics: tuple[Diagnostic, ...] = ()
        self.broken = False  # a watch could not be set: the caller stops using this
        self._pid = os.getpid()

    @classmethod
    def start(cls, paths: EnginePaths, stores: Callable[[], Iterable[Store]]) -> LiveStores | None:
        """Watch both store directories now (before any read); ``None`` where that fails."""
        watch = DirWatch.open()
        if watch is None:
            return None
        live = cls(paths, watch, stores)
        if not live._arm():
            watch.close()
            return None
        return live

    def close(self) -> None:
        """Stop watching."""
        self._watch.close()

    # -- the kernel's queue --------------------------------------------------------------------

    def _identity(self, scope: Scope) -> tuple[int, int] | None:
        try:
            st = os.stat(self._roots[scope])
        except OSError:  # missing, or no longer reachable: read (and watched) as it comes back
            return None
        return (st.st_dev, st.st_ino)

    def _arm(self) -> bool:
        """Watch each store directory whose identity differs from the watched one."""
        for scope in SCOPES:
            identity = self._identity(scope)
            if scope in self._dirs and self._dirs[scope] == identity:
                continue
            for old in [wd for wd, s in self._wds.items() if s == scope]:
                del self._wds[old]  # its events are stale from now on
            self._dirs[scope] = identity
            if identity is None:
                continue  # missing: watched once it exists (one stat per turn until then)
            if not sees_every_change(self._roots[scope]):
                return False  # a network or FUSE store: other machines' writes raise no event
            added = self._watch.add(self._roots[scope])
            if added is None or added in self._wds:
                return False
            self._wds[added] = scope
            if self._identity(scope) != identity:
                return False  # replaced while we armed: the caller reads as before
        return True

    def poll(self) -> set[tuple[Scope, str]] | str | None:
        """What changed since the last poll: ``None`` (nothing), the entries named by the
        kernel, or the reason only a full read will do (the watches are re-armed first)."""
        if os.getpid() != self._pid:  # a forked child shares the queue: not ours to drain
            self.broken = True
            return "forked"
        drained = self._watch.drain()
        reason = drained.rescan
        changed: set[tuple[Scope, str]] = set()
        for wd, names in drained.names.items():
            scope = self._wds.get(wd)
            if scope is not None:
                # Temp, lock and dot files, MEMORY.md, .archive/: nothing a read would list.
                changed.update((scope, name) for name in names if is_fact_file_name(name))
        for wd in drained.selves:
            scope = self._wds.get(wd)
            if scope is not None:  # watched again even if the path still names that inode
                self._dirs.pop(scope, None)
                reason = reason or "a store directory changed, moved or was removed"
        if any(self._dirs.get(scope) != self._identity(scope) for scope in SCOPES):
            reason = reason or "a store directory was created or replaced"
        if reason is not None:
            if not self._arm():
                self.broken = True
            self.based = False
            return reason
        return changed or None

    # -- the entries ---------------------------------------------------------------------------

    def rebase(self, facts: Sequence[Fact], diagnostics: Sequence[Diagnostic]) -> bool:
        """Take a full read of both stores as the entries from now on; ``False``: unusable."""
        entries: dict[tuple[Scope, str], _Entry] = {}
        for fact in facts:
            if fact.path is None or fact.path.parent != self._roots[fact.scope]:
                self.based = False
                return False
            entries[(fact.scope, fact.path.name)] = fact
        for diagnostic in diagnostics:
            scope = self._scope_of(diagnostic.path)
            if scope is None:
                self.based = False
                return False
            entries[(scope, diagnostic.path.name)] = diagnostic
        self._entries = entries
        ordered = sorted(facts, key=_order)
        self._keys = [_order(fact) for fact in ordered]
        self._sorted = ordered
        self.by_id = {fact.id: fact for fact in ordered}
        self._ids = Counter(fact.id for fact in ordered)
        self._refs = Counter(fact.reference for fact in ordered)
        self._dups = sum(n - 1 for n in self._ids.values() if n > 1) + sum(
            n - 1 for n in self._refs.values() if n > 1
        )
        self._problems = {k: e for k, e in entries.items() if isinstance(e, Diagnostic)}
        self._stale = bool(self._dups)
        if not self._stale:
            self._recount()
        self._diagnostics = tuple(diagnostics)
        self.generation += 1
        self._log.clear()
        self.based = True
        return True

    def view(self, facts: tuple[Fact, ...]) -> LiveFacts | None:
        """The generation just rebased as a view over ``facts`` (the read it came from), so
        the next turn's notes compare changed ids only; ``None`` with duplicates."""
        if not self.based or self._dups or len(facts) != len(self._sorted):
            return None
        if any(a is not b for a, b in zip(facts, self._sorted, strict=True)):
            return None  # not in snapshot order: hand out the read as it is
        return LiveFacts(self, facts, self.generation, frozenset(self._masks.masked))

    def _scope_of(self, path: Path) -> Scope | None:
        for scope in SCOPES:
            if path.parent == self._roots[scope]:
                return scope
        return None

    def apply(self, changed: set[tuple[Scope, str]]) -> Applied:
        """Read the changed entries again and apply them; the facts of the new generation."""
        stores = {store.scope: store for store in self._stores()}
        read = [
            (key, self._entries.get(key), stores[key[0]].entry_now(key[1]))
            for key in sorted(changed)
        ]
        old_facts = [old for _, old, _ in read if isinstance(old, Fact)]
        new_facts = [new for _, _, new in read if isinstance(new, Fact)]
        for fact in old_facts:  # every drop before any insert: a rename keeps its id unique
            self._drop(fact)
        for key, old, new in read:
            if new is None:
                self._entries.pop(key, None)
            else:
                self._entries[key] = new
            if isinstance(old, Diagnostic):
                del self._problems[key]
            if isinstance(new, Diagnostic):
                self._problems[key] = new
        for fact in new_facts:
            self._insert(fact)
        if any(isinstance(old, Diagnostic) or isinstance(new, Diagnostic) for _, old, new in read):
            self._diagnostics = self._ordered_diagnostics()
        if self._stale and not self._dups:
            self._recount()
        self.generation += 1
        affected = frozenset(f.id for f in old_facts) | frozenset(f.id for f in new_facts)
        self._log.append((self.generation, affected))
        facts = tuple(self._sorted)
        removals = [f.reference for f in old_facts if f.reference not in self._refs]
        if self._dups:
            return Applied(facts, self._diagnostics, new_facts, removals, exact=False)
        view = LiveFacts(self, facts, self.generation, frozenset(self._masks.masked))
        return Applied(view, self._diagnostics, new_facts, removals)

    def _insert(self, fact: Fact) -> None:
        key = _order(fact)
        at = bisect_left(self._keys, key)
        self._keys.insert(at, key)
        self._sorted.insert(at, fact)
        self._count(fact, 1)

    def _drop(self, fact: Fact) -> None:
        key = _order(fact)
        at = bisect_left(self._keys, key)
        while self._sorted[at] is not fact:  # equal keys only with duplicate ids
            at += 1
        del self._keys[at]
        del self._sorted[at]
        self._count(fact, -1)

    def _count(self, fact: Fact, step: int) -> None:
        """Keep the id and reference counts; the id table and masks while ids are unique."""
        ids, refs = self._ids, self._refs
        id_before, ref_before = ids[fact.id], refs[fact.reference]
        ids[fact.id] = id_before + step
        refs[fact.reference] = ref_before + step
        self._dups += _extra(id_before + step) - _extra(id_before)
        self._dups += _extra(ref_before + step) - _extra(ref_before)
        if not ids[fact.id]:
            del ids[fact.id]
        if not refs[fact.reference]:
            del refs[fact.reference]
        if self._dups or self._stale:
            self._stale = True  # rebuilt once every id and reference is unique again
            return
        if step > 0:
            self.by_id[fact.id] = fact
            self._masks.add(fact)
        else:
            self.by_id.pop(fact.id, None)
            self._masks.remove(fact)

    def _recount(self) -> None:
        """The id table and the masks from the facts (after duplicates went away)."""
        self.by_id = {fact.id: fact for fact in self._sorted}
        self._masks = MaskTracker()
        for fact in self._sorted:
            self._masks.add(fact)
        self._stale = False

    def _ordered_diagnostics(self) -> tuple[Diagnostic, ...]:
        """Project's then global's, each by path (as ``Memory.snapshot`` reports them)."""
        out: list[Diagnostic] = []
        for scope in SCOPES:
            found = [d for (s, _), d in self._problems.items() if s == scope]
            out.extend(sorted(found, key=lambda d: str(d.path)))
        return tuple(out)

    def affected_since(self, digest: str | None, generation: int) -> frozenset[str] | None:
        """Ids changed after the generation ``digest`` names, up to ``generation``."""
        if digest is None or not digest.startswith(self.token + ":"):
            return None
        try:
            since = int(digest[len(self.token) + 1 :])
        except ValueError:
            return None
        if since == generation:
            return frozenset()
        if since > generation or not self._log or self._log[0][0] > since + 1:
            return None
        out: set[str] = set()
        for gen, ids in self._log:
            if since < gen <= generation:
                out |= ids
        return frozenset(out)
