"""An incremental sparse inverted index with exact S8.6 BM25 scoring.

Postings are one ``array('i')`` per term holding interleaved ``(slot, tf)`` pairs: 8 bytes a
posting and one Python object a term, so 100,000 facts fit in well under 300 MB. Adding or
removing one fact touches only that fact's terms; nothing is re-tokenized. Scoring concatenates
the query terms' postings (NumPy views, no copy per term) and accumulates them per slot with
``np.bincount``.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import numpy.typing as npt

from .gate import gate_mask

K1 = 1.2
B = 0.75

NO_TIME = np.iinfo(np.int64).max  # "never": not stale, sorts as oldest via OLDEST
OLDEST = -(2**62)
MASK_TERMS = 52  # query terms tracked in the per-document matched-term bitmask

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def idf(n: int, df: int) -> float:
    """S8.6 idf: ln(1 + (N − df + 0.5) / (df + 0.5))."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


@dataclass(slots=True)
class IndexCounters:
    """How the index changed: lets tests prove a change did not rebuild everything."""

    adds: int = 0
    removes: int = 0


@dataclass(frozen=True, slots=True)
class DocMeta:
    """Per-fact values the vectorised scorer needs besides the postings."""

    project: bool = False
    fresh_us: int = NO_TIME  # freshness timestamp in µs since the epoch, NO_TIME when unset
    stale_after_us: int = 0  # age beyond which the fact is stale
    updated_us: int = OLDEST  # ``updated_at`` for the tie order


@dataclass(frozen=True, slots=True)
class Scored:
    """Gate-passing slots, raw BM25 score, matched-term count and bitmask (bit j = term j)."""

    slots: IntArray
    scores: FloatArray
    matched: IntArray
    bits: IntArray


