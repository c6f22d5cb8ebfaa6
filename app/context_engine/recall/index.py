"""An incremental sparse inverted index with exact S8.6 BM25 scoring.

Postings are one ``array('i')`` per term holding interleaved ``(slot, tf)`` pairs: 8 bytes a
posting and one Python object a term, so 100,000 facts fit in well under 300 MB. Adding or
removing one fact touches only that fact's terms; nothing is re-tokenized. The per-slot values
are ``array`` module arrays too, so the index needs no NumPy to exist, load or answer.

Scoring takes one of two exact paths (equal floats, bit for bit; a test compares them): a plain
Python pass over the query terms' postings when they are few (a hook process answers without
paying ~0.2 s to import NumPy), else NumPy: the postings concatenated (views, no copy per term)
and accumulated per slot with ``np.bincount``. Where NumPy is loaded, a query of few postings in
a large index takes a third exact path, over dicts of the touched slots only; a query none of
whose terms found could let a document through the gate is not scored at all.
"""

from __future__ import annotations

import functools
import math
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate, compress
from typing import TYPE_CHECKING, Any, NamedTuple, cast

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    IntArray = npt.NDArray[np.int64]
else:
    FloatArray = IntArray = Any
# One column of a ``Scored``: a NumPy array (NumPy path) or an ``array`` (plain path).
Column = Any
# A query term found in the index: its position in the query, the term, its unpacked posting
# (interleaved (slot, tf) pairs, or ``None``), its packed number and pair count (-1, 0: none).
Used = tuple[int, str, "array[int] | None", int, int]

K1 = 1.2
B = 0.75

NO_TIME = 2**63 - 1  # "never": not stale, sorts as oldest via OLDEST
OLDEST = -(2**62)
MASK_TERMS = 52  # query terms tracked in the per-document matched-term bitmask
# Up to this many postings across the query terms, the plain Python scorer runs (about as fast
# as NumPy's import alone); above it, NumPy. Only speed differs, never a result.
PYTHON_POSTINGS = 60_000
# Up to this many postings, and fewer than one a ``SPARSE_SHARE``-th of the slots, a query is
# scored in plain Python over dicts even where NumPy is loaded: NumPy's path makes arrays of
# one value per slot (several passes over 100,000 slots for a query of a handful of postings).
SPARSE_POSTINGS = 4_096
# NumPy's gate looks each document's pattern of found terms up in a table when a query finds
# at most this many terms (2^12 entries).
TABLE_TERMS = 12
# NumPy's scorer takes a term's pairs this many at a time (its temporaries then stay in cache).
CHUNK_PAIRS = 16_384
SPARSE_SHARE = 8
TOMBS = 64  # removals kept as tombstones (at least; N/32 in a large index) before a purge
ABSENT_TERMS = 65_536  # terms remembered as missing from frozen postings (then it starts over)

# Per-slot arrays: name → typecode (float64, bool as a byte, int64 × 3), in export order.
_PER_SLOT = (
    ("_length", "d"), ("_project", "b"), ("_fresh", "q"), ("_stale_after", "q"), ("_updated", "q"),
)


_NUMPY: list[Any] = []  # NumPy once imported: a turn asks for it a dozen times


def _numpy() -> Any:
    """NumPy, imported on first use (never on the plain path)."""
    if not _NUMPY:
        from ..short_process import import_numpy  # without BLAS threads in a short process

        _NUMPY.append(import_numpy())
    return _NUMPY[0]


# A process's first few scorings take the plain path (a hook answers one turn: two scorings,
# the pool and the shadowed globals); a process that keeps scoring is a long-lived host, for
# which NumPy's import (~0.2 s, once) buys ~10× faster turns.
PLAIN_SCORINGS = 6
_scorings = [0]


def use_python(postings: int) -> bool:
    """Whether a query over ``postings`` pairs takes the plain Python path.

    Small and early queries do, until NumPy is loaded (a long-lived host), then it answers.
    """
    if "numpy" in sys.modules or postings > PYTHON_POSTINGS:
        return False
    _scorings[0] += 1
    return _scorings[0] <= PLAIN_SCORINGS


def _tombstones() -> bool:
    """Whether a removal leaves a tombstone (NumPy loaded: a long-lived host) instead of
    searching each of the document's postings for its slot."""
    return "numpy" in sys.modules


def use_sparse(postings: int, slots: int) -> bool:
    """Whether a query over ``postings`` pairs in an index of ``slots`` slots is scored over
    dicts (only the touched slots) rather than per-slot arrays. Only speed differs."""
    return postings <= SPARSE_POSTINGS and postings * SPARSE_SHARE <= slots


def gate_possible(
    present: Sequence[str],
    strong: frozenset[str] | None,
    ignored: frozenset[str],
    weak: frozenset[str],
) -> bool:
    """Whether any document could pass the gate given the query terms found in the index.

    A document passes with two counted terms one of which is specific (neither ignored nor
    weak), or with one counted term that passes alone; without such terms among those
    present, no document can, and nothing needs scoring.
    """
    counted = [t for t in present if t not in ignored]
    if any(strong is None or t in strong for t in counted):
        return True
    return len(counted) >= 2 and any(t not in weak for t in counted)


def idf(n: int, df: int) -> float:
    """S8.6 idf: ln(1 + (N − df + 0.5) / (df + 0.5))."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


class IndexCounters:
    """How the index changed: lets tests prove a change did not rebuild everything."""

    __slots__ = ("adds", "removes")  # a plain class: defined by every hook process

    def __init__(self, adds: int = 0, removes: int = 0) -> None:
        self.adds = adds
        self.removes = removes


class DocMeta(NamedTuple):
    """Per-fact values the vectorised scorer needs besides the postings."""

    project: bool = False
    fresh_us: int = NO_TIME  # freshness timestamp in µs since the epoch, NO_TIME when unset
    stale_after_us: int = 0  # age beyond which the fact is stale
    updated_us: int = OLDEST  # ``updated_at`` for the tie order


class Scored:
    """Gate-passing slots, raw BM25 score, matched-term count and bitmask (bit j = term j).

    NumPy arrays from the NumPy path, ``array`` module arrays from the plain one; both index,
    ``len`` and ``tolist`` alike. NumPy's table gate leaves the counts and bitmasks as each
    slot's pattern of found terms and two small tables, looked up for the rows asked for
    (``rank`` reads the bitmasks of a dozen candidates out of tens of thousands).
    """

    __slots__ = ("_bits", "_counts", "_matched", "_order", "_pattern", "scores", "slots")

    def __init__(
        self,
        slots: Column,
        scores: Column,
        matched: Column = None,
        bits: Column = None,
        *,
        pattern: Any = None,
        counts: Any = None,
        order: Any = None,
    ) -> None:
        self.slots = slots
        self.scores = scores
        self._matched = matched
        self._bits = bits
        # Per slot, which of the found terms it holds (bit k = the k-th found term); the
        # tables map a pattern to its counted matches and its query-order bitmask.
        self._pattern = pattern
        self._counts = counts
        self._order = order

    @property
    def plain(self) -> bool:
        """Whether the plain Python path produced these."""
        return isinstance(self.slots, array)

    @property
    def matched(self) -> Column:
        """Each row's number of counted query terms matched."""
        if self._matched is None:
            self._matched = self._counts[self._pattern[self.slots]]
        return self._matched

    @property
    def bits(self) -> Column:
        """Each row's matched-term bitmask (bit j = query term j)."""
        if self._bits is None:
            self._bits = self._order[self._pattern[self.slots]]
        return self._bits

    def bits_at(self, rows: Sequence[int]) -> list[int]:
        """The bitmasks of ``rows`` only, as Python ints."""
        if self.plain:
            return [self.bits[i] for i in rows]
        if self._bits is None:
            return cast(list[int], self._order[self._pattern[self.slots[rows]]].tolist())
        return cast(list[int], self._bits[rows].tolist())


# Lookups a restored index's key table answers by scanning, then it is built: a cold turn
# applying one changed file asks two; a long-lived host applying change after change builds
# it at its third change (~13 ms once at 10^5, then ~1 ms less per change).
_LAZY_SCANS = 4


