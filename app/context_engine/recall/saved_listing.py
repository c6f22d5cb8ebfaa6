"""The listing a saved recall state was written under, compared with a new one at C speed (#14).

A cold turn after a change must find the few files that differ among 10^5. Kept as two dicts
of identity tuples, the saved listing took ~0.1 s to decode at 10^5 files and as long again to
compare. Packed, each store is its file names (one list) and their identities (six int64 per
file, one ``bytes``): decoding is one list of strings, and when the names are the same, in the
same order (a file edited or replaced in place: the common case), the identities are compared
as bytes, halving into the differing ranges. Otherwise (a file created, removed, renamed, or
the directory listed in another order) both sides become dicts, compared as sets.

The delta's listing rows (recall/state.py) lie over the packed base: ``overlay``.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import chain
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from ..facts.stat_listing import Identity, Listing

FIELDS = 6  # (dev, ino, size, mtime_ns, ctime_ns, mode)
MAX_FIELD = 2**63  # every field fits an int64 (``UNREADABLE`` is all -1)
_WIDTH = FIELDS * array("q").itemsize
Packed = tuple[tuple[list[str], bytes], tuple[list[str], bytes]]


def pack_one(files: Listing) -> tuple[list[str], bytes]:
    """One store's listing as (names, identities as int64 bytes), in the listing's order."""
    return list(files), array("q", chain.from_iterable(files.values())).tobytes()


def pack(listings: tuple[Listing, Listing]) -> Packed:
    """Both stores' listings packed (what the state saves as its ``listing``)."""
    return pack_one(listings[0]), pack_one(listings[1])


def _unpack_one(names: list[str], ids: bytes) -> dict[str, Identity]:
    values = array("q")
    values.frombytes(ids)
    rows: Any = zip(*[iter(values)] * FIELDS, strict=True)
    return dict(zip(names, rows, strict=True))


def _differing(a: bytes, b: bytes, limit: int) -> list[int] | None:
    """Positions of the records (``_WIDTH`` bytes each) that differ between equal-length
    ``a`` and ``b``, found by halving (memcmp of the ranges); ``None`` past ``limit``."""
    out: list[int] = []
    stack = [(0, len(a) // _WIDTH)]
    while stack:
        lo, hi = stack.pop()
        if a[lo * _WIDTH : hi * _WIDTH] == b[lo * _WIDTH : hi * _WIDTH]:
            continue
        if hi - lo == 1:
            out.append(lo)
            if len(out) > limit:
                return None
            continue
        mid = (lo + hi) // 2
        stack += [(mid, hi), (lo, mid)]
    return out


class SavedListing:
    """A saved state's listing: the packed base with the delta's rows over it."""

    def __init__(
        self, packed: Packed, overlay: Iterable[tuple[int, str, Identity | None]] = ()
    ) -> None:
        if not (isinstance(packed, tuple) and len(packed) == 2):
            raise TypeError("malformed listing")
        for names, ids in packed:
            if not isinstance(names, list) or not isinstance(ids, bytes):
                raise TypeError("malformed listing")
            if len(ids) != len(names) * _WIDTH:
                raise ValueError("malformed listing")
        self.packed = packed
        self.overlay: tuple[dict[str, Identity | None], dict[str, Identity | None]] = ({}, {})
        for scope, name, identity in overlay:
            self.overlay[scope][name] = identity
        self._where: list[dict[str, int] | None] = [None, None]
        self._lookups = 0

    def _base(self, si: int, name: str) -> Identity | None:
        names, ids = self.packed[si]
        where = self._where[si]
        if where is None:
            self._lookups += 1
            if self._lookups > 16:  # many: one table (hashing every name, ~30 ms at 10^5)
                where = self._where[si] = dict(zip(names, range(len(names)), strict=True))
        if where is not None:
            at = where.get(name)
        else:
            try:
                at = names.index(name)  # C speed, ~1 ms at 10^5
            except ValueError:
                at = None
        if at is None:
            return None
        values = array("q")
        values.frombytes(ids[at * _WIDTH : (at + 1) * _WIDTH])
        return cast("Identity", tuple(values))

    def identity(self, si: int, name: str) -> Identity | None:
        """The saved identity of one file (``None``: not listed then)."""
        over = self.overlay[si]
        if name in over:
            return over[name]
        return self._base(si, name)

    def changed(
        self, listings: tuple[Listing, Listing], limit: int
    ) -> list[tuple[int, str]] | None:
        """(scope index, file name) of every file whose identity differs from the saved one
        (listed on one side only included), sorted; ``None`` when more than ``limit``."""
        out: list[tuple[int, str]] = []
        for si in (0, 1):
            names, ids = self.packed[si]
            over = self.overlay[si]
            current = listings[si]
            now_names, now_ids = pack_one(current)
            room = limit + len(over)
            suspects: set[str]
            if now_names == names:
                found = _differing(ids, now_ids, room)
                if found is None:
                    return None
                suspects = {names[at] for at in found}
            else:
                base = _unpack_one(names, ids)
                suspects = {name for name, _ in base.items() ^ current.items()}
                if len(suspects) > room:
                    return None
            for name in sorted(suspects | over.keys()):
                if current.get(name) != self.identity(si, name):
                    out.append((si, name))
            if len(out) > limit:
                return None
        return out

    def dicts(self) -> tuple[Listing, Listing]:
        """Both stores' saved listings as dicts (O(files): for a whole compare)."""
        out: list[Listing] = []
        for (names, ids), over in zip(self.packed, self.overlay, strict=True):
            files = _unpack_one(names, ids)
            for name, identity in over.items():
                if identity is None:
                    files.pop(name, None)
                else:
                    files[name] = identity
            out.append(files)
        return out[0], out[1]


def folded(packed: Packed, rows: Iterable[tuple[int, str, Identity | None]]) -> Packed:
    """The packed listing with the delta's rows applied (a fold into a new base)."""
    listing = SavedListing(packed, rows)
    files = listing.dicts()
    return pack(files)
