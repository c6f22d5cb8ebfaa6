"""A cold turn after a few files changed: the saved state brought up to them (issue 14).

When the stores' listing differs from the one the saved state was written under in a few files
(edited, created, deleted, renamed, touched — or not yet settled at that save), only those files
are read. Each one's old fact (from its saved record) is taken out of the index and the pool
tables and its new one put in, exactly the ``upsert``/``remove`` a host's ``Recaller.sync``
does; the session marks, the masked globals (re-decided only for globals sharing an S7.2 key
with a changed fact), the diagnostics and the listing follow. The turn is answered from that,
and the changed rows are written to the state's delta (``recall/state.py``): the work is the
changed files' and their terms', not the store's. Anything unusual — many changes, a duplicate
id or reference, an archived path — returns ``None`` and the caller reads the stores in full.
"""

from __future__ import annotations

import bisect
import marshal
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..facts import stat_listing
from ..facts.model import Diagnostic, Fact
from ..facts.stat_listing import Listing
from .engine import _is_archived
from .index import SparseIndex
from .pool import POOL, PREFIX, SHADOWED
from .quiet import (
    MAX_UNSETTLED,
    Moved,
    QuietFacts,
    _SavedTracker,
    holder_mark,
    listing_bytes,
    moved_digest,
    saved_recaller,
)
from .saved_listing import SavedListing
from .state import (
    LISTING_SUM,
    Changes,
    PostingsView,
    StateFile,
    StateReader,
    listing_digest,
    patched,
)

if TYPE_CHECKING:
    from ..paths import EnginePaths

# Above this many changed files, reading the stores in full is the simpler path.
MAX_CHANGED = 256
_SCOPES = ("project", "global")


def _changed_files(
    saved: SavedListing,
    listings: tuple[Listing, Listing],
    unsettled: Sequence[tuple[str, str, str | None]],
) -> list[tuple[int, str]] | None:
    """(scope index, file name) of every file to read again; ``None`` when too many."""
    found = saved.changed(listings, MAX_CHANGED)
    if found is None:
        return None
    changed = dict.fromkeys(found)
    for scope, name, _ in unsettled:
        changed[(_SCOPES.index(scope), name)] = None
    return list(changed) if len(changed) <= MAX_CHANGED else None


def index_changes(changes: Changes, name: str, index: SparseIndex) -> None:
    """One lazily restored pool's changes as delta rows: a patch per changed term over the
    base's posting (a whole row for a term that came whole, is new or emptied), the changed
    slots, and the pool's free slots and totals — rows of the changed facts only."""
    from array import array

    view = index._frozen if isinstance(index._frozen, PostingsView) else None
    origin = view.origin if view is not None else {}
    patches = index.posting_patches()
    # Terms whose postings the change never read: what the delta holds for them now, in one go.
    deferred = [term for term in patches if term in index._deferred]
    held = view.delta_rows(deferred) if view is not None else {}
    for term, (removed, added) in patches.items():
        if term in index._deferred:
            whole, before = held.get(term, (None, (b"", b"")))
            if before is None:  # the delta's whole row: patched here, written whole
                blob = patched(whole, array("i", removed).tobytes(), array("i", added).tobytes())
                changes.postings[(name, term)] = blob or None
                continue
        else:
            posting = None if term in index._gone else index._postings.get(term)
            before = origin.get(term)
            if not posting or before is None:
                changes.postings[(name, term)] = posting.tobytes() if posting else None
                continue
        gone = array("i")
        gone.frombytes(before[0])
        pairs = array("i")
        pairs.frombytes(before[1])
        put = dict(zip(pairs[0::2], pairs[1::2], strict=True))
        out = set(gone)
        for slot in removed:
            if put.pop(slot, None) is None:
                out.add(slot)
        put.update(zip(added[0::2], added[1::2], strict=True))
        flat = array("i")
        for slot, tf in put.items():
            flat.append(slot)
            flat.append(tf)
        changes.patches[(name, term)] = (array("i", sorted(out)).tobytes(), flat.tobytes())
    for slot, (key, vals) in index.changed_slots().items():
        changes.slots[(name, slot)] = (key, vals)
    changes.pools[name] = (list(index._free), index.total_length, len(index._keys))