class _LazySlots(dict[str, int]):
    """key → slot of a restored index, built on first use; its size is known before.

    A cold turn over a saved state asks the index its size (N, avgdl) and the keys of the slots
    it ranks, never a key's slot: 100,000 restored keys would cost a dict built for nothing.
    The keys are written by ``export`` from a ``_slot_of``, so they are unique.
    """

    __slots__ = ("_count", "_pending", "_scans")

    def __init__(self, keys: list[str | None]) -> None:
        super().__init__()
        self._pending: list[str | None] | None = keys
        self._count = len(keys) - keys.count(None)
        self._scans = 0

    def _built(self) -> dict[str, int]:
        keys, self._pending = self._pending, None
        if keys is not None:  # at C speed (a comprehension: ~1.4× the time at 10^5)
            table = cast("dict[str | None, int]", self)
            dict.update(table, zip(keys, range(len(keys)), strict=True))
            dict.pop(table, None, None)  # the free slots
        return self

    def __len__(self) -> int:
        return self._count if self._pending is not None else dict.__len__(self)

    # A cold turn applying one changed fact asks for one or two keys: while the table is not
    # built, a key's slot is found in the slot keys list itself (C speed, ~1 ms at 10^5) —
    # the same list the index keeps current, so it always holds the truth. Past
    # ``_LAZY_SCANS`` lookups (a long-lived host applying change after change) the table is
    # built once (~8 ms at 10^5) and each later lookup is a dict's.

    def _lazy(self) -> bool:
        """Whether a lookup is to scan the slot keys (else the table is built)."""
        if self._pending is None:
            return False
        self._scans += 1
        if self._scans <= _LAZY_SCANS:
            return True
        self._built()
        return False

    def _find(self, key: object) -> int:
        pending = self._pending
        assert pending is not None
        if not isinstance(key, str):
            return -1
        try:
            return pending.index(key)
        except ValueError:
            return -1

    def __contains__(self, key: object) -> bool:
        if self._lazy():
            return self._find(key) >= 0
        return dict.__contains__(self, key)

    def __getitem__(self, key: str) -> int:
        if self._lazy():
            at = self._find(key)
            if at < 0:
                raise KeyError(key)
            return at
        return dict.__getitem__(self, key)

    def __setitem__(self, key: str, slot: int) -> None:
        pending = self._pending
        if pending is not None and 0 <= slot < len(pending) and pending[slot] == key:
            self._count += 1  # the index put ``key`` in its slot first (``add``)
            return
        dict.__setitem__(self._built(), key, slot)

    def __delitem__(self, key: str) -> None:
        dict.__delitem__(self._built(), key)

    def __iter__(self) -> Iterator[str]:
        return dict.__iter__(self._built())

    def get(self, key: str, default: Any = None) -> Any:
        if self._lazy():
            at = self._find(key)
            return default if at < 0 else at
        return dict.get(self, key, default)

    def pop(self, key: str, *default: Any) -> Any:
        """The slot of ``key``, forgotten. While not built, the caller clears the key's entry
        in the slot keys (``SparseIndex._release``): until then the list still names it."""
        if self._lazy():
            at = self._find(key)
            if at < 0:
                if default:
                    return default[0]
                raise KeyError(key)
            self._count -= 1
            return at
        return dict.pop(self, key, *default)

    def keys(self) -> Any:
        return dict.keys(self._built())

    def values(self) -> Any:
        return dict.values(self._built())

    def items(self) -> Any:
        return dict.items(self._built())

    def copy(self) -> dict[str, int]:
        return dict(self._built())

    def __eq__(self, other: object) -> bool:
        return dict.__eq__(self._built(), other)

    __hash__ = None


# A bulk build of at least this many documents packs its postings (``_Packed``); a smaller one
# keeps one array per term (no NumPy import for a small build). Only memory and speed differ.
PACK_DOCS = 2_000
_PACK_SLOTS = 1 << 23  # slots a packed pair can name: slot << 8 | tf must fit an int32
_WIDE_TF = 255  # a term with a tf this large in some document keeps an unpacked posting
KNOWN_TERMS = 8_192  # packed terms' numbers remembered (then it starts over)