@dataclass(slots=True)
class SparseIndex:
    """Inverted index over keyed documents; ``add``/``remove`` cost O(terms of one doc)."""

    counters: IndexCounters = field(default_factory=IndexCounters)
    _slot_of: dict[str, int] = field(default_factory=dict)
    _keys: list[str | None] = field(default_factory=list)
    _free: list[int] = field(default_factory=list)
    _postings: dict[str, array[int]] = field(default_factory=dict)
    # Postings restored from disk and not touched yet (term → raw bytes): a hook turn reads a
    # handful of ~20,000 terms, so each becomes an array only when first used (``_thaw``).
    _frozen: dict[str, bytes] = field(default_factory=dict)
    _length: FloatArray = field(default_factory=lambda: np.zeros(16, dtype=np.float64))
    _project: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(16, dtype=np.bool_))
    _fresh: IntArray = field(default_factory=lambda: np.zeros(16, dtype=np.int64))
    _stale_after: IntArray = field(default_factory=lambda: np.zeros(16, dtype=np.int64))
    _updated: IntArray = field(default_factory=lambda: np.zeros(16, dtype=np.int64))
    total_length: int = 0
    # k1·(1 − b + b·dl/avgdl) per slot for one avgdl; dropped on every add/remove.
    _norm: tuple[float, FloatArray] | None = None

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
        if posting is None and self._frozen:
            blob = self._frozen.get(term)
            if blob is not None:
                posting = array("i")
                posting.frombytes(blob)
                self._postings[term] = posting
        return posting

    def _thaw(self) -> None:
        """Every restored posting as an array, in the saved order (before anything iterates or
        changes them); until then ``_postings`` holds only terms looked up, all in ``_frozen``."""
        if self._frozen:
            self._postings = {term: self._posting(term) or array("i") for term in self._frozen}
            self._frozen = {}

    def df(self, term: str) -> int:
        """Number of documents containing ``term``."""
        posting = self._posting(term)
        return len(posting) // 2 if posting is not None else 0

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
        """Make every per-slot array hold at least ``size`` slots."""
        cap = len(self._length)
        if size <= cap:
            return
        new = max(size, cap * 2)
        for name in ("_length", "_project", "_fresh", "_stale_after", "_updated"):
            old = getattr(self, name)
            grown = np.zeros(new, dtype=old.dtype)
            grown[:cap] = old
            setattr(self, name, grown)

    def add(self, key: str, counts: Mapping[str, int], meta: DocMeta) -> None:
        """Index one document given its term counts; a document with no terms is skipped."""
        if key in self._slot_of:
            raise ValueError(f"already indexed: {key}")
        length = sum(counts.values())
        if length == 0:
            return
        self._thaw()
        if self._free:
            slot = self._free.pop()
            self._keys[slot] = key
        else:
            slot = len(self._keys)
            self._keys.append(key)
            self._grow(slot + 1)
        self._slot_of[key] = slot
        self._norm = None
        self._length[slot] = length
        self._project[slot] = meta.project
        self._fresh[slot] = meta.fresh_us
        self._stale_after[slot] = meta.stale_after_us
        self._updated[slot] = meta.updated_us
        self.total_length += length
        postings = self._postings
        for term, tf in counts.items():
            posting = postings.get(term)
            if posting is None:
                postings[term] = array("i", (slot, tf))
            else:
                posting.append(slot)
                posting.append(tf)
        self.counters.adds += 1

    def add_many(self, docs: Iterable[tuple[str, Mapping[str, int], DocMeta]]) -> None:
        """Index many documents as :meth:`add` would one by one, in one pass when empty.

        An empty index gets its postings built as plain lists and turned into arrays once, and
        its per-slot arrays filled in one go: same slots, postings and totals as ``add`` in
        order (a test compares the two), a fraction of the per-posting work.
        """
        self._thaw()
        if self._keys:
            for key, counts, meta in docs:
                self.add(key, counts, meta)
            return
        slot_of = self._slot_of
        keys: list[str | None] = []
        lengths: list[int] = []
        metas: list[DocMeta] = []
        lists: dict[str, list[int]] = {}
        get = lists.get
        for key, counts, meta in docs:
            if key in slot_of:
                raise ValueError(f"already indexed: {key}")
            length = sum(counts.values())
            if length == 0:
                continue
            slot = len(keys)
            slot_of[key] = slot
            keys.append(key)
            lengths.append(length)
            metas.append(meta)
            for term, tf in counts.items():
                posting = get(term)
                if posting is None:
                    lists[term] = [slot, tf]
                else:
                    posting += (slot, tf)
        if not keys:
            return
        self._keys = keys
        self._postings = {term: array("i", posting) for term, posting in lists.items()}
        self._grow(len(keys))
        n = len(keys)
        self._length[:n] = lengths
        self._project[:n] = [m.project for m in metas]
        self._fresh[:n] = [m.fresh_us for m in metas]
        self._stale_after[:n] = [m.stale_after_us for m in metas]
        self._updated[:n] = [m.updated_us for m in metas]
        self.total_length = sum(lengths)
        self._norm = None
        self.counters.adds += n

    def export(self) -> tuple[object, ...]:
        """The index as plain containers (for ``marshal``): keys, free slots, postings, arrays."""
        self._thaw()
        n = len(self._keys)
        terms = list(self._postings)
        return (
            list(self._keys),
            list(self._free),
            terms,
            [self._postings[term].tobytes() for term in terms],
            [a[:n].tobytes() for a in self._per_slot()],
            self.total_length,
        )

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
        index._grow(n)
        for target, blob in zip(index._per_slot(), arrays, strict=True):
            values = np.frombuffer(blob, dtype=target.dtype)
            if len(values) != n:
                raise ValueError("per-slot array of the wrong size")
            target[:n] = values
        index.total_length = total
        return index

    def _per_slot(self) -> tuple[npt.NDArray[np.generic], ...]:
        """The per-slot arrays, in export order."""
        return (self._length, self._project, self._fresh, self._stale_after, self._updated)

    def remove(self, key: str, terms: Iterable[str]) -> None:
        """Drop one document; ``terms`` are its distinct terms (re-derived from the old fact)."""
        slot = self._slot_of.pop(key, None)
        if slot is None:
            return
        self._thaw()
        postings = self._postings
        for term in terms:
            posting = postings.get(term)
            if posting is None:
                continue
            size = len(posting)
            if size == 2:
                if posting[0] == slot:
                    del postings[term]
                continue
            pos = _find_slot(posting, slot)
            if pos < 0:
                continue
            # Swap-remove: posting order carries no meaning.
            last = size - 2
            if pos != last:
                posting[pos] = posting[last]
                posting[pos + 1] = posting[last + 1]
            del posting[last:]
        self._norm = None
        self.total_length -= int(self._length[slot])
        self._length[slot] = 0
        self._keys[slot] = None
        self._free.append(slot)
        self.counters.removes += 1

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
        cap = len(self._keys)
        views: list[npt.NDArray[np.int32]] = []
        used: list[int] = []
        for j, term in enumerate(terms):
            posting = self._posting(term)
            if posting is not None:
                views.append(np.frombuffer(posting, dtype=np.int32))
                used.append(j)
        if not views:
            empty = np.zeros(0, dtype=np.int64)
            return Scored(empty, np.zeros(0, dtype=np.float64), empty, empty)
        sizes = [len(v) // 2 for v in views]
        pairs = np.concatenate(views)
        views.clear()  # release the buffer exports so the postings may resize later
        slots = pairs[0::2].astype(np.int64)
        tf = pairs[1::2].astype(np.float64)
        w = np.repeat(np.array([weights[terms[j]] for j in used], dtype=np.float64), sizes)
        # Same operation order as the S8.6 reference formula, and bincount adds each
        # document's contributions in query-term order starting from 0.0, so the floats
        # agree exactly with a term-by-term sum.
        contrib = w * (tf * (K1 + 1)) / (tf + self._length_norm(avgdl)[slots])
        acc = cast(FloatArray, np.bincount(slots, weights=contrib, minlength=cap))
        if ignored and any(terms[j] in ignored for j in used):
            counted = np.repeat([terms[j] not in ignored for j in used], sizes)
            count = np.bincount(slots[counted], minlength=cap)
        else:
            count = np.bincount(slots, minlength=cap)
        specific = None
        if weak and any(terms[j] in weak for j in used):
            solid = np.repeat(
                [terms[j] not in ignored and terms[j] not in weak for j in used], sizes
            )
            specific = np.bincount(slots[solid], minlength=cap)
        single_ok = np.zeros(cap, dtype=np.bool_)
        flags = [(strong is None or terms[j] in strong) and terms[j] not in ignored for j in used]
        if all(flags):
            single_ok[:] = True
        elif any(flags):
            single_ok[slots[np.repeat(flags, sizes)]] = True
        gate = gate_mask(count, single_ok, specific)
        hit = np.flatnonzero(gate)
        # Matched-term bitmask, only for the entries of gate-passing documents: each
        # (document, term) pair occurs once, so a sum of distinct powers of two is an OR.
        powers = np.repeat([float(1 << j) if j < MASK_TERMS else 0.0 for j in used], sizes)
        keep = gate[slots]
        bits = np.bincount(slots[keep], weights=powers[keep], minlength=cap).astype(np.int64)
        return Scored(slots=hit, scores=acc[hit], matched=count[hit], bits=bits[hit])

    def _length_norm(self, avgdl: float) -> FloatArray:
        """Per-slot k1·(1 − b + b·dl/avgdl), computed once per index version and avgdl."""
        if self._norm is None or self._norm[0] != avgdl:
            self._norm = (avgdl, K1 * (1 - B + B * self._length / avgdl))
        return self._norm[1]

    def project(self, slots: IntArray) -> npt.NDArray[np.bool_]:
        """Whether each slot holds a project fact."""
        return self._project[slots]

    def stale(self, slots: IntArray, now_us: int) -> npt.NDArray[np.bool_]:
        """Whether each slot's fact is stale at ``now_us`` (unset or future → not stale)."""
        fresh = self._fresh[slots]
        valid = fresh <= now_us
        age = np.where(valid, now_us - np.minimum(fresh, now_us), 0)
        return valid & (age > self._stale_after[slots])

    def updated(self, slots: IntArray) -> IntArray:
        """``updated_at`` (µs) of ``slots`` for the tie order."""
        return self._updated[slots]

    def vocabulary(self) -> int:
        """Number of distinct terms."""
        return len(self._frozen) if self._frozen else len(self._postings)

    def nbytes(self) -> int:
        """Approximate bytes held by postings and per-slot arrays (excluding term strings)."""
        self._thaw()
        postings = sum(p.buffer_info()[1] * p.itemsize for p in self._postings.values())
        arrays = sum(
            a.nbytes
            for a in (self._length, self._project, self._fresh, self._stale_after, self._updated)
        )
        return postings + arrays


def _find_slot(posting: array[int], slot: int) -> int:
    """Index of ``slot`` among the even positions of an interleaved posting, or -1."""
    if len(posting) <= 64:
        for i in range(0, len(posting), 2):
            if posting[i] == slot:
                return i
        return -1
    view = np.frombuffer(posting, dtype=np.int32)
    found = np.flatnonzero(view[0::2] == slot)
    del view
    return int(found[0]) * 2 if len(found) else -1


def weights_for(
    terms: Iterable[str], indexes: Sequence[SparseIndex]
) -> tuple[dict[str, float], float, int]:
    """idf per term, avgdl and N computed over the union of ``indexes`` (the scoring pool)."""
    n = sum(len(ix) for ix in indexes)
    total = sum(ix.total_length for ix in indexes)
    weights = {t: idf(n, sum(ix.df(t) for ix in indexes)) for t in terms}
    return weights, (total / n if n else 0.0), n