def brought_up(
    paths: EnginePaths,
    reader: StateReader,
    meta: dict[str, Any],
    scanned: tuple[tuple[Listing, Listing], int],
    materialize: Callable[[], Sequence[Fact]],
    may_write: bool,
    *,
    named: Sequence[tuple[int, str]] | None = None,
    monitor: object = None,
    listing: bytes | None = None,
    listing_sum: str | None = None,
) -> QuietFacts | None:
    """The saved state with the changed files applied, or ``None`` (read the stores).

    ``named``: the (store index, file name) entries known to differ from the saved listing
    (the store monitor named them, facts/probe.py); else the listings are compared whole.
    ``monitor``: the monitor's token taken before ``scanned``, saved with the new listing.
    ``listing``/``listing_sum``: ``listing_bytes(scanned listings)`` and its digest when the
    caller has them already (else computed here).
    """
    from ..facts.equivalence import equivalence_keys
    from ..facts.store import read_store_entry
    from .persist import fact_record

    listings, started = scanned
    more = reader.meta("odd", "skipped_scopes")
    if meta.get(LISTING_SUM) is None or "odd" not in more:
        return None  # no listing kept
    if named is None:
        saved = reader.saved_listing()
        if saved is None:
            return None
        changed = _changed_files(saved, listings, list(meta.get("unsettled", ())))
    else:
        picked = dict.fromkeys(named)
        picked.update(((_SCOPES.index(s), n), None) for s, n, _ in meta.get("unsettled", ()))
        changed = list(picked) if len(picked) <= MAX_CHANGED else None
    if changed is None:
        return None
    odd: dict[tuple[str, str], str | None] = dict(more["odd"])
    roots = (paths.project_store, paths.global_store)

    # What each changed file held, and what it holds now.
    old_refs: set[str] = set()
    new_facts: dict[str, Fact] = {}
    new_diagnostics: dict[tuple[int, str], Diagnostic] = {}
    for si, name in changed:
        scope = _SCOPES[si]
        if reader.listed(si, name) is not None:
            held = odd.get((scope, name), f"{scope}/{name}")
            if held is not None:
                old_refs.add(held)
        found = read_store_entry(roots[si], "project" if si == 0 else "global", name)
        odd.pop((scope, name), None)
        if isinstance(found, Diagnostic):
            new_diagnostics[(si, name)] = found
            odd[(scope, name)] = None
        elif found is not None:
            if _is_archived(found) or found.reference in new_facts:
                return None
            new_facts[found.reference] = found
            if found.reference != f"{scope}/{name}":
                odd[(scope, name)] = found.reference
        elif name in listings[si]:
            odd[(scope, name)] = None  # listed but not a fact (a directory, gone meanwhile)

    ids = {fact.id for fact in new_facts.values()}
    if len(ids) != len(new_facts):
        return None
    for reference, fact in new_facts.items():
        holder = reader.mark(fact.id)
        if holder is not None and holder[1] not in old_refs:
            return None  # an id another file holds: the full read reports it
        if reference not in old_refs and reader.record(reference) is not None:
            return None  # a reference another file holds

    recaller = saved_recaller(reader, meta)
    tracked = recaller._tracker.facts
    old_facts = {ref: was for ref in old_refs if (was := tracked.get(ref)) is not None}
    for reference in old_refs - new_facts.keys():
        recaller.remove(reference)
        recaller._failed.pop(reference, None)
    for reference, new in new_facts.items():
        old = tracked.get(reference)
        if old is not None and old == new:
            continue  # same indexed text (re-read, touched): nothing moves
        recaller.upsert(new)

    # Session marks: the old facts' out, the new ones' in (the digest follows them).
    gone = old_refs - new_facts.keys()
    dropped = [(f.id, f.revision, f.reference) for f in old_facts.values()]
    added = [(f.id, f.revision, f.reference) for f in new_facts.values()]
    count = int(meta["count"]) - len(dropped) + len(added)

    # Masked globals: only those sharing a key with an old or new version can move.
    holders_now: dict[str, list[str]] = {}
    changed_keys: set[str] = set()

    def holders_of(key: str) -> list[str]:
        if key not in holders_now:
            raw = reader.holders(key)
            holders_now[key] = list(marshal.loads(raw)) if raw is not None else []
        return holders_now[key]

    for fact in old_facts.values():
        for key in equivalence_keys(fact):
            mark = holder_mark(fact)
            held_by = holders_of(key)
            if mark in held_by:
                held_by.remove(mark)
            changed_keys.add(key)
    for fact in new_facts.values():
        for key in equivalence_keys(fact):
            bisect.insort(holders_of(key), holder_mark(fact))
            changed_keys.add(key)
    masked = set(meta["masked"]) - {fact.id for fact in old_facts.values()}
    candidates = {m[2:] for key in changed_keys for m in holders_of(key) if m[0] == "g"}
    now_ref = {fact.id: fact.reference for fact in new_facts.values()}
    for fact_id in candidates:
        masked.discard(fact_id)
        saved_mark = reader.mark(fact_id)
        held_ref = now_ref.get(fact_id, saved_mark[1] if saved_mark is not None else None)
        candidate = None if held_ref is None else new_facts.get(held_ref, tracked.get(held_ref))
        if candidate is None:
            continue
        if any(any(m[0] == "p" for m in holders_of(key)) for key in equivalence_keys(candidate)):
            masked.add(fact_id)

    # Diagnostics: per store, sorted by file name (``Store.snapshot``'s order).
    scopes = list(more.get("skipped_scopes") or ["project"] * len(meta["skipped"]))
    per_scope: list[list[tuple[str, str, str]]] = [[], []]
    changed_names = set(changed)
    for (code, file, message), scope in zip(meta["skipped"], scopes, strict=True):
        si = _SCOPES.index(scope)
        if (si, file) not in changed_names:
            per_scope[si].append((code, file, message))
    for (si, name), diagnostic in new_diagnostics.items():
        per_scope[si].append((diagnostic.code, name, diagnostic.message))
    skipped: list[tuple[str, str, str]] = []
    skipped_scopes: list[str] = []
    for si, entries in enumerate(per_scope):
        entries.sort(key=lambda entry: str(roots[si] / entry[1]))
        skipped += entries
        skipped_scopes += [_SCOPES[si]] * len(entries)
    from .trace import TraceSkip

    recaller._skipped = tuple(TraceSkip(code=c, file=f, message=m) for c, f, m in skipped)

    # Files not settled at this read: named for the next turn to compare by content.
    # Only a changed file or one unsettled at the save can be: every other one has the
    # identity it had then, settled before that save's read began, so before this one's.
    before = started - stat_listing.RACY_NS
    unsettled: list[tuple[str, str, str | None]] = []
    maybe = {**dict.fromkeys(changed), **{(_SCOPES.index(scope), name): None
                                          for scope, name, _ in meta.get("unsettled", ())}}
    for si, name in maybe:
        identity = listings[si].get(name)
        if identity is not None and max(identity[3], identity[4]) >= before:
            scope = _SCOPES[si]
            unsettled.append((scope, name, odd.get((scope, name), f"{scope}/{name}")))
    if len(unsettled) > MAX_UNSETTLED:
        return None

    if listing_sum is None:
        listing = listing_bytes(listings) if listing is None else listing
        listing_sum = listing_digest(listing)
    digest = moved_digest(str(meta["marks_digest"]), dropped, added)
    values: dict[str, Any] = {
        LISTING_SUM: listing_sum,
        "unsettled": unsettled,
        "odd": odd,
        "skipped": skipped,
        "skipped_scopes": skipped_scopes,
        "failed": {ref: (s.code, s.file, s.message) for ref, s in recaller._failed.items()},
        "count": count,
        "marks_digest": digest,
        "masked": sorted(masked),
        "monitor": monitor,
    }
    from ..session.notes import FactMark

    told = {mark[0]: FactMark(*mark) for mark in dropped}
    moved = Moved(
        changed=[f.id for f in new_facts.values() if told.get(f.id) != (f.id, f.revision,
                                                                        f.reference)],
        gone=[FactMark(*mark) for mark in dropped if mark[0] not in ids],
        before=told,
        digest=str(meta["marks_digest"]),
        now={f.id: f.reference for f in new_facts.values()},
        dropped=dropped,
        added=added,
    )
    view = QuietFacts(reader, recaller, {**meta, **values}, listing, materialize, None, moved,
                      listings if listing is None else None)
    recaller.stats.restored = count - len(new_facts)
    if may_write:
        changes = Changes()
        changes.meta.update(values)
        for fact_id, _, _ in dropped:
            changes.marks[fact_id] = None
        for fact_id, revision, reference in added:
            changes.marks[fact_id] = (revision, reference)
        tracker = recaller._tracker
        if isinstance(tracker, _SavedTracker):
            changes.tracker.update(tracker.changed_rows())
        for name in (POOL, SHADOWED, PREFIX):
            index = recaller._indexes[name]
            if index._dirty or index.counters.adds or index.counters.removes:
                index_changes(changes, name, index)
        for reference in gone:
            changes.records[reference] = None
        for si, name in changed:
            now = listings[si].get(name)
            holds = odd.get((_SCOPES[si], name), f"{_SCOPES[si]}/{name}")
            written = None if holds is None else new_facts.get(holds)
            if written is None or now is None:
                continue
            settled = now if max(now[3], now[4]) < before else None
            changes.records[written.reference] = (settled, fact_record(written))
        for si, name in changed:
            changes.listing[(si, name)] = listings[si].get(name)
        for key in changed_keys:
            holding = holders_now[key]
            changes.holders[key] = marshal.dumps(holding) if holding else None
        from .persist import recall_cache_path

        StateFile(recall_cache_path(paths)).write_delta(reader.seen, changes)
    return view
