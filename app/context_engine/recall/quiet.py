"""A cold turn over unchanged stores: answered from the saved recall state, no fact file read.

Every hook is a new process. When the stores list exactly the files, with exactly the lstat
identities (ctime included), that the saved state was written under — and all of them had
settled before that write's read began (git's racy rule) — nothing changed since, and the
state's index, pool tables and session marks are the stores' (issue 14). Then a turn costs one
``lstat`` per file, the postings of the query's terms and the records of the facts it shows;
each fact is built from its saved record only when something asks for it.

Any difference (a file written, created, removed, touched, or a state from other code) and the
caller reads the stores as it always did; that read saves a new state for the next turn.
"""

from __future__ import annotations

import marshal
import sqlite3
import time
from abc import ABCMeta, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from ..digests import blake2b
from ..facts import stat_listing
from ..facts.model import Diagnostic, Fact
from ..facts.probe import Probe
from ..facts.stat_listing import Listing, scan_listings
from .engine import Recaller
from .index import SparseIndex
from .persist import VERSION, code_tag, fact_record, recall_cache_path, stand_in
from .pool import POOL, PREFIX, SHADOWED, PoolTracker
from .saved_listing import pack
from .state import LISTING_SUM, StateFile, StateReader, listing_digest
from .trace import TraceSkip

if TYPE_CHECKING:
    from ..facts.stat_listing import Identity
    from ..paths import EnginePaths
    from ..session.notes import FactMark


# Files that had not settled when the state was saved are re-read by the next cold turn and
# compared with their saved records (git re-compares racily clean entries); above this many,
# reading the stores in full is as cheap.
MAX_UNSETTLED = 32
# ``meta`` key: the store monitor's token taken before the walk this state's listing came
# from (facts/probe.py, monitor/): a later turn asks what changed since it.
MONITOR = "monitor"
# ``listing_sum`` of a state brought up by the monitor's word (a listing kept, its digest not
# made: O(files)); a turn that walks the stores compares the listing itself, then records it.
UNKNOWN_SUM = "?"


def quiet_meta(
    paths: EnginePaths,
    facts: Sequence[Fact],
    diagnostics: Iterable[Diagnostic],
    listings: tuple[Listing, Listing] | None,
    read_ns: int,
    monitor: object = None,
) -> dict[str, object]:
    """What a later cold turn checks first, saved beside the index by ``RecallCache``.

    The listing is kept when fact ids are unique; the files in it whose identity had not
    settled before ``read_ns`` (the start of the read that produced ``facts``) are listed with
    the reference they held, for the next turn to re-read (at most ``MAX_UNSETTLED``, else no
    listing: the next turn reads the stores again).
    """
    unsettled: list[tuple[str, str, str | None]] | None = None
    odd: dict[tuple[str, str], str | None] = {}
    unique = len({fact.id for fact in facts}) == len({fact.reference for fact in facts})
    if listings is not None and unique and len({fact.id for fact in facts}) == len(facts):
        held: dict[tuple[str, str], str] = {
            (f.scope, f.path.name): f.reference for f in facts if f.path is not None
        }
        # Which reference each listed file holds, where it is not ``<scope>/<file name>``
        # (a name field other than the file's stem, a diagnostic, not a fact): what a later
        # turn needs to take a changed file's old fact out (recall/delta.py).
        for scope, files in zip(("project", "global"), listings, strict=True):
            for name in files:
                reference = held.get((scope, name))
                if reference != f"{scope}/{name}":
                    odd[(scope, name)] = reference
        before = read_ns - stat_listing.RACY_NS
        unsettled = [
            (scope, name, held.get((scope, name)))
            for scope, files in zip(("project", "global"), listings, strict=True)
            for name, identity in files.items()
            if max(identity[3], identity[4]) >= before
        ]
        if len(unsettled) > MAX_UNSETTLED:
            unsettled = None
    keep = unsettled is not None and listings is not None
    return {
        "roots": _roots(paths),
        # A cold turn compares its own listing's bytes by their digest, not 10^4 tuples decoded
        # (equal bytes, equal listings; a different order only costs a read). The listing
        # itself is kept packed: what a change is found by (recall/delta.py, saved_listing.py).
        "listing": pack(listings) if keep and listings is not None else None,
        LISTING_SUM: listing_digest(listing_bytes(listings)) if keep and listings else None,
        "unsettled": unsettled or [],
        "odd": odd,
        "skipped": [(d.code, d.path.name, d.message) for d in diagnostics],
        "skipped_scopes": [
            "global" if d.path.parent == paths.global_store else "project" for d in diagnostics
        ],
        "count": len(facts),
        MONITOR: monitor,
    }


