"""Which fact files a read must look at: the store monitor's word for the derived index, else all.

A store's derived index records the monitor token it was last validated at (``derived_index
.Watch``). A cold read asks the monitor what changed in the store directory since that token:

* nothing, or a few names → the index's rows are the files, except those names: only they are
  ``lstat``-ed (and read when their rows do not vouch for them, the racy rule as always); no
  other row is checked. Valid only while the index's generation is the one read here: the
  caller checks it in the same read transaction as its rows (``Look.vouches``).
* no vouch, another monitor, "unknown", no monitor → every file ``lstat``-ed, as before.

After validating, a reader hands ``Look.seen``/``Look.recording`` to ``FactIndex.update`` so the
vouch survives its own row writes, or is recorded anew after a full walk. Why a vouch is safe
only with the generation beside it: docs/decisions.md, "The derived index vouched for by the
store monitor".
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .model import Diagnostic
from .stat_listing import INDEX_NAME

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .derived_index import FactIndex, Watch
    from .store import Store


class Look:
    """One store's files as a read must see them, and what may be recorded after."""

    __slots__ = ("diagnostics", "files", "gone", "root", "seen", "started", "token", "vouched")

    def __init__(self, root: Path, seen: Watch | None, token: list[object] | None) -> None:
        self.root = root
        self.seen = seen  # the index's watch state, read before any lstat of this look
        self.token = token  # the monitor's token now, taken before any lstat of this look
        self.started = time.time_ns()  # the racy rule's "checked" moment: before every lstat
        # Walked: every candidate file's lstat. Vouched: only the files the monitor named.
        self.files: dict[str, os.stat_result] = {}
        self.gone: list[str] = []  # vouched: named entries that are no fact files now
        self.diagnostics: list[Diagnostic] = []  # symlinks and unreadable entries seen
        self.vouched = False

    def vouches(self, generation: int) -> bool:
        """Whether every row not named here is trusted, the index being at ``generation``."""
        seen = self.seen
        return self.vouched and seen is not None and seen.valid and generation == seen.generation

    @property
    def recording(self) -> list[object] | None:
        """The token to record after every row was validated against this look (else None).

        Not with a scan diagnostic (a vouched read would not see that entry again), nor when
        the monitor named nothing (the vouch stands as it is: nothing to write), nor for a
        store directory that does not exist.
        """
        if self.diagnostics or (self.vouched and not self.files and not self.gone):
            return None
        if not self.vouched and not self.files and not os.path.isdir(self.root):
            return None  # no store to vouch for (the monitor cannot watch it): no write a read
        return self.token

    def walk(self) -> None:
        """Every file ``lstat``-ed (a vouch that no longer holds)."""
        self.vouched = False
        self.gone = []
        self.diagnostics = []
        self.started = time.time_ns()
        self.files = scan_store(self.root, self.diagnostics)

    def _named(self, names: set[str]) -> None:
        """Only ``names`` ``lstat``-ed: the rest stands as the vouched rows say."""
        self.vouched = True
        try:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            self.walk()  # the directory went away since the answer: as a walk finds it
            return
        try:
            for name in sorted(names):
                if not _candidate(name):
                    continue
                st = _entry(self.root, fd, name, self.diagnostics)
                if st is None:
                    self.gone.append(name)
                else:
                    self.files[name] = st
        finally:
            os.close(fd)


def _candidate(name: str) -> bool:
    return name[-3:] == ".md" and name[:1] != "." and name != INDEX_NAME and "/" not in name


def _entry(
    root: Path, fd: int, name: str, diagnostics: list[Diagnostic]
) -> os.stat_result | None:
    """One directory entry as ``scan_store`` judges it: its lstat, or ``None``."""
    try:
        st = os.lstat(name, dir_fd=fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        _odd(root, name, exc, diagnostics)
        return None
    if stat.S_ISREG(st.st_mode):
        return st
    _odd(root, name, st, diagnostics)
    return None


def _odd(
    root: Path, name: str, found: OSError | os.stat_result, diagnostics: list[Diagnostic]
) -> None:
    """An entry that is no regular file: a diagnostic for a symlink or an unreadable entry
    (as ``Store.snapshot``), nothing for a directory, a socket, …"""
    if isinstance(found, OSError):
        from .store import scan_diagnostic

        diagnostics.append(scan_diagnostic(root / name, found))
    elif stat.S_ISLNK(found.st_mode):
        diagnostics.append(Diagnostic("symlink", root / name, f"{name}: symlinks are not read"))


def scan_store(root: Path, diagnostics: list[Diagnostic]) -> dict[str, os.stat_result]:
    """Every candidate fact file directly in ``root``: name → its lstat, one lstat each.

    ``listdir`` and ``lstat`` relative to the directory (no path joined per file); symlinks
    and unreadable entries become diagnostics exactly as in ``Store.snapshot``.
    """
    found: dict[str, os.stat_result] = {}
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return found
    try:
        names = os.listdir(fd)
        lstat = os.lstat
        is_reg = stat.S_ISREG
        for name in names:
            if name[-3:] != ".md" or name[0] == "." or name == INDEX_NAME:
                continue
            try:
                st = lstat(name, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                _odd(root, name, exc, diagnostics)
                continue
            if is_reg(st.st_mode):
                found[name] = st
            else:
                _odd(root, name, st, diagnostics)
    finally:
        os.close(fd)
    return found


def look(stores: Sequence[Store]) -> list[Look]:
    """Each store's files now: vouched by the monitor where its index's token allows, else
    walked. One monitor request per distinct token (both stores share one, normally)."""
    from ..monitor.client import enabled

    indexes: list[FactIndex | None] = [store.index for store in stores]
    if not enabled():  # no monitor to ask: every file looked at (a row written drops a vouch)
        return [_walked(store.root) for store in stores]
    seen = [None if index is None else index.watch() for index in indexes]
    since: list[object] = [
        _since(watch.token) if watch is not None and watch.valid else None for watch in seen
    ]
    answers: list[tuple[list[object] | None, set[str] | None]] = [(None, None)] * len(stores)
    state = next((i.state for i in indexes if i is not None and i.state is not None), None)
    if state is not None and any(watch is not None for watch in seen):
        from ..monitor.client import changes_since

        groups: dict[str, list[int]] = {}
        for n, token in enumerate(since):
            groups.setdefault(repr(token), []).append(n)
        for members in groups.values():
            dirs = [str(stores[n].root) for n in members]
            got = changes_since(state, dirs, since[members[0]])
            if got is None:
                continue
            now, changed = got
            for n, found in zip(members, changed, strict=True):
                answers[n] = (now, found if since[n] is not None else None)
    looks: list[Look] = []
    for store, watch, (taken, names) in zip(stores, seen, answers, strict=True):
        view = Look(store.root, watch, taken)
        if names is None:
            view.walk()
        else:
            view._named(names)
        looks.append(view)
    return looks


def _walked(root: Path) -> Look:
    view = Look(root, None, None)
    view.walk()
    return view


def _since(token: str | None) -> object:
    """A recorded token (JSON text) as the monitor takes it."""
    import json

    if token is None:
        return None
    try:
        return json.loads(token)
    except ValueError:
        return None
