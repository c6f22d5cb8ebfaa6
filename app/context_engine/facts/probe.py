"""One cold read's look at both store listings: the store monitor's word where it has one.

A saved view of the stores (the recall state) records the monitor token taken *before* the
walk it was validated by. The next cold process asks the monitor what changed since that
token (``monitor/client.py``): nothing → the saved listing is the stores' listing, no
``lstat`` at all; a few names → the saved listing with only those entries ``lstat``-ed again;
no answer, or "unknown" for a store → that store walked as before. Every path lands on the
same listing a full walk would give, so what follows (the racy rule, the changed-entries
path) is unchanged.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .stat_listing import (
    UNREADABLE,
    Identity,
    Listing,
    is_fact_file_name,
    scan_listing,
    scan_listings,
)

if TYPE_CHECKING:
    from ..paths import EnginePaths

Scanned = tuple[tuple[Listing, Listing], int]  # the listings and when taking them began


class Probe:
    """Both stores' listings for one cold read, asked of the monitor at most once."""

    def __init__(self, paths: EnginePaths) -> None:
        self.paths = paths
        self.roots = (paths.project_store, paths.global_store)
        self.token: list[object] | None = None  # the monitor's token, taken before any walk
        self.asked = False
        self.answer: list[set[str] | None] | None = None
        self._scanned: Scanned | None = None
        self.walked = False  # a store was listed in full (the token may be recorded)
        self.walked_existing = False  # ... and it exists (a missing one costs no lstat)

    def ask(self, since: object) -> list[set[str] | None] | None:
        """Per store, the names changed since ``since`` (``None``: unknown); ``None``: none."""
        if self.asked:
            return self.answer
        self.asked = True
        from ..monitor.client import changes_since

        got = changes_since(str(self.paths.state), [str(root) for root in self.roots], since)
        if got is not None:
            self.token, self.answer = got
        return self.answer

    def scanned(self) -> Scanned:
        """Both stores walked (once), the monitor asked first so its token precedes the walk."""
        if self._scanned is None:
            if not self.asked:
                self.ask(None)
            started = time.time_ns()  # before the scan: every lstat and read comes after it
            self._scanned = (scan_listings(self.paths), started)
            self.walked = self.walked_existing = True
        return self._scanned

    def worth_recording(self, saved: object) -> bool:
        """Whether the token should replace ``saved`` beside a view validated after it: a
        store was walked that the saved token could not vouch for (a missing store the
        monitor cannot watch is no reason: its walk costs nothing)."""
        token = self.token
        if token is None or not self.walked:
            return False
        same_monitor = isinstance(saved, list) and len(saved) == 2 and saved[0] == token[0]
        return self.walked_existing or not same_monitor

    def vouched(self) -> bool:
        """Whether the monitor says nothing changed in either store."""
        answer = self.answer
        return answer is not None and all(names is not None and not names for names in answer)

    def patched(
        self, saved: tuple[Mapping[str, Identity], Mapping[str, Identity]]
    ) -> tuple[Scanned, list[tuple[int, str]]] | None:
        """The listings now: ``saved`` with the named entries ``lstat``-ed again (a store the
        monitor cannot vouch for walked whole); and the (store index, name) entries that
        differ. ``None`` without an answer."""
        answer = self.answer
        if answer is None:
            return None
        started = time.time_ns()
        listings: list[Listing] = []
        named: list[tuple[int, str]] = []
        for si, (root, old, names) in enumerate(zip(self.roots, saved, answer, strict=True)):
            if names is None:
                old = dict(old)  # compared whole: one pass over the saved entries
                now = scan_listing(root)
                self.walked = True
                self.walked_existing = self.walked_existing or bool(now) or os.path.isdir(root)
                named += [(si, name) for name, ident in now.items() if old.get(name) != ident]
                named += [(si, name) for name in old if name not in now]
            elif not names:  # nothing changed there: the saved entries as they are
                now = old if isinstance(old, dict) else Over(old)
            else:
                # These few entries over the saved ones: a saved listing read per name
                # (recall/quiet.py) is never copied whole.
                now = dict(old) if isinstance(old, dict) else Over(old)
                for name in names:
                    if not is_fact_file_name(name) or "/" in name:
                        continue
                    ident = _identity(os.path.join(root, name))
                    if ident is None:
                        now.pop(name, None)
                    else:
                        now[name] = ident
                    if now.get(name) != old.get(name):
                        named.append((si, name))
            listings.append(now)
        self._scanned = ((listings[0], listings[1]), started)
        return self._scanned, named


class Over(dict[str, Identity]):
    """A listing as a few entries over a saved one looked up by name (``base.get``); walked
    whole (iteration, ``len``), the saved one is copied once and the entries applied."""

    def __init__(self, base: Mapping[str, Identity]) -> None:
        super().__init__()
        self._base = base
        self._gone: set[str] = set()
        self._whole = False

    def _all(self) -> None:
        if not self._whole:
            self._whole = True
            mine = dict(self)
            dict.clear(self)
            dict.update(self, {k: v for k, v in self._base.items() if k not in self._gone})
            dict.update(self, mine)

    def __missing__(self, name: str) -> Identity:
        if self._whole or name in self._gone:
            raise KeyError(name)
        identity = self._base.get(name)
        if identity is None:
            raise KeyError(name)
        return identity

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __setitem__(self, name: str, identity: Identity) -> None:
        self._gone.discard(name)
        super().__setitem__(name, identity)

    def pop(self, name: str, *default: Any) -> Any:
        found = self.get(name)
        self._gone.add(name)
        if dict.__contains__(self, name):
            dict.__delitem__(self, name)
        if found is None:
            if default:
                return default[0]
            raise KeyError(name)
        return found

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

    def __eq__(self, other: object) -> bool:
        self._all()
        return dict.__eq__(self, other)

    __hash__ = None


def _identity(path: str) -> tuple[int, int, int, int, int, int] | None:
    """``scan_listing``'s identity of one entry (``None``: gone)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return UNREADABLE
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