def _still_saved(
    paths: EnginePaths, reader: StateReader, unsettled: list[tuple[str, str, str | None]]
) -> bool:
    """Whether each file that had not settled still holds what the state saved for it."""
    if not unsettled:
        return True
    from ..errors import FactFormatError
    from ..facts.store import load_fact_file

    for scope, name, reference in unsettled:
        root = paths.project_store if scope == "project" else paths.global_store
        try:
            fact = load_fact_file(root, "project" if scope == "project" else "global", name)
        except FactFormatError:
            fact = None
            if reference is None:
                continue  # still unreadable, as saved (its diagnostic was saved too)
        if fact is None or fact.reference != reference:
            return False
        saved = reader.record(reference)
        # Values, not bytes: marshal writes back-references by reference count.
        if saved is None or marshal.loads(saved) != marshal.loads(fact_record(fact)):
            return False
    return True


def quiet_marks(facts: Sequence[Fact]) -> dict[str, object]:
    """The session marks of ``facts`` (and their digest) and the masked global ids.

    Computed only when the whole state is written: a state whose facts are unchanged keeps its
    marks and only records its new listing.
    """
    from ..facts.equivalence import equivalence_keys
    from .state import TABLES

    marks = {fact.id: (fact.revision, fact.reference) for fact in facts}
    # Who holds each S7.2 key: a later turn re-decides only the globals sharing a key with
    # a changed fact (recall/delta.py). Masked: globals holding a key some project fact holds.
    holders: dict[str, list[str]] = {}
    for fact in facts:
        mark = holder_mark(fact)
        for key in equivalence_keys(fact):
            holders.setdefault(key, []).append(mark)
    masked = sorted(
        fact.id for fact in facts if fact.scope == "global"
        and any(any(m[0] == "p" for m in holders[key]) for key in equivalence_keys(fact))
    )
    return {
        "marks_digest": marks_digest((f.id, f.revision, f.reference) for f in facts),
        "masked": masked,
        TABLES: {
            "holders": {key: marshal.dumps(sorted(ids)) for key, ids in holders.items()},
            "marks": marks,
        },
    }


def holder_mark(fact: Fact) -> str:
    """How a holder of an equivalence key is saved: ``p:<id>`` (project) or ``g:<id>``."""
    return ("p:" if fact.scope == "project" else "g:") + fact.id


def listing_bytes(listings: tuple[Listing, Listing]) -> bytes:
    """The listings as bytes that depend on their values only.

    marshal version 2: from version 3 on, an object referenced elsewhere in the process is
    written as a back-reference, so equal listings could give different bytes.
    """
    return marshal.dumps(listings, 2)


_DIGEST_MOD = 1 << 128


def _mark_hash(mark: tuple[str, int, str]) -> int:
    data = f"{mark[0]}\0{mark[1]}\0{mark[2]}".encode("utf-8", "surrogatepass")
    return int.from_bytes(blake2b(data, digest_size=16).digest(), "big")


def marks_digest(marks: Iterable[tuple[str, int, str]]) -> str:
    """A digest of the session marks: equal digests, nothing to tell (session/notes.py).

    The sum of one hash per mark (mod 2^128): independent of order, so a state brought up
    by a few files updates it from their marks alone (``moved_digest``).
    """
    return f"{sum(map(_mark_hash, marks)) % _DIGEST_MOD:032x}"


def moved_digest(
    digest: str, gone: Iterable[tuple[str, int, str]], added: Iterable[tuple[str, int, str]]
) -> str:
    """``digest`` of some marks, with ``gone`` taken out and ``added`` put in."""
    total = int(digest, 16) - sum(map(_mark_hash, gone)) + sum(map(_mark_hash, added))
    return f"{total % _DIGEST_MOD:032x}"


def _roots(paths: EnginePaths) -> list[str]:
    return [str(paths.project_store), str(paths.global_store)]