class _Packed:
    """The postings of a bulk build in one array, 4 bytes a pair and no object per term.

    A pair is ``slot << 8 | tf`` (an int32); a term's pairs are ``pairs[start : start +
    count]``, in slot order as built. The terms are UTF-8 in one ``bytes`` (``off`` bounds
    each), found through an open-addressing table of their hashes: at 100,000 facts ~200,000
    terms cost ~6 MB instead of a string, a dict entry and an array each (~30 MB), and the
    pairs half the interleaved (slot, tf) int32 pairs. Built with NumPy, which is then loaded:
    every operation on it uses NumPy. Changes after the build live beside it (the index's
    per-term arrays); a removed pair is swapped with its range's last (``count`` shrinks).
    """

    __slots__ = ("_words", "blob", "count", "known", "mask", "off", "pairs", "start", "table")

    def __init__(self) -> None:
        self.blob = b""
        # Terms looked up lately → number (-1: absent): a host's queries and changes touch the
        # same common terms again and again (a lookup in ``table`` costs ~6× a dict's).
        self.known: dict[str, int] = {}
        self.off: array[int] = array("q", (0,))
        self.table: array[int] = array("i", (-1,))
        self.mask = 0
        self.start: array[int] = array("q")
        self.count: array[int] = array("i")
        self.pairs: array[int] = array("i")
        # ``pairs`` as one NumPy array, made on first use (``pairs`` is filled once, in
        # ``made``, and never resized): a term's range is then a slice, not a new buffer
        # export (~8 µs each, four or more a turn).
        self._words: Any = None

    @classmethod
    def build(
        cls, terms: Sequence[str], ids: array[int], tfs: array[int], sizes: array[int]
    ) -> _Packed:
        """Pack document-major pairs: ``ids``/``tfs`` hold each document's (term number, tf)
        in slot order, ``sizes`` how many each slot has; ``terms`` name the term numbers."""
        np = _numpy()
        term_ids = np.frombuffer(ids, dtype=np.int32)
        per_slot = np.frombuffer(sizes, dtype=np.int32)
        words = np.repeat(np.arange(len(sizes), dtype=np.int32), per_slot) << 8
        words |= np.frombuffer(tfs, dtype=np.uint8)
        order = np.argsort(term_ids, kind="stable")  # stable: each term's pairs in slot order
        words = words[order]
        del order
        return cls.made(terms, words, np.bincount(term_ids, minlength=len(terms)))

    @classmethod
    def made(cls, terms: Sequence[str], words: Any, counts: Any) -> _Packed:
        """The packed postings of ``terms`` whose pairs are ``words`` (NumPy int32, term by
        term), ``counts[i]`` of them for ``terms[i]``."""
        np = _numpy()
        packed = cls()
        width = len(terms)
        starts = np.zeros(width, dtype=np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        packed.pairs.frombytes(words.tobytes())
        del words
        packed.start.frombytes(starts.tobytes())
        packed.count.frombytes(counts.astype(np.int32).tobytes())
        encoded = [term.encode("utf-8", "surrogatepass") for term in terms]
        packed.off = array("q", (0,))
        packed.off.extend(accumulate(map(len, encoded)))
        packed.blob = b"".join(encoded)
        del encoded
        size = 8
        while size < 2 * width:
            size *= 2
        table = array("i", (-1,)) * size
        mask = size - 1
        for tid, term in enumerate(terms):
            at = hash(term) & mask
            while table[at] >= 0:
                at = (at + 1) & mask
            table[at] = tid
        packed.table, packed.mask = table, mask
        return packed

    def find(self, term: str) -> int:
        """The term's number, or -1."""
        known = self.known
        tid = known.get(term)
        if tid is not None:
            return tid
        table, mask, off, blob = self.table, self.mask, self.off, self.blob
        at = hash(term) & mask
        encoded = None
        while True:
            tid = table[at]
            if tid < 0:
                break
            if encoded is None:
                encoded = term.encode("utf-8", "surrogatepass")
            if blob[off[tid] : off[tid + 1]] == encoded:
                break
            at = (at + 1) & mask
        if len(known) >= KNOWN_TERMS:
            known.clear()
        known[term] = tid
        return tid

    def term(self, tid: int) -> str:
        """The term numbered ``tid``."""
        return self.blob[self.off[tid] : self.off[tid + 1]].decode("utf-8", "surrogatepass")

    def view(self, tid: int) -> Any:
        """The term's live pairs as a writable NumPy view (non-empty ranges only)."""
        words = self._words
        if words is None:
            words = self._words = _numpy().frombuffer(self.pairs, dtype=_numpy().int32)
        start = self.start[tid]
        return words[start : start + self.count[tid]]

    def columns(self, tid: int) -> tuple[list[int], list[int]]:
        """The term's slots and tfs as lists (the plain scorers' input)."""
        words = self.view(tid)
        return (words >> 8).tolist(), (words & 0xFF).tolist()

    def remove(self, tid: int, slot: int) -> bool:
        """Take ``slot``'s pair out of the term's range; whether it was there."""
        np = _numpy()
        words = self.view(tid)
        found = np.flatnonzero((words >> 8) == slot)
        if not len(found):
            return False
        last = len(words) - 1
        words[int(found[0])] = words[last]
        self.count[tid] = last
        return True

    def purge(self, tid: int, buried: Any) -> None:
        """Keep only the term's pairs whose slot ``buried`` (one bool per slot) leaves out."""
        words = self.view(tid)
        kept = words[~buried[words >> 8]]
        words[: len(kept)] = kept
        self.count[tid] = len(kept)

    def interleaved(self) -> tuple[memoryview, array[int], array[int]]:
        """Every range as interleaved (slot, tf) int32 pairs (the saved format; bytes, not
        copied once more), with the ranges' starts and counts in pairs."""
        np = _numpy()
        words = np.frombuffer(self.pairs, dtype=np.int32)
        pairs = np.empty(2 * len(words), dtype=np.int32)
        pairs[0::2] = words >> 8
        pairs[1::2] = words & 0xFF
        return memoryview(pairs).cast("B"), self.start, self.count

    def nbytes(self) -> int:
        """Bytes held (arrays and the term text)."""
        held = (self.off, self.table, self.start, self.count, self.pairs)
        return len(self.blob) + sum(a.buffer_info()[1] * a.itemsize for a in held)


class SparseIndex:
    """Inverted index over keyed documents; ``add``/``remove`` cost O(terms of one doc)."""

    # A plain class (no dataclass to define in every hook process); every attribute is set
    # in ``__init__``.
    __slots__ = (
        "_absent", "_boost_np", "_dead", "_deferred", "_dirty", "_free", "_fresh",
        "_frozen", "_gone", "_keys", "_length", "_norm", "_norm_np", "_packed", "_patches",
        "_postings", "_project", "_slot_of", "_stale_after", "_tomb", "_tomb_np",
        "_touched", "_updated", "counters", "total_length"
    )

    def __init__(self) -> None:
        """An empty index."""
        self.counters: IndexCounters = IndexCounters()
        self._slot_of: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._free: list[int] = []
        self._postings: dict[str, array[int]] = {}
        # A bulk build's postings, packed (``add_many``); ``_postings`` then holds what changed
        # since: new terms, and the pairs added to packed ones. A term's posting is its packed
        # range followed by its array there. Never beside frozen postings.
        self._packed: _Packed | None = None
        # Postings restored from disk and not touched yet (term → raw bytes): a hook turn reads a
        # handful of ~20,000 terms, so each becomes an array only when first used (``_thaw``).
        # A mapping, not always a dict: the recall state (recall/state.py) hands in a read-only
        # view that fetches one term's bytes from its database on ``get``.
        self._frozen: Mapping[str, bytes] = {}
        # While postings are frozen, a change copies out only the terms it touches: ``_gone`` are
        # frozen terms whose posting emptied, ``_dirty`` every term changed (what a delta of the
        # saved state writes, recall/delta.py).
        self._gone: set[str] = set()
        self._dirty: set[str] = set()
        # Terms the frozen postings were asked for and do not hold: a host asks for the same
        # words every turn, and each miss was a database lookup (~1 ms at 100,000 facts).
        self._absent: set[str] = set()
        # Removed while NumPy is loaded (a long-lived host): the slot is a tombstone and its pairs
        # stay in the postings of its terms (``_dead`` counts them per term) until ``_purge``
        # filters them out in one vectorised pass per term; scoring never lets a tombstone
        # through and ``df`` subtracts the dead pairs. Searching a posting for one slot costs
        # O(df) per term (~150 terms of 40,000 pairs for one fact of the 100k bench store).
        self._dead: dict[str, int] = {}
        self._tomb: set[int] = set()
        self._tomb_np: Any = None
        # A lazily restored index also keeps, per changed term, the slots taken out of and the
        # (slot → tf) put into the posting it was restored with, and every slot changed: a delta
        # then writes patches of the few changed facts' terms and slots, never whole postings or
        # per-slot arrays (``None``: not tracked, a built or fully restored index). A tombstone
        # counts as taken out when it is buried.
        self._patches: dict[str, tuple[set[int], dict[int, int]]] | None = None
        self._touched: set[int] = set()
        # Frozen terms a change touched without reading their postings (a lazily restored index):
        # the posting is the restored one with ``_patches[term]`` applied, done when it is first
        # read. A cold turn applying one changed fact so never fetches its terms' postings (tens
        # of thousands of pairs each at 10^5 facts), only the query's.
        self._deferred: set[str] = set()
        self._length: array[float] = array("d")
        self._project: array[int] = array("b")
        self._fresh: array[int] = array("q")
        self._stale_after: array[int] = array("q")
        self._updated: array[int] = array("q")
        self.total_length: int = 0
        # k1·(1 − b + b·dl/avgdl) per slot for one avgdl (a list, or NumPy's array); dropped on
        # every add/remove.
        self._norm: tuple[float, Any] | None = None
        self._norm_np: tuple[float, Any] | None = None
        # Per slot, the project boost factor (1.0 or the boost) and the first microsecond at which
        # the fact is stale (NumPy arrays, for ``boosted_np``); dropped with the norms.
        # Per boost: each slot's boost, the first ``now`` it is stale at, the boost when all
        # slots share one, and the stale flags for a span of ``now`` (``_stale_at``).
        self._boost_np: tuple[float, Any, Any, float | None, list[Any]] | None = None

    def __len__(self) -> int:
        """Number of indexed documents (N)."""
        return len(self._slot_of)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is indexed."""
        return key in self._slot_of

    @property
    def avgdl(self) -> float:
        """Average document length over the indexed documents."""
        return self.total_length / len(self._slot_of) if self._slot_of else 0.0

    def _posting(self, term: str) -> array[int] | None:
        """The posting of ``term`` (thawed from its restored bytes on first use)."""
        posting = self._postings.get(term)
        if posting is None and self._frozen and term not in self._gone:
            if term in self._deferred:
                return self._thaw_deferred(term)
            if term in self._absent:
                return None
            blob = self._frozen.get(term)
            if blob is not None:
                posting = array("i")
                posting.frombytes(blob)
                self._postings[term] = posting
            else:
                if len(self._absent) >= ABSENT_TERMS:
                    self._absent.clear()
                self._absent.add(term)  # a later ``add`` puts it in ``_postings``, seen first
        return posting

    def _thaw_deferred(self, term: str) -> array[int] | None:
        """A deferred term's posting: the restored one with its patch applied (now thawed)."""
        assert self._patches is not None
        self._deferred.discard(term)
        blob = None if term in self._absent else self._frozen.get(term)
        self._absent.discard(term)
        removed, added = self._patches.get(term, (set(), {}))
        posting = array("i")
        if blob:
            posting.frombytes(blob)
        if len(removed) > 64:  # many: one pass (posting order carries no meaning)
            kept = array("i")
            for i in range(0, len(posting), 2):
                if posting[i] not in removed:
                    kept.append(posting[i])
                    kept.append(posting[i + 1])
            posting = kept
        else:
            for slot in removed:  # a few: each found at C speed
                at = _find_slot(posting, slot)
                if at >= 0:
                    del posting[at : at + 2]
        for slot, tf in added.items():
            posting.append(slot)
            posting.append(tf)
        if not posting:
            self._gone.add(term)
            return None
        self._postings[term] = posting
        return posting

    def _thaw_all_deferred(self) -> None:
        """Every deferred term's posting read and patched (before a walk over the postings)."""
        for term in list(self._deferred):
            self._posting(term)

    def _thaw(self) -> None:
        """Every restored posting as an array, in the saved order (before anything iterates or
        changes them); until then ``_postings`` holds only terms looked up, all in ``_frozen``."""
        self._purge()
        self._thaw_all_deferred()
        if self._frozen:
            frozen, gone, touched = self._frozen, self._gone, self._postings
            thawed = {
                term: self._posting(term) or array("i") for term in frozen if term not in gone
            }
            thawed.update((t, p) for t, p in touched.items() if t not in thawed)
            self._postings = thawed
            self._frozen = {}
            self._gone = set()
            self._absent = set()

    def df(self, term: str) -> int:
        """Number of documents containing ``term``."""
        posting = self._posting(term)
        size = 0 if posting is None else len(posting) // 2
        if self._packed is not None:
            size += self._base(term)[1]
        elif posting is None:
            return 0
        return size - self._dead.get(term, 0) if self._dead else size

    def _base(self, term: str) -> tuple[int, int]:
        """The term's number in the packed postings and its pair count there (-1, 0: none)."""
        packed = self._packed
        if packed is None:
            return -1, 0
        tid = packed.find(term)
        return (tid, packed.count[tid]) if tid >= 0 else (-1, 0)

    def key(self, slot: int) -> str:
        """The key stored in ``slot``."""
        key = self._keys[slot]
        if key is None:
            raise KeyError(slot)
        return key

    def length(self, key: str) -> int:
        """Token count of an indexed document."""
        return int(self._length[self._slot_of[key]])

    def _grow(self, size: int) -> None:
        """Make every per-slot array hold at least ``size`` slots (zeros beyond the used ones)."""
        cap = len(self._length)
        if size <= cap:
            return
        more = max(size, cap * 2, 16) - cap
        for name, code in _PER_SLOT:
            getattr(self, name).extend(array(code, bytes(more * array(code).itemsize)))

    def add(self, key: str, counts: Mapping[str, int], meta: DocMeta) -> None:
        """Index one document given its term counts; a document with no terms is skipped."""
        if key in self._slot_of:
            raise ValueError(f"already indexed: {key}")
        length = sum(counts.values())
        if length == 0:
            return
        if self._free:
            slot = self._free.pop()
            self._keys[slot] = key
        else:
            slot = len(self._keys)
            self._keys.append(key)
            self._grow(slot + 1)
        self._slot_of[key] = slot
        self._norm = self._norm_np = self._boost_np = None
        self._length[slot] = length
        self._project[slot] = meta.project
        self._fresh[slot] = meta.fresh_us
        self._stale_after[slot] = meta.stale_after_us
        self._updated[slot] = meta.updated_us
        self.total_length += length
        postings = self._postings
        frozen = bool(self._frozen)
        patches = self._patches
        defer = frozen and patches is not None
        for term, tf in counts.items():
            posting = postings.get(term)
            if posting is None and frozen:
                if defer and term not in self._gone:
                    self._deferred.add(term)  # the patch below is applied on first read
                    continue
                posting = self._posting(term)
            if posting is None:
                postings[term] = array("i", (slot, tf))
            else:
                posting.append(slot)
                posting.append(tf)
        if frozen:
            self._gone.difference_update(counts)
            self._dirty.update(counts)
        if patches is not None:
            self._touched.add(slot)
            for term, tf in counts.items():
                patch = patches.get(term)
                if patch is None:
                    patches[term] = patch = (set(), {})
                patch[1][slot] = tf
        self.counters.adds += 1

    def add_many(
        self, docs: Iterable[tuple[str, Mapping[str, int], DocMeta]], expected: int = 0
    ) -> None:
        """Index many documents as :meth:`add` would one by one, in one pass when empty.

        An empty index gets its postings appended straight to their arrays (lists of ints
        would hold ~2.5× the bytes at the peak) and its per-slot arrays filled in one go: same
        slots, postings and totals as ``add`` in order (a test compares the two), a fraction
        of the per-posting work. ``docs`` is consumed once: a generator keeps only one
        document's counts alive. When ``expected`` (the caller's count of ``docs``) reaches
        ``PACK_DOCS``, the postings are packed (``_Packed``): the same pairs in half the bytes.
        """
        self._thaw()
        if self._keys:
            for key, counts, meta in docs:
                self.add(key, counts, meta)
            return
        if PACK_DOCS <= expected < _PACK_SLOTS:
            self._add_packed(docs)
            return
        keys: list[str | None] = []
        lengths: list[int] = []
        metas: list[DocMeta] = []
        postings: dict[str, array[int]] = {}
        get = postings.get
        for slot, counts in self._admitted(docs, keys, lengths, metas):
            for term, tf in counts.items():
                posting = get(term)
                if posting is None:
                    postings[term] = array("i", (slot, tf))
                else:
                    posting.append(slot)
                    posting.append(tf)
        if not keys:
            return
        self._postings = postings
        self._set_built(keys, lengths, metas)

    def _admitted(
        self, docs: Iterable[tuple[str, Mapping[str, int], DocMeta]], keys: list[str | None],
        lengths: list[int], metas: list[DocMeta], most: int | None = None,
    ) -> Iterator[tuple[int, Mapping[str, int]]]:
        """Each non-empty document of a bulk build with its slot, recorded in ``_slot_of``,
        ``keys``, ``lengths`` and ``metas``; a key indexed twice (or past ``most`` slots)
        raises ``ValueError``."""
        slot_of = self._slot_of
        for key, counts, meta in docs:
            if key in slot_of:
                raise ValueError(f"already indexed: {key}")
            length = sum(counts.values())
            if length == 0:
                continue
            slot = len(keys)
            if most is not None and slot >= most:
                raise ValueError("too many documents to pack")
            slot_of[key] = slot
            keys.append(key)
            lengths.append(length)
            metas.append(meta)
            yield slot, counts

    def _set_built(self, keys: list[str | None], lengths: list[int], metas: list[DocMeta]) -> None:
        """The per-slot side of a bulk build (keys already in ``_slot_of``)."""
        self._keys = keys
        self._grow(len(keys))
        n = len(keys)
        self._length[:n] = array("d", lengths)
        self._project[:n] = array("b", [m.project for m in metas])
        self._fresh[:n] = array("q", [m.fresh_us for m in metas])
        self._stale_after[:n] = array("q", [m.stale_after_us for m in metas])
        self._updated[:n] = array("q", [m.updated_us for m in metas])
        self.total_length = sum(lengths)
        self._norm = self._norm_np = self._boost_np = None
        self.counters.adds += n

    def _add_packed(self, docs: Iterable[tuple[str, Mapping[str, int], DocMeta]]) -> None:
        """``add_many`` into an empty index with packed postings: each document's (term
        number, tf) pairs appended in slot order (5 bytes a pair), then grouped by term."""
        keys: list[str | None] = []
        lengths: list[int] = []
        metas: list[DocMeta] = []
        numbers: dict[str, int] = {}
        get = numbers.get
        ids: array[int] = array("i")
        tfs: array[int] = array("B")
        sizes: array[int] = array("i")
        wide: dict[int, dict[int, int]] = {}  # term number → slot → tf, for tf ≥ _WIDE_TF
        for slot, counts in self._admitted(docs, keys, lengths, metas, _PACK_SLOTS):
            for term, tf in counts.items():
                tid = get(term)
                if tid is None:
                    tid = numbers[term] = len(numbers)
                ids.append(tid)
                if tf >= _WIDE_TF:
                    wide.setdefault(tid, {})[slot] = tf
                    tf = _WIDE_TF
                tfs.append(tf)
            sizes.append(len(counts))
        if not keys:
            return
        terms = list(numbers)
        del numbers, get
        packed = _Packed.build(terms, ids, tfs, sizes)
        del ids, tfs, sizes
        for tid, big in wide.items():  # such terms keep an unpacked posting
            posting = array("i")
            for slot, tf in zip(*packed.columns(tid), strict=True):
                posting.append(slot)
                posting.append(big.get(slot, tf))
            packed.count[tid] = 0
            self._postings[terms[tid]] = posting
        self._packed = packed
        self._set_built(keys, lengths, metas)
        _return_freed_heap()

    def export(self) -> tuple[object, ...]:
        """The index as plain containers (for ``marshal``): keys, free slots, postings, arrays."""
        self._thaw()
        n = len(self._keys)
        terms, blobs = self._exported_postings()
        return (
            list(self._keys),
            list(self._free),
            terms,
            blobs,
            [a[:n].tobytes() for a in self._per_slot()],
            self.total_length,
        )

    def _exported_postings(self) -> tuple[list[str], list[bytes]]:
        """Every term and its posting as interleaved (slot, tf) int32 bytes: packed terms
        first (their range, then the pairs added since), then the other terms."""
        postings = self._postings
        packed = self._packed
        if packed is None:
            terms = list(postings)
            return terms, [postings[term].tobytes() for term in terms]
        raw, start, count = packed.interleaved()
        terms = []
        blobs = []
        done: set[str] = set()
        for tid in range(len(count)):  # in the build's order, as an unpacked build's dict
            size = count[tid]
            term = packed.term(tid)
            added = postings.get(term)
            if added is not None:
                done.add(term)
            elif not size:
                continue
            at = 8 * start[tid]
            blob = raw[at : at + 8 * size].tobytes() if size else b""
            terms.append(term)
            blobs.append(blob + added.tobytes() if added is not None else blob)
        for term, posting in postings.items():
            if term not in done:
                terms.append(term)
                blobs.append(posting.tobytes())
        return terms, blobs

    @classmethod
    def restore(cls, state: Sequence[object]) -> SparseIndex:
        """The index :meth:`export` described; raises ``ValueError``/``TypeError`` if malformed."""
        keys, free, terms, blobs, arrays, total = state
        if not (isinstance(keys, list) and isinstance(free, list) and isinstance(terms, list)):
            raise TypeError("malformed index state")
        if not (isinstance(blobs, list) and isinstance(arrays, list) and isinstance(total, int)):
            raise TypeError("malformed index state")
        index = cls()
        n = len(keys)
        index._keys = keys
        index._free = free
        index._slot_of = {key: slot for slot, key in enumerate(keys) if key is not None}
        frozen: dict[str, bytes] = {}
        size = array("i").itemsize
        for term, blob in zip(terms, blobs, strict=True):
            # What ``frombytes`` would refuse later is refused now: a bad file means a rebuild.
            if not isinstance(term, str) or not isinstance(blob, bytes) or len(blob) % size:
                raise ValueError("malformed posting")
            frozen[term] = blob
        if len(frozen) != len(terms):
            raise ValueError("duplicate posting term")
        index._frozen = frozen
        index._set_per_slot(n, arrays)
        index.total_length = total
        return index

    def _set_per_slot(self, n: int, blobs: Sequence[object]) -> None:
        """Per-slot arrays of ``n`` slots from their saved bytes (export order)."""
        if not isinstance(blobs, (list, tuple)) or len(blobs) != len(_PER_SLOT):
            raise TypeError("malformed per-slot arrays")
        for (name, code), blob in zip(_PER_SLOT, blobs, strict=True):
            if not isinstance(blob, bytes):
                raise TypeError("malformed per-slot array")
            values = array(code)
            if len(blob) % values.itemsize or len(blob) // values.itemsize != n:
                raise ValueError("per-slot array of the wrong size")
            values.frombytes(blob)
            setattr(self, name, values)

    @classmethod
    def lazy(
        cls,
        keys: list[str | None],
        free: list[int],
        postings: Mapping[str, bytes],
        arrays: Sequence[object],
        total: int,
    ) -> SparseIndex:
        """An index whose postings stay in ``postings`` until a term is looked up.

        ``postings`` may be a read-only view of a database (``recall/state.py``); any change
        to the index first copies every posting out of it (``_thaw``).
        """
        index = cls()
        index._keys = keys
        index._free = free
        index._slot_of = _LazySlots(keys)
        index._frozen = postings
        index._set_per_slot(len(keys), arrays)
        index.total_length = total
        index._patches = {}
        return index

    def _per_slot(self) -> tuple[array[Any], ...]:
        """The per-slot arrays, in export order."""
        return (self._length, self._project, self._fresh, self._stale_after, self._updated)

    def remove(self, key: str, terms: Iterable[str]) -> None:
        """Drop one document; ``terms`` are its distinct terms (re-derived from the old fact)."""
        slot = self._slot_of.pop(key, None)
        if slot is None:
            return
        postings = self._postings
        frozen = bool(self._frozen)
        patches = self._patches
        # A host: O(1) per term now, the pairs purged in bulk later; a lazily restored index
        # records the unread terms' patches instead (O(1) too, and nothing to purge).
        if _tombstones() and not (frozen and patches is not None):
            self._bury(slot, terms)
            return
        for term in terms:
            posting = postings.get(term)
            if posting is None and frozen:
                if term in self._gone:
                    continue
                if patches is not None:  # recorded only: applied when the posting is read
                    self._dirty.add(term)
                    self._deferred.add(term)
                    _patch_out(patches, term, slot)
                    continue
                posting = self._posting(term)
            if posting is None:
                self._packed_out(term, slot)
                continue
            if frozen:
                self._dirty.add(term)
            size = len(posting)
            if size == 2:
                if posting[0] == slot:
                    del postings[term]
                    if frozen:
                        self._gone.add(term)
                    if patches is not None:
                        _patch_out(patches, term, slot)
                else:
                    self._packed_out(term, slot)
                continue
            pos = _find_slot(posting, slot)
            if pos < 0:
                self._packed_out(term, slot)
                continue
            if patches is not None:
                _patch_out(patches, term, slot)
            # Swap-remove: posting order carries no meaning.
            last = size - 2
            if pos != last:
                posting[pos] = posting[last]
                posting[pos + 1] = posting[last + 1]
            del posting[last:]
        self._release(slot)
        self._free.append(slot)
        if patches is not None:
            self._touched.add(slot)

    def _packed_out(self, term: str, slot: int) -> None:
        """Take ``slot``'s pair out of ``term``'s packed range, if it is there."""
        if self._packed is not None:
            tid, size = self._base(term)
            if size:
                self._packed.remove(tid, slot)

    def _release(self, slot: int) -> None:
        """The per-slot side of a removal (the slot's postings are handled by the caller)."""
        self._norm = self._norm_np = self._boost_np = None
        self.total_length -= int(self._length[slot])
        self._length[slot] = 0
        self._keys[slot] = None
        self.counters.removes += 1

    def _bury(self, slot: int, terms: Iterable[str]) -> None:
        """``remove`` as a tombstone: each term's dead count goes up (a posting left with no
        live pair goes at once); the slot is reused only after ``_purge``."""
        postings, dead = self._postings, self._dead
        frozen = bool(self._frozen)
        packed = self._packed
        known = packed.known if packed is not None else {}
        tid = base = 0
        for term in terms:
            posting = self._posting(term) if frozen else postings.get(term)
            if packed is not None:  # ``_base`` inlined: ~150 terms a removal
                tid = known.get(term, -2)
                if tid == -2:
                    tid = packed.find(term)
                base = packed.count[tid] if tid >= 0 else 0
            if posting is None and not base:
                continue
            if frozen:
                self._dirty.add(term)
            if self._patches is not None:
                _patch_out(self._patches, term, slot)
            count = dead.get(term, 0) + 1
            if count >= base + (0 if posting is None else len(posting) // 2):  # none live left
                if posting is not None:
                    del postings[term]
                if base:
                    assert packed is not None
                    packed.count[tid] = 0
                dead.pop(term, None)
                if frozen:
                    self._gone.add(term)
            else:
                dead[term] = count
        self._release(slot)
        self._tomb.add(slot)
        if self._patches is not None:
            self._touched.add(slot)
        self._tomb_np = None
        if len(self._tomb) >= max(TOMBS, len(self._slot_of) // 32):
            self._purge()

    def _purge(self) -> None:
        """Filter every tombstone's pairs out of the postings and free the tombstones' slots."""
        if not self._tomb:
            return
        np = _numpy()  # tombstones exist only where NumPy is loaded
        buried = np.zeros(len(self._keys), dtype=np.bool_)
        buried[np.fromiter(self._tomb, dtype=np.intp, count=len(self._tomb))] = True
        postings = self._postings
        packed = self._packed
        for term in self._dead:
            posting = postings.get(term)
            if posting is not None:
                pairs = np.frombuffer(posting, dtype=np.int32).reshape(-1, 2)
                kept = pairs[~buried[pairs[:, 0]]].tobytes()
                del pairs  # release the buffer export before the posting is resized
                posting[:] = array("i", kept)
            if packed is not None:
                tid, base = self._base(term)
                if base:
                    packed.purge(tid, buried)
        self._dead = {}
        self._free.extend(sorted(self._tomb, reverse=True))
        self._tomb = set()
        self._tomb_np = None

    def _live(self, gate: Any) -> Any:
        """``gate`` (one bool per slot) with every tombstone turned off (NumPy)."""
        if self._tomb:
            if self._tomb_np is None:
                np = _numpy()
                self._tomb_np = np.fromiter(self._tomb, dtype=np.intp, count=len(self._tomb))
            gate[self._tomb_np] = False
        return gate

    def score(
        self,
        terms: Sequence[str],
        weights: Mapping[str, float],
        avgdl: float,
        strong: frozenset[str] | None,
        ignored: frozenset[str] = frozenset(),
        weak: frozenset[str] = frozenset(),
    ) -> Scored:
        """Raw BM25 of every document passing the gate.

        ``weights`` are the idf values to use (the caller decides which pool they come from);
        ``strong`` is the set of terms that pass alone, ``None`` for "any match passes";
        ``ignored`` terms score but do not count toward the gate; ``weak`` terms count only
        beside a term that is neither ignored nor weak.
        """
        used: list[Used] = []
        packed = self._packed is not None
        for j, term in enumerate(terms):
            posting = self._posting(term)
            tid, base = self._base(term) if packed else (-1, 0)
            if posting is not None or base:
                used.append((j, term, posting, tid, base))
        if not gate_possible([term for _, term, *_ in used], strong, ignored, weak):
            return Scored(array("q"), array("d"), array("q"), array("q"))
        postings = sum(base + (len(p) // 2 if p else 0) for _, _, p, _, base in used)
        if use_python(postings):
            return self._score_plain(used, weights, avgdl, strong, ignored, weak)
        if use_sparse(postings, len(self._keys)):
            return self._score_sparse(used, weights, avgdl, strong, ignored, weak)
        return self._score_numpy(used, weights, avgdl, strong, ignored, weak)

    def _columns(
        self, posting: array[int] | None, tid: int, base: int
    ) -> tuple[Sequence[int], Sequence[int]]:
        """A found term's slots and tfs (its packed range first): the plain scorers' input."""
        if not base:
            assert posting is not None
            return posting[0::2], posting[1::2]
        assert self._packed is not None
        slots, tfs = self._packed.columns(tid)
        if posting:
            slots.extend(posting[0::2])
            tfs.extend(posting[1::2])
        return slots, tfs

    def _score_plain(
        self,
        used: list[Used],
        weights: Mapping[str, float],
        avgdl: float,
        strong: frozenset[str] | None,
        ignored: frozenset[str],
        weak: frozenset[str],
    ) -> Scored:
        """``score`` in plain Python: the same operations, in the same order, per posting."""
        if not used or not avgdl:
            return Scored(array("q"), array("d"), array("q"), array("q"))
        norm = self._length_norm(avgdl)
        cap = len(self._keys)
        acc = [0.0] * cap
        bits = [0] * cap
        k1p = K1 + 1
        for j, term, posting, tid, base in used:
            w = weights[term]
            # C-level copies: the loops below touch one list each.
            slots, tfs = self._columns(posting, tid, base)
            # w·(tf·(k1+1)) / (tf + norm), NumPy's expression in the same order; each slot's
            # sum starts at 0.0 and adds the terms in query order, as bincount does.
            for slot, tf in zip(slots, tfs, strict=True):
                acc[slot] += w * (tf * k1p) / (tf + norm[slot])
            if j < MASK_TERMS:
                power = 1 << j
                for slot in slots:
                    bits[slot] |= power
        if used[-1][0] < MASK_TERMS:  # every term has its bit (``used`` is in query order)
            hit, matched = self._gate_plain_bits(used, bits, strong, ignored, weak)
        else:
            hit, matched = self._gate_plain_counts(used, cap, strong, ignored, weak)
        return Scored(
            slots=hit,
            scores=array("d", map(acc.__getitem__, hit)),
            matched=matched,
            bits=array("q", map(bits.__getitem__, hit)),
        )

    def _gate_plain_bits(
        self,
        used: list[Used],
        bits: list[int],
        strong: frozenset[str] | None,
        ignored: frozenset[str],
        weak: frozenset[str],
    ) -> tuple[array[int], array[int]]:
        """The gate-passing slots (ascending) and their matched-term counts, read off each
        document's matched-term bits, as NumPy's path does: a document's counted terms are
        the counted bits it holds (one pass per document, not three per posting)."""
        counted = solid = single = 0
        for j, term, *_ in used:
            if term not in ignored:
                counted |= 1 << j
                solid |= 0 if term in weak else 1 << j
                single |= 1 << j if strong is None or term in strong else 0
        hit = array("q")
        matched = array("q")
        tomb = self._tomb
        for slot in compress(range(len(bits)), bits):  # every slot some posting holds
            held = bits[slot]
            n = (held & counted).bit_count()
            if ((n >= 2 and held & solid) or (n == 1 and held & single)) and slot not in tomb:
                hit.append(slot)
                matched.append(n)
        return hit, matched

    def _gate_plain_counts(
        self,
        used: list[Used],
        cap: int,
        strong: frozenset[str] | None,
        ignored: frozenset[str],
        weak: frozenset[str],
    ) -> tuple[array[int], array[int]]:
        """``_gate_plain_bits`` for queries of more than ``MASK_TERMS`` terms, whose bits
        cannot hold every term: counted per posting."""
        count = [0] * cap
        specific = [0] * cap
        single = bytearray(cap)
        seen: set[int] = set()
        for _, term, posting, tid, base in used:
            slots = self._columns(posting, tid, base)[0]
            seen.update(slots)
            if term in ignored:
                continue
            for slot in slots:
                count[slot] += 1
            if term not in weak:
                for slot in slots:
                    specific[slot] += 1
            if strong is None or term in strong:
                for slot in slots:
                    single[slot] = 1
        hit = array("q")
        seen -= self._tomb
        for slot in sorted(seen):
            n = count[slot]
            if (n >= 2 and specific[slot]) or (n == 1 and single[slot]):
                hit.append(slot)
        return hit, array("q", map(count.__getitem__, hit))

    def _score_sparse(
        self,
        used: list[Used],
        weights: Mapping[str, float],
        avgdl: float,
        strong: frozenset[str] | None,
        ignored: frozenset[str],
        weak: frozenset[str],
    ) -> Scored:
        """``_score_plain`` over dicts of the touched slots only: the same operations in the
        same order per posting (each sum starts at 0.0 and adds the terms in query order), and
        each slot's length norm worked out as ``_length_norm`` does, for that slot alone."""
        if not used or not avgdl:
            return Scored(array("q"), array("d"), array("q"), array("q"))
        length = self._length
        acc: dict[int, float] = {}
        count: dict[int, int] = {}
        specific: dict[int, int] = {}
        single: set[int] = set()
        bits: dict[int, int] = {}
        norm: dict[int, float] = {}
        k1p = K1 + 1
        for j, term, posting, tid, base in used:
            w = weights[term]
            power = 1 << j if j < MASK_TERMS else 0
            counted = term not in ignored
            solid = counted and term not in weak
            alone = counted and (strong is None or term in strong)
            for slot, tf in zip(*self._columns(posting, tid, base), strict=True):
                n = norm.get(slot)
                if n is None:
                    n = norm[slot] = K1 * (1 - B + B * length[slot] / avgdl)
                acc[slot] = acc.get(slot, 0.0) + w * (tf * k1p) / (tf + n)
                bits[slot] = bits.get(slot, 0) | power
                if counted:
                    count[slot] = count.get(slot, 0) + 1
                    if solid:
                        specific[slot] = specific.get(slot, 0) + 1
                    if alone:
                        single.add(slot)
        hit = array("q")
        tomb = self._tomb
        for slot in sorted(acc):
            if slot in tomb:
                continue
            n = count.get(slot, 0)
            if (n >= 2 and slot in specific) or (n == 1 and slot in single):
                hit.append(slot)
        return Scored(
            slots=hit,
            scores=array("d", [acc[slot] for slot in hit]),
            matched=array("q", [count.get(slot, 0) for slot in hit]),
            bits=array("q", [bits[slot] for slot in hit]),
        )

    def _score_numpy(
        self,
        used: list[Used],
        weights: Mapping[str, float],
        avgdl: float,
        strong: frozenset[str] | None,
        ignored: frozenset[str],
        weak: frozenset[str],
    ) -> Scored:
        """``score`` with NumPy: each found term's contributions added per slot in place.

        The matched-term bitmask is summed for every document (each (document, term) pair
        occurs once, so a sum of distinct powers of two is an OR, exact below 2^53), and the
        gate's "a specific term matched" and "a term that passes alone matched" are then
        bit tests on it, per document rather than per posting.
        """
        from .gate import gate_mask

        np = _numpy()
        cap = len(self._keys)
        if not used:
            empty = np.zeros(0, dtype=np.int64)
            return Scored(empty, np.zeros(0, dtype=np.float64), empty, empty)
        masked = used[-1][0] < MASK_TERMS  # every term has its bit (``used`` is in query order)
        if masked and len(used) <= TABLE_TERMS:
            return self._gate_by_table(used, weights, avgdl, strong, ignored, weak)
        acc, parts, sizes = self._accumulate(used, weights, avgdl, None)
        slots = np.concatenate(parts)
        names = [term for _, term, *_ in used]
        # Arrays, not lists, into ``repeat``: a list takes NumPy's slower wrapping path.
        powers = np.array([float(1 << j) if j < MASK_TERMS else 0.0 for j, *_ in used])
        bits = np.bincount(slots, weights=powers.repeat(sizes), minlength=cap).astype(np.int64)
        if masked and hasattr(np, "bitwise_count"):
            # A document's counted terms are the counted bits it holds: one pass per document
            # instead of a ``bincount`` over every posting (each pair occurs once per term).
            counted = sum(1 << j for j, term, *_ in used if term not in ignored)
            count = np.bitwise_count(bits & counted).astype(np.intp)
        elif ignored and any(t in ignored for t in names):
            which = np.array([t not in ignored for t in names]).repeat(sizes)
            count = np.bincount(slots[which], minlength=cap)
        else:
            count = np.bincount(slots, minlength=cap)
        if masked:
            solid = single = 0
            for j, term in zip((j for j, *_ in used), names, strict=True):
                if term not in ignored:
                    solid |= 0 if term in weak else 1 << j
                    single |= 1 << j if strong is None or term in strong else 0
            gate = ((count >= 2) & ((bits & solid) != 0)) | ((count == 1) & ((bits & single) != 0))
        else:
            gate = gate_mask(count, *self._gate_inputs(slots, sizes, names, strong, ignored, weak))
        hit = np.flatnonzero(self._live(gate))
        return Scored(slots=hit, scores=acc[hit], matched=count[hit], bits=bits[hit])

    def _accumulate(
        self, used: list[Used], weights: Mapping[str, float], avgdl: float, found: Any
    ) -> tuple[FloatArray, list[IntArray], list[int]]:
        """Every slot's raw BM25 sum, the found terms' slots in order (only without ``found``:
        the per-slot gate reads them), and how many pairs each term has; ``found`` (one
        unsigned int per slot, or ``None``) gets bit k of the k-th term.

        Same operation order as the S8.6 reference formula, and each slot's sum starts at 0.0
        and adds the terms in query order (a term holds a slot once, so ``add.at`` adds each
        pair alone): the floats agree exactly with a term-by-term sum. One term at a time, in
        place, with no concatenated copy of every pair.
        """
        np = _numpy()
        add = np.add.at
        norms = self._length_norm_np(avgdl)
        acc = np.zeros(len(self._keys), dtype=np.float64)
        parts: list[IntArray] = []
        sizes: list[int] = []
        k1p = K1 + 1
        for k, (_, term, posting, tid, base) in enumerate(used):
            weight = weights[term]
            bit = None if found is None else found.dtype.type(1 << k)
            size = 0
            for slots, tf in self._numpy_columns(posting, tid, base):
                contrib = tf * k1p  # w·x is x·w in IEEE arithmetic: the reference's product
                contrib *= weight
                norm = norms[slots]
                norm += tf
                contrib /= norm
                if k == 0:
                    # The first term's sums are 0.0 + x, which is x (no contribution is -0.0:
                    # tf > 0 and idf ≥ 0): stored, not added (no read of the slot's value).
                    acc[slots] = contrib
                else:
                    add(acc, slots, contrib)
                if bit is None:
                    parts.append(slots)  # kept for the caller only: a chunk's arrays die here
                elif k == 0:
                    found[slots] = bit
                else:
                    add(found, slots, bit)
                size += len(slots)
            sizes.append(size)
        return acc, parts, sizes

    def _numpy_columns(
        self, posting: array[int] | None, tid: int, base: int
    ) -> Iterator[tuple[IntArray, Any]]:
        """A found term's slots (a copy, as ``intp``) and tfs, ``CHUNK_PAIRS`` at a time: its
        packed range, then the pairs added since. Chunks keep each step's arrays in the
        processor's cache (~10 % faster at 10^5 documents than whole ranges); the views end
        with the loop, so the postings may resize later."""
        np = _numpy()
        if base:
            assert self._packed is not None
            words = self._packed.view(tid)
            for at in range(0, len(words), CHUNK_PAIRS):
                part = words[at : at + CHUNK_PAIRS]
                yield (part >> 8).astype(np.intp), part & 0xFF
        if posting is not None:
            pairs = np.frombuffer(posting, dtype=np.int32)
            for at in range(0, len(pairs), 2 * CHUNK_PAIRS):
                part = pairs[at : at + 2 * CHUNK_PAIRS]
                yield part[0::2].astype(np.intp), part[1::2]

    def _gate_by_table(
        self,
        used: list[Used],
        weights: Mapping[str, float],
        avgdl: float,
        strong: frozenset[str] | None,
        ignored: frozenset[str],
        weak: frozenset[str],
    ) -> Scored:
        """``_score_numpy`` for a query of few terms found: each document's pattern of found
        terms (bit k = the k-th of ``used``) is added up per slot beside the scores, one or
        two bytes a slot, and the gate is a few bit tests on those bytes (``_gate_of``; the
        per-pattern table of 2^len(used) entries on NumPy before 2.0). Counted matches and
        query-order bitmasks stay per-pattern tables, read for the rows asked for.

        The same rule as the per-slot expression: two counted terms one of which is specific,
        or one counted term that passes alone."""
        np = _numpy()
        cap = len(self._keys)
        table, count, order = _gate_tables(
            tuple(
                (j, term in ignored, term in weak, strong is None or term in strong)
                for j, term, *_ in used
            )
        )
        found = np.zeros(cap, dtype=np.uint8 if len(used) <= 8 else np.uint16)
        acc, _, _ = self._accumulate(used, weights, avgdl, found)
        if hasattr(np, "bitwise_count"):
            gate = _gate_of(np, found, used, strong, ignored, weak)
        else:  # NumPy before 2.0: the table, looked up per slot
            gate = table.take(found)
        hit = np.flatnonzero(self._live(gate))
        return Scored(hit, acc[hit], pattern=found, counts=count, order=order)

    def _gate_inputs(
        self,
        slots: IntArray,
        sizes: list[int],
        names: list[str],
        strong: frozenset[str] | None,
        ignored: frozenset[str],
        weak: frozenset[str],
    ) -> tuple[Any, Any]:
        """Per document, whether a term passing alone matched, and how many specific terms
        matched (``None``: every match is specific): per posting, for queries of more than
        ``MASK_TERMS`` terms, whose bitmask cannot hold every term."""
        np = _numpy()
        cap = len(self._keys)
        specific = None
        if weak and any(t in weak for t in names):
            solid = np.repeat([t not in ignored and t not in weak for t in names], sizes)
            specific = np.bincount(slots[solid], minlength=cap)
        single_ok = np.zeros(cap, dtype=np.bool_)
        flags = [(strong is None or t in strong) and t not in ignored for t in names]
        if all(flags):
            single_ok[:] = True
        elif any(flags):
            single_ok[slots[np.repeat(flags, sizes)]] = True
        return single_ok, specific

    def _length_norm(self, avgdl: float) -> list[float]:
        """Per-slot k1·(1 − b + b·dl/avgdl), computed once per index version and avgdl."""
        if self._norm is None or self._norm[0] != avgdl:
            # K1 * (1 - B + B * dl / avgdl): the same operations, ``1 - B`` taken once.
            k1, b, rest = K1, B, 1 - B
            self._norm = (avgdl, [k1 * (rest + b * dl / avgdl) for dl in self._length])
        return cast(list[float], self._norm[1])

    def _length_norm_np(self, avgdl: float) -> Any:
        """``_length_norm`` as a NumPy array (same floats: the same expression per element)."""
        if self._norm_np is None or self._norm_np[0] != avgdl:
            np = _numpy()
            length = np.frombuffer(self._length, dtype=np.float64).copy()
            self._norm_np = (avgdl, K1 * (1 - B + B * length / avgdl))
        return self._norm_np[1]

    def boosted_plain(
        self, slots: Sequence[int], scores: Sequence[float], now_us: int, boost: float,
        penalty: float,
    ) -> tuple[list[float], list[bool]]:
        """Scores × ``boost`` for project facts, then × ``penalty`` for stale ones (S8.7), and
        the stale flags: ``scoring.boosted`` on the plain path, in one loop."""
        project, fresh, after = self._project, self._fresh, self._stale_after
        adjusted: list[float] = []
        stale: list[bool] = []
        for slot, score in zip(slots, scores, strict=True):
            value = score * boost if project[slot] else score
            when = fresh[slot]
            old = when <= now_us and now_us - when > after[slot]
            adjusted.append(value * penalty if old else value)
            stale.append(old)
        return adjusted, stale

    def boosted_np(
        self,
        slots: IntArray,
        scores: FloatArray,
        now_us: int,
        boost: float,
        penalty: float,
    ) -> tuple[Any, Any]:
        """``boosted_plain`` with NumPy: scores × ``boost`` for project facts, then
        × ``penalty`` for stale ones, and the stale mask; two per-slot arrays kept per index
        version instead of five passes over the candidates' values (the same floats: a score
        times 1.0 is that score)."""
        np = _numpy()
        if self._boost_np is None or self._boost_np[0] != boost:
            project = np.frombuffer(self._project, dtype=np.int8)
            factor = np.where(project != 0, boost, 1.0)
            # One scope only (a pool of project facts, say): every score times one number.
            # (Only the used slots: spare capacity and free slots are never a candidate.)
            used = factor[: len(self._keys)]
            uniform = float(used[0]) if len(used) and (used == used[0]).all() else None
            self._boost_np = (boost, factor, _stale_from(
                np.frombuffer(self._fresh, dtype=np.int64),
                np.frombuffer(self._stale_after, dtype=np.int64),
            ), uniform, [1, 0, None])
        _, factor, stale_from, uniform, window = self._boost_np
        adjusted = scores * (factor[slots] if uniform is None else uniform)
        mask = _stale_at(np, stale_from, window, now_us)[slots]
        adjusted[np.flatnonzero(mask)] *= penalty  # the stale few, not a pass over every one
        return adjusted, mask

    def updated_of(self, slots: Iterable[int]) -> list[int]:
        """``updated_at`` (µs) of each of ``slots`` for the tie order."""
        updated = self._updated
        return [updated[slot] for slot in slots]

    def updated(self, slots: IntArray) -> Any:
        """``updated_at`` (µs) of ``slots`` for the tie order (NumPy)."""
        np = _numpy()
        return np.frombuffer(self._updated, dtype=np.int64)[slots]

    def vocabulary(self) -> int:
        """Number of distinct terms (a tombstone's pairs never leave a posting empty)."""
        if not self._frozen:
            packed = self._packed
            if packed is None:
                return len(self._postings)
            live = sum(1 for size in packed.count if size)
            return live + sum(1 for term in self._postings if not self._base(term)[1])
        self._thaw_all_deferred()
        frozen = self._frozen
        new = sum(1 for term in self._dirty if term not in self._gone and term not in frozen)
        return len(frozen) - sum(1 for term in self._gone if term in frozen) + new

    def changed_postings(self) -> dict[str, bytes | None]:
        """Term → posting bytes (``None``: gone) of every term changed while frozen."""
        self._purge()
        self._thaw_all_deferred()
        out: dict[str, bytes | None] = {}
        for term in self._dirty:
            posting = None if term in self._gone else self._postings.get(term)
            out[term] = None if posting is None or not posting else posting.tobytes()
        return out

    def posting_patches(self) -> dict[str, tuple[list[int], list[int]]]:
        """Term → (slots taken out, interleaved (slot, tf) pairs put in) of every term changed
        since a lazy restore, relative to the posting it was restored with (tombstones purged
        first, so the postings and free slots beside them are current)."""
        if self._patches is None:
            raise ValueError("not a lazily restored index")
        self._purge()
        out: dict[str, tuple[list[int], list[int]]] = {}
        for term, (removed, added) in self._patches.items():
            pairs: list[int] = []
            for slot, tf in added.items():
                pairs += (slot, tf)
            out[term] = (sorted(removed), pairs)
        return out

    def changed_slots(self) -> dict[int, tuple[str | None, bytes]]:
        """Slot → (key, its per-slot values as bytes, in export order) of every slot changed
        since a lazy restore (recall/state.py's ``with_slots`` applies them)."""
        self._purge()
        per_slot = self._per_slot()
        return {
            slot: (self._keys[slot], b"".join(a[slot : slot + 1].tobytes() for a in per_slot))
            for slot in sorted(self._touched)
        }

    def slot_state(self) -> tuple[list[str | None], list[int], list[bytes], int]:
        """Slot keys, free slots, per-slot array bytes and total length (a delta's row)."""
        self._purge()
        n = len(self._keys)
        return (list(self._keys), list(self._free), [a[:n].tobytes() for a in self._per_slot()],
                self.total_length)

    def nbytes(self) -> int:
        """Approximate bytes held by postings and per-slot arrays (excluding term strings)."""
        self._thaw()
        postings = sum(p.buffer_info()[1] * p.itemsize for p in self._postings.values())
        arrays = sum(a.buffer_info()[1] * a.itemsize for a in self._per_slot())
        return postings + arrays + (0 if self._packed is None else self._packed.nbytes())


def _gate_of(
    np: Any,
    found: Any,
    used: list[Used],
    strong: frozenset[str] | None,
    ignored: frozenset[str],
    weak: frozenset[str],
) -> Any:
    """The table gate's rule as bit tests on each slot's pattern of found terms: on one or
    two bytes a slot, each step is a vector pass (~2 µs over 10^5 slots, where a lookup of
    the table per slot costs ~60 µs)."""
    counted = solid = single = 0
    for k, (_, term, *_) in enumerate(used):
        if term in ignored:
            continue
        counted |= 1 << k
        solid |= 0 if term in weak else 1 << k
        single |= 1 << k if strong is None or term in strong else 0
    mine = found if counted == (1 << len(used)) - 1 else found & counted
    count = np.bitwise_count(mine)
    gate = count >= 2
    if solid != counted:  # two counted terms pass only if one of them is specific
        gate &= (found & solid) != 0
    if single == counted:  # one counted term always passes alone
        return mine != 0 if solid == counted else gate | (count == 1)
    if single:
        gate |= (count == 1) & ((found & single) != 0)
    return gate


@functools.lru_cache(maxsize=256)
def _gate_tables(terms: tuple[tuple[int, bool, bool, bool], ...]) -> tuple[Any, Any, Any]:
    """The per-pattern gate, counted matches and query-order bitmask of ``_gate_by_table``.

    ``terms`` gives each found term's query position and whether it is ignored, weak, and
    passes alone; a host's turns ask for the same few shapes again (~40 small NumPy steps).
    """
    np = _numpy()
    size = 1 << len(terms)
    patterns = np.arange(size, dtype=np.int64)
    count = np.zeros(size, dtype=np.intp)
    solid = np.zeros(size, dtype=np.bool_)
    single = np.zeros(size, dtype=np.bool_)
    order = np.zeros(size, dtype=np.int64)
    for k, (j, ignored, weak, alone) in enumerate(terms):
        has = (patterns >> k) & 1
        order |= has << j
        if ignored:
            continue
        count += has
        if not weak:
            solid |= has.astype(np.bool_)
        if alone:
            single |= has.astype(np.bool_)
    table = ((count >= 2) & solid) | ((count == 1) & single)
    for made in (table, count, order):
        made.flags.writeable = False  # shared between turns
    return table, count, order


def _return_freed_heap() -> None:
    """Give the C heap's free pages back to the system after a packed build (glibc only).

    The build's document-major arrays, term table and NumPy temporaries are freed, but glibc
    keeps most of that heap mapped: at 100,000 facts ~30 MB of a host's RSS, measured.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return
    trim(0)


def _stale_at(np: Any, stale_from: Any, window: list[Any], now_us: int) -> Any:
    """Per slot, whether it is stale at ``now_us`` (``stale_from <= now_us``), kept in
    ``window`` ([low, high, flags]) for every ``now`` from the latest ``stale_from`` reached to
    the next one: no slot changes side in between, and a host's turns fall there for hours."""
    low, high, flags = window
    if flags is None or not low <= now_us < high:
        flags = stale_from <= now_us
        reached = stale_from[flags]
        ahead = stale_from[~flags]
        low = int(reached.max()) if len(reached) else -(2**63)
        high = int(ahead.min()) if len(ahead) else 2**63
        window[:] = [low, high, flags]
    return flags


def _stale_from(fresh: Any, after: Any) -> Any:
    """Per slot, the first ``now`` (µs) at which ``stale`` holds: ``fresh <= now`` and
    ``now - fresh > after``, i.e. ``now >= max(fresh, fresh + after + 1)``; ``NO_TIME``'s
    lanes and sums past int64 never (no ``now`` reaches the largest int64)."""
    np = _numpy()
    top = np.iinfo(np.int64).max
    bottom = np.iinfo(np.int64).min
    fresh = fresh.astype(np.int64)
    after = after.astype(np.int64)
    # fresh + after + 1 without wrapping: saturate where it would leave int64.
    up = after >= 0
    headroom = np.where(up, top - after, 0)
    over = up & (fresh >= headroom)
    floor_room = np.where(up, 0, bottom - after)
    under = ~up & (fresh < floor_room)
    safe = np.where(over | under, 0, fresh)
    edge = np.where(over, top, np.where(under, bottom, safe + after + 1))
    return np.maximum(fresh, edge)


def _patch_out(
    patches: dict[str, tuple[set[int], dict[int, int]]], term: str, slot: int
) -> None:
    """Record that ``slot`` left ``term``'s posting: undoes an add since the restore, else
    takes the slot out of the restored posting."""
    patch = patches.get(term)
    if patch is None:
        patches[term] = patch = (set(), {})
    if patch[1].pop(slot, None) is None:
        patch[0].add(slot)


def _find_slot(posting: array[int], slot: int) -> int:
    """Index of ``slot`` among the even positions of an interleaved posting, or -1.

    Short postings are scanned in Python; long ones with NumPy when a host has loaded it, else
    by searching the posting's bytes for the slot's four bytes (C speed: a hook applying a
    change never imports NumPy) and keeping the first match at an even position.
    ``array.index`` compares element by element as Python objects, ~100× slower on a posting
    of 10^5 pairs.
    """
    if len(posting) <= 256:
        for i in range(0, len(posting), 2):
            if posting[i] == slot:
                return i
        return -1
    if "numpy" in sys.modules:  # a long-lived host has it loaded: no copy of the posting
        np = _numpy()
        view = np.frombuffer(posting, dtype=np.int32)
        found = np.flatnonzero(view[0::2] == slot)
        del view  # release the buffer export before the caller resizes the posting
        return int(found[0]) * 2 if len(found) else -1
    data = posting.tobytes()
    needle = array("i", (slot,)).tobytes()
    step = 2 * posting.itemsize
    at = data.find(needle)
    while at >= 0:
        if at % step == 0:
            return at // posting.itemsize
        at = data.find(needle, at + 1)
    return -1


def weights_for(
    terms: Iterable[str], indexes: Sequence[SparseIndex]
) -> tuple[dict[str, float], float, int]:
    """idf per term, avgdl and N computed over the union of ``indexes`` (the scoring pool)."""
    n = sum(len(ix) for ix in indexes)
    total = sum(ix.total_length for ix in indexes)
    weights = {t: idf(n, sum(ix.df(t) for ix in indexes)) for t in terms}
    return weights, (total / n if n else 0.0), n