class _LoadedWhole(dict[str, Any], metaclass=ABCMeta):
    """A lazily filled dict that reads every saved row (``_all``) before it is walked whole."""

    @abstractmethod
    def _all(self) -> None:
        """Read every saved row not read yet (each subclass knows its rows)."""

    def __iter__(self) -> Iterator[str]:
        self._all()
        return super().__iter__()

    def __len__(self) -> int:
        self._all()
        return super().__len__()

    def keys(self) -> Any:
        self._all()
        return super().keys()

    def values(self) -> Any:
        self._all()
        return super().values()

    def items(self) -> Any:
        self._all()
        return super().items()


class _SavedFacts(_LoadedWhole):
    """Tracked facts by reference, each built from its saved record on first use.

    Asking for one (``[]``, ``get``, ``in``) reads its record; asking for all of them
    (iteration, ``len``, ``values`` …: the memory tool's list and read) reads every record once.
    """

    def __init__(self, reader: StateReader) -> None:
        super().__init__()
        self._reader = reader
        self._complete = False
        self._gone: set[str] = set()  # taken out since the state was read (recall/delta.py)

    def __missing__(self, reference: str) -> Fact:
        if self._complete or reference in self._gone:
            raise KeyError(reference)
        blob = self._reader.record(reference)
        if blob is None:
            raise KeyError(reference)
        fact = stand_in(blob)
        self[reference] = fact
        return fact

    def _all(self) -> None:
        if not self._complete:
            for reference, blob in self._reader.records():
                if not dict.__contains__(self, reference) and reference not in self._gone:
                    self[reference] = stand_in(blob)
            self._complete = True

    def get(self, reference: str, default: Any = None) -> Any:
        try:
            return self[reference]
        except KeyError:
            return default

    def pop(self, reference: str, *default: Any) -> Any:
        try:
            self[reference]  # loaded from its record first: a pop must see it
        except KeyError:
            if default:
                return default[0]
            raise
        self._gone.add(reference)
        return super().pop(reference)

    def __setitem__(self, reference: str, fact: Fact) -> None:
        self._gone.discard(reference)
        super().__setitem__(reference, fact)

    def __delitem__(self, reference: str) -> None:
        self.pop(reference)

    def __contains__(self, reference: object) -> bool:
        return isinstance(reference, str) and self.get(reference) is not None



class _SavedTable(_LoadedWhole):
    """One pool table of the saved state, each entry read from its row on first use.

    Entries read are kept with their saved bytes, so ``changed()`` names exactly the rows a
    turn's changes touched (values are compared, sets mutated in place included).
    """

    def __init__(self, reader: StateReader, kind: str) -> None:
        super().__init__()
        self._reader = reader
        self._kind = kind
        self._saved: dict[str, bytes | None] = {}
        self._complete = False

    def _load(self, key: str) -> bool:
        if dict.__contains__(self, key):
            return True
        if self._complete or key in self._saved:
            return False
        blob = self._reader.tracker_row(self._kind, key)
        self._saved[key] = blob
        if blob is None:
            return False
        dict.__setitem__(self, key, marshal.loads(blob))
        return True

    def __missing__(self, key: str) -> Any:
        if self._load(key):
            return dict.__getitem__(self, key)
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        return dict.__getitem__(self, key) if self._load(key) else default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._load(key)

    def __setitem__(self, key: str, value: Any) -> None:
        self._load(key)
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        if not self._load(key):
            raise KeyError(key)
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:
        if not self._load(key):
            if default:
                return default[0]
            raise KeyError(key)
        return super().pop(key)

    def _all(self) -> None:
        if not self._complete:
            for key, blob in self._reader.tracker_rows(self._kind).items():
                if key not in self._saved:
                    self._saved[key] = blob
                    dict.__setitem__(self, key, marshal.loads(blob))
            self._complete = True

    def changed(self) -> dict[str, bytes | None]:
        """Key → new row bytes (``None``: gone) of every entry that differs from its row."""
        out: dict[str, bytes | None] = {}
        for key, blob in self._saved.items():
            if dict.__contains__(self, key):
                value = dict.__getitem__(self, key)
                if blob is None or marshal.loads(blob) != value:
                    out[key] = marshal.dumps(value)
            elif blob is not None:
                out[key] = None
        return out


class _SavedTracker(PoolTracker):
    """The pool tables of the saved state, read per entry as a turn's changes need them."""

    def __init__(self, reader: StateReader) -> None:  # no super(): nothing to build
        from .state import TRACKER_KINDS

        self._reader = reader
        self.facts = _SavedFacts(reader)
        tables = [_SavedTable(reader, kind) for kind in TRACKER_KINDS]
        self.membership, self._keys, self._project_by_key, self._global_by_key = tables
        self.tables = dict(zip(TRACKER_KINDS, tables, strict=True))

    def changed_rows(self) -> dict[tuple[str, str], bytes | None]:
        """The ``tracker`` rows a turn's changes touched (for the state's delta)."""
        return {
            (kind, key): blob
            for kind, table in self.tables.items()
            for key, blob in table.changed().items()
        }


class Moved(NamedTuple):
    """How a state brought up from another differs from it (recall/delta.py)."""

    changed: list[str]  # ids whose marks changed (new or updated)
    gone: list[FactMark]  # marks of ids no longer there
    before: dict[str, FactMark]  # the changed ids' marks before (absent: new)
    digest: str  # the marks digest of the state before
    now: dict[str, str]  # changed id → its reference now
    dropped: list[tuple[str, int, str]]  # the re-read files' marks before
    added: list[tuple[str, int, str]]  # and after


class QuietFacts(Sequence[Fact]):
    """Both stores' active facts as the saved state vouches for them, read only on demand.

    ``marks``/``masked``/``fact`` answer the session notes without building every fact;
    iterating or indexing reads the stores in full (``materialize``), as any other read does.
    """

    def __init__(
        self,
        reader: StateReader,
        recaller: Recaller,
        meta: dict[str, Any],
        listing: bytes | None,
        materialize: Callable[[], Sequence[Fact]],
        marks: list[tuple[str, int, str]] | None = None,
        moved: Moved | None = None,
        listings: tuple[Listing, Listing] | None = None,
    ) -> None:
        self.reader = reader
        self._listings = listings  # what ``listing`` stands for when its bytes were not made
        self.recaller = recaller
        self._listing = listing
        self._meta = meta
        self._materialize = materialize
        self._all: Sequence[Fact] | None = None
        self._raw_marks = marks
        self._marks: Mapping[str, FactMark] | None = None
        # (changed ids, gone marks, their marks before, the digest before) when this state was
        # brought up from another by re-reading a few files (recall/delta.py).
        self._moved = moved

    def __len__(self) -> int:
        return int(self._meta["count"])

    @overload
    def __getitem__(self, index: int) -> Fact: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Fact]: ...
    def __getitem__(self, index: int | slice) -> Fact | Sequence[Fact]:
        return self.materialized()[index]

    def __iter__(self) -> Iterator[Fact]:
        return iter(self.materialized())

    def materialized(self) -> Sequence[Fact]:
        """Every fact, read from the stores (once)."""
        if self._all is None:
            self._all = self._materialize()
        return self._all

    def marks(self) -> Mapping[str, FactMark]:
        """id → (id, revision, reference) of every fact, as saved (read on first look)."""
        if self._marks is None:
            from ..session.notes import FactMark

            raw = self._raw_marks
            if raw is None:
                raw = self.reader.marks()  # as read: a state brought up applies its changes
                if self._moved is not None:
                    out = {mark[0] for mark in self._moved.dropped}
                    raw = [mark for mark in raw if mark[0] not in out] + self._moved.added
            self._marks = {i: FactMark(i, r, ref) for i, r, ref in raw}
        return self._marks

    def since(self, digest: str | None) -> frozenset[str] | None:
        """When ``digest`` is that of the state this one was brought up from (recall/delta.py):
        the ids whose marks may differ from it; else ``None`` (compare them all)."""
        if self._moved is None or digest is None or self._moved.digest != digest:
            return None
        return frozenset(self._moved.before) | frozenset(self._moved.now)

    def before(self, digest: str | None) -> Mapping[str, FactMark] | None:
        """When ``since(digest)`` names ids: their marks in the state this one was brought up
        from (an id absent: no fact held it), so a baseline with that digest — the very same
        marks — need not be decoded to compare them; else ``None``."""
        if self._moved is None or digest is None or self._moved.digest != digest:
            return None
        return self._moved.before

    def mark(self, fact_id: str) -> FactMark | None:
        """The mark of one id (``None``: no fact holds it), without reading every mark."""
        from ..session.notes import FactMark

        if self._marks is not None:
            return self._marks.get(fact_id)
        moved = self._moved
        if moved is not None:
            for mark in moved.added:
                if mark[0] == fact_id:
                    return FactMark(*mark)
            if fact_id in moved.before:
                return None  # held before, by a file re-read: gone
        saved = self.reader.mark(fact_id)
        return None if saved is None else FactMark(fact_id, *saved)

    def digest(self) -> str:
        """The digest of ``marks()`` (read without decoding them)."""
        return str(self._meta["marks_digest"])

    def masked(self) -> frozenset[str]:
        """Ids of global facts an equivalent project fact overrides, as saved."""
        return frozenset(self._meta["masked"])

    def fact(self, fact_id: str) -> Fact:
        """One fact by id, from its saved record."""
        now = self._moved.now.get(fact_id) if self._moved is not None else None
        if now is not None:  # a fact just re-read: no need to decode every mark
            return self.recaller._tracker.facts[now]
        return self.recaller._tracker.facts[self.marks()[fact_id].reference]

    def unchanged(self, paths: EnginePaths) -> bool:
        """Whether the stores still list exactly what the state was saved under."""
        listings = scan_listings(paths)
        if self._listing is None and self._meta.get(LISTING_SUM) == UNKNOWN_SUM:
            # Brought up by the monitor's word: the listing it stands for, compared whole.
            held = self._listings
            return held is not None and all(
                dict(a) == b for a, b in zip(held, listings, strict=True))
        now = listing_bytes(listings)
        if self._listing is not None:
            return now == self._listing
        return listing_digest(now) == self._meta.get(LISTING_SUM)  # vouched: the saved one


def open_quiet(
    paths: EnginePaths,
    materialize: Callable[[], Sequence[Fact]],
    may_write: bool = False,
    scanned: tuple[tuple[Listing, Listing], int] | Probe | None = None,
) -> QuietFacts | None:
    """The facts of a saved state the stores still vouch for, or ``None`` (read them).

    ``may_write``: once the files that had not settled are verified and have settled since,
    say so in the state (a hook may; a read-only command writes nothing). ``scanned``: the
    listings just taken and when their scan began, or a ``Probe`` that asks the store
    monitor first (facts/probe.py; else scanned here).
    """
    probe = scanned if isinstance(scanned, Probe) else None
    scan = None if isinstance(scanned, Probe) else scanned
    reader = StateFile(recall_cache_path(paths)).open()
    if reader is None:
        return None
    opened_ns = time.time_ns()  # before the saved token is read (``_kept_token``)
    try:
        meta = reader.meta("version", "code", "roots", LISTING_SUM, "marks_digest", "masked",
                           "skipped", "failed", "count", "unsettled", MONITOR)
        saved = meta.get(LISTING_SUM)
        if (
            meta.get("version") != VERSION
            or meta.get("code") != code_tag()
            or meta.get("roots") != _roots(paths)
            or "marks_digest" not in meta
        ):
            reader.close()
            return None
        named: list[tuple[int, str]] | None = None
        if probe is not None:
            # The validation step: the monitor's word since the token saved with this state.
            scan, named, listing = _validated(probe, meta, saved, reader)
        else:
            if scan is None:
                scan = (scan_listings(paths), time.time_ns())
            listing = listing_bytes(scan[0])
        listings = None if scan is None else scan[0]
        if named is not None:  # the monitor's word: what it named moved, nothing else
            current, moved = saved, bool(named)
        else:
            assert listing is not None  # walked
            current = listing_digest(listing)
            moved = saved is None or current != saved
        if moved or not _still_saved(paths, reader, list(meta.get("unsettled", ()))):
            # A few files changed: the saved state brought up to them, else the full read.
            from .delta import brought_up

            if scan is None:  # vouched, but a file that had not settled changed
                scan = (_saved_listings(reader), time.time_ns())
            token = _kept_token(probe, meta, scan, opened_ns)
            view = brought_up(paths, reader, meta, scan, materialize, may_write,
                              named=named, monitor=token, listing=listing,
                              listing_sum=UNKNOWN_SUM if moved and listing is None else current)
            if view is None:
                reader.close()
            return view
        settle: dict[str, object] = {}
        unsettled = list(meta.get("unsettled", ()))
        if unsettled and may_write:
            started = scan[1] if scan is not None else time.time_ns()
            # Every other file had settled before the save's read began: only these can not.
            held = listings if listings is not None else _saved_listings(reader)
            now = ({}, {})  # type: tuple[Listing, Listing]
            for scope, name, _ in unsettled:
                si = 0 if scope == "project" else 1
                identity = held[si].get(name)
                if identity is not None:
                    now[si][name] = identity
            if stat_listing.listing_settled(now, started):
                # Verified by content, and settled before that check began: trusted from now.
                settle["unsettled"] = []
        if may_write and probe is not None and probe.worth_recording(meta.get(MONITOR)):
            settle[MONITOR] = probe.token  # listed in full after the token was taken
        if settle:
            StateFile(recall_cache_path(paths)).update_meta(settle, reader.seen)
        recaller = saved_recaller(reader, meta)
    except (sqlite3.Error, EOFError, ValueError, TypeError, KeyError):
        reader.close()
        return None
    held = listings if listings is not None else _saved_listings(reader)
    return QuietFacts(reader, recaller, meta, listing, materialize, listings=held)


def _kept_token(
    probe: Probe | None,
    meta: dict[str, Any],
    scan: tuple[tuple[Listing, Listing], int],
    opened_ns: int,
) -> object:
    """The monitor token to save with a state brought up to ``scan``'s listings.

    The probe's own token when the monitor answered. Without an answer (turned off, not
    running) the saved token still vouches for a walk that began after it was read: the
    monitor names every entry changed since it, a superset of those changed since the walk,
    and each named entry is compared with the listing saved here. Dropping it instead makes
    the next process the monitor answers walk every store once more (100k ``lstat``).
    """
    token = probe.token if probe is not None else None
    if token is None and scan[1] >= opened_ns:
        return meta.get(MONITOR)
    return token


class SavedStore(Mapping[str, "Identity"]):
    """One store's saved listing, each entry read from its row when asked for
    (``StateReader.listed``); walked whole, the whole saved listing is decoded once."""

    def __init__(self, reader: StateReader, si: int) -> None:
        self._reader = reader
        self._si = si
        self._whole: Listing | None = None

    def __getitem__(self, name: str) -> Identity:
        identity = self._reader.listed(self._si, name) if self._whole is None else (
            self._whole.get(name))
        if identity is None:
            raise KeyError(name)
        return identity

    def _all(self) -> Listing:
        if self._whole is None:
            listings = self._reader.saved_listings()
            if listings is None:
                raise ValueError("no saved listing")
            self._whole = listings[self._si]
        return self._whole

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _saved_listings(reader: StateReader) -> tuple[Listing, Listing]:
    """Both stores' saved listings, read per entry (``SavedStore``) as plain-dict listings."""
    from ..facts.probe import Over

    return Over(SavedStore(reader, 0)), Over(SavedStore(reader, 1))


def _validated(
    probe: Probe, meta: dict[str, Any], saved: object, reader: StateReader
) -> tuple[
    tuple[tuple[Listing, Listing], int] | None, list[tuple[int, str]] | None, bytes | None
]:
    """(the listings now and when taken — ``None``: exactly the saved ones —, the entries
    the monitor named that differ — ``None``: not known —, the listing's bytes — ``None``:
    the saved listing's, whose digest ``saved`` is)."""
    answer = probe.ask(meta.get(MONITOR))
    if answer is None or not isinstance(saved, str) or all(a is None for a in answer):
        scanned = probe.scanned()  # no monitor, or it knows nothing: today's walk
        return scanned, None, listing_bytes(scanned[0])
    if probe.vouched():
        return None, [], None  # nothing changed since the token: not one lstat
    # Only the named entries are looked up in the saved listing (and lstat-ed): the listing's
    # bytes and digest are not made (``UNKNOWN_SUM``) — O(files) at every change otherwise.
    patched = probe.patched((SavedStore(reader, 0), SavedStore(reader, 1)))
    assert patched is not None  # an answer was given
    scanned, named = patched
    return scanned, named, None


def saved_recaller(reader: StateReader, meta: dict[str, Any]) -> Recaller:
    """The saved index and pool tables, each read only as far as a turn asks."""
    indexes = {}
    for name in (POOL, SHADOWED, PREFIX):
        keys, free, arrays, total = reader.index(name)
        indexes[name] = SparseIndex.lazy(keys, free, reader.postings(name), arrays, total)
    failed = {
        str(ref): TraceSkip(code=str(code), file=str(file), message=str(message))
        for ref, (code, file, message) in dict(meta["failed"]).items()
    }
    recaller = Recaller.restored(_SavedTracker(reader), indexes, failed)
    recaller._skipped = tuple(
        TraceSkip(code=str(c), file=str(f), message=str(m)) for c, f, m in meta["skipped"]
    )
    recaller.stats.restored = int(meta["count"])
    return recaller
