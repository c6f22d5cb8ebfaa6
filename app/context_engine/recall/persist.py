"""A persisted recall index: a cold process restores it instead of re-indexing every fact (issue 9).

A hook process starts cold for every prompt, and building the index of 10,000 facts costs about
half a second of CPU. This file keeps the built index (postings, per-slot arrays, pool tables)
in one ``marshal`` file next to the snapshot cache, under the workspace's data directory (S2.4),
with, per fact, the lstat identity it was indexed under and a compact record of the fields the
index uses.

On load a fact keeps its entry without a look at its text only when its current lstat identity
(device, inode, size, mtime, ctime, mode — what the snapshot cache validates; ctime catches a
same-size in-place edit with mtime set back) equals the recorded one, and that identity had
settled (untouched for the snapshot cache's ``RACY_NS``) before the recording process read its
facts. Every other recorded fact becomes a stand-in built from its record: equal to the current
fact → kept; different → re-indexed by ``Recaller.sync`` (the stand-in's terms out, the new
ones in); vanished facts are removed the same way. The result is the index a fresh build over
the same facts gives (tests compare answers). A missing, foreign, corrupt or other-version
file, or one written by other recall code (a digest of the recall sources is in the header),
is ignored and rewritten. Writes are atomic (temp file + replace); a failed write only costs
the next process a rebuild.
"""

from __future__ import annotations

import functools
import gc
import marshal
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ..digests import blake2b
from ..facts.model import Diagnostic, Fact
from ..paths import EnginePaths
from .engine import Recaller, _is_archived
from .index import SparseIndex
from .pool import POOL, PREFIX, SHADOWED, Membership, PoolTracker
from .state import LISTING_SUM, TABLES, TRACKER_KINDS
from .trace import TraceSkip

VERSION = 2

# One lstat as the snapshot cache compares it: (dev, ino, size, mtime_ns, ctime_ns, mode).
Identity = tuple[int, int, int, int, int, int]
IdentityOf = Callable[[Fact], "Identity | None"]
_NAMES: tuple[Membership, ...] = (POOL, SHADOWED, PREFIX)
_SHOWN_FROM = 2000  # facts: a smaller index is built before any progress would show


def recall_cache_path(paths: EnginePaths) -> Path:
    """``<workspace data>/cache/recall.v2.sqlite`` — never inside a store (S2.4)."""
    return paths.workspace_data / "cache" / f"recall.v{VERSION}.sqlite"


@functools.cache
def code_tag() -> str:
    """Digest of the code that shapes the saved state: another version never reads it."""
    here = Path(__file__).resolve().parent
    digest = blake2b(sys.version.encode(), digest_size=16)
    # The masked ids come from the S7.2 keys (facts/equivalence.py, session/prefix.py).
    for file in (*sorted(here.glob("*.py")), here.parent / "facts" / "model.py",
                 here.parent / "facts" / "equivalence.py", here.parent / "session" / "prefix.py",
                 here.parent / "paths.py"):
        digest.update(file.name.encode())
        try:
            digest.update(file.read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _when(value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError("malformed time")
    return datetime.fromisoformat(value)


def fact_record(fact: Fact) -> bytes:
    """The fields the index and pool use, as one ``marshal`` blob (decoded only when needed)."""
    return marshal.dumps(
        (
            fact.id, fact.revision, fact.name, fact.title, fact.description, fact.type,
            fact.scope, fact.body, _iso(fact.created_at), _iso(fact.updated_at),
        )
    )


def stand_in(blob: bytes) -> Fact:
    """The fact a record describes (no path, stamp or extras): enough to take it out again."""
    fields = marshal.loads(blob)
    if not isinstance(fields, tuple) or len(fields) != 10:
        raise TypeError("malformed fact record")
    fid, revision, name, title, description, kind, scope, body, created, updated = fields
    texts = (fid, name, title, description, kind, scope, body)
    if not all(isinstance(t, str) for t in texts) or not isinstance(revision, int):
        raise TypeError("malformed fact record")
    return Fact(
        id=fid, revision=revision, name=name, title=title, description=description,
        type=kind, scope=scope, body=body, created_at=_when(created), updated_at=_when(updated),
    )


def _read(path: Path) -> dict[str, Any] | None:
    """The saved document, or ``None`` when absent, foreign, unsafe, corrupt or other-version."""
    import sqlite3

    from .state import StateFile

    with StateFile(path).reading() as reader:
        if reader is None:
            return None
        try:
            document = reader.document()
        except (sqlite3.Error, EOFError, ValueError, TypeError):
            return None
    if document.get("version") != VERSION or document.get("code") != code_tag():
        return None
    document["tracker"] = tracker_tables(document[TABLES].get("tracker", {}))
    return document


def tracker_rows(state: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], bytes]:
    """``PoolTracker.export()``'s tables as the state's ``tracker`` rows."""
    return {
        (kind, key): marshal.dumps(value)
        for kind, table in zip(TRACKER_KINDS, state, strict=True)
        for key, value in table.items()
    }


def tracker_tables(rows: Mapping[tuple[str, str], bytes]) -> tuple[dict[str, Any], ...]:
    """The inverse of ``tracker_rows``."""
    tables: tuple[dict[str, Any], ...] = tuple({} for _ in TRACKER_KINDS)
    place = {kind: i for i, kind in enumerate(TRACKER_KINDS)}
    for (kind, key), blob in rows.items():
        tables[place[kind]][key] = marshal.loads(blob)
    return tables


def _write(
    path: Path,
    document: Mapping[str, Any],
    quiet: Mapping[str, object],
    base: Mapping[str, Any] | None = None,
) -> bool:
    """Replace the saved state; ``False`` when it could not be written.

    ``quiet`` holds what a cold turn checks before trusting the state without reading any
    fact (recall/quiet.py): the listing it was saved under and the session marks.
    """
    from .state import StateFile

    meta = {**{key: document[key] for key in ("version", "code", "failed")}, **quiet}
    given = quiet.get(TABLES)
    tables: dict[str, Any] = dict(given) if isinstance(given, Mapping) else {}
    tables["tracker"] = tracker_rows(document["tracker"])
    meta[TABLES] = tables
    if base is not None:  # the state just read from this file: write only what differs
        return StateFile(path).write_changes(base, meta, document["facts"], document["indexes"])
    return StateFile(path).write(meta, document["facts"], document["indexes"])


def _current(facts: Iterable[Fact]) -> dict[str, Fact] | None:
    """Non-archived facts by reference; ``None`` when two share one (left to a fresh build)."""
    out: dict[str, Fact] = {}
    for fact in facts:
        if _is_archived(fact):
            continue
        reference = fact.reference
        if reference in out:
            return None
        out[reference] = fact
    return out


class RecallCache:
    """Open a ``Recaller`` from the saved index, fixed up to the facts at hand; save it back."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.written = 0  # how many times this object saved the index (tests, benches)
        self._quiet: dict[str, object] = {"listing": None}
        self._quiet_more: Callable[[], Mapping[str, object]] = dict

    def open(
        self,
        facts: Sequence[Fact],
        diagnostics: Iterable[Diagnostic] = (),
        *,
        identity_of: IdentityOf,
        settled_before: int,
        quiet: Mapping[str, object] | None = None,
        quiet_more: Callable[[], Mapping[str, object]] = dict,
    ) -> Recaller:
        """A recaller whose every answer equals that of ``Recaller(facts)``.

        ``identity_of(fact)`` is the lstat identity the fact was read under (or ``None``);
        ``settled_before`` is the moment (ns) before which an identity counts as settled: the
        start of the read that produced ``facts`` minus ``RACY_NS``. ``quiet`` (and, only when
        the whole state is written, ``quiet_more()``) is saved with the state for a later cold
        turn (``recall/quiet.py``: ``quiet_meta``, ``quiet_marks``).
        """
        self._quiet = dict(quiet or {"listing": None})
        self._quiet_more = quiet_more
        diagnostics = tuple(diagnostics)
        current = _current(facts)
        restored = None
        # Tens of thousands of containers come out of one file: a cyclic-GC pass over them
        # (none can form a cycle) cost 20–50 ms a load as measured.
        paused = gc.isenabled()
        gc.disable()
        try:
            document = _read(self.file) if current is not None else None
            if document is not None and current is not None:
                restored = _restore(document, current, identity_of)
        except Exception:  # a state that does not fit: rebuild, never guess
            restored = None
        finally:
            if paused:
                gc.enable()
        if restored is None:
            recaller = _built(facts, diagnostics)
            self._save(recaller, identity_of, settled_before, {})
            return recaller
        recaller, trusted = restored
        tracked = recaller._tracker.facts
        assert current is not None and document is not None
        if trusted == len(current) == len(tracked):
            recaller.set_diagnostics(diagnostics)  # every fact vouched for: nothing to diff
            recaller.stats.restored = trusted
            listing = self._quiet.get(LISTING_SUM)
            if listing and document.get(LISTING_SUM) != listing:
                # Settled since the last save (same facts, same index): record the listing, so
                # the next cold turn reads nothing.
                from .state import StateFile

                if StateFile(self.file).update_meta(self._quiet, document["file"]):
                    self.written += 1
            return recaller
        # Each saved blob with the fact (or stand-in) it now stands for, before sync moves on.
        reuse = {ref: (tracked[ref], blob) for ref, (_, blob) in document["facts"].items()}
        changes = recaller.sync(facts, diagnostics)
        for reference, fact in current.items():
            held = tracked.get(reference)
            if held is not None and held is not fact and held == fact:
                tracked[reference] = fact  # same indexed text: keep the entry, hold the real fact
                old = reuse.get(reference)
                if old is not None:
                    reuse[reference] = (fact, old[1])
        recaller.stats.restored = trusted
        if changes or trusted != len(tracked):
            self._save(recaller, identity_of, settled_before, reuse, document)
        return recaller

    def _save(
        self,
        recaller: Recaller,
        identity_of: IdentityOf,
        settled_before: int,
        reuse: Mapping[str, tuple[Fact, bytes]],
        base: Mapping[str, Any] | None = None,
    ) -> None:
        """Write the recaller's state with each fact's settled identity (else ``None``);
        ``base``: the document it was restored from (only the differences are written)."""
        facts, pool_state, rest = recaller.export()
        records: dict[str, tuple[Identity | None, bytes]] = {}
        for reference, fact in facts.items():
            identity = identity_of(fact)
            if identity is not None and max(identity[3], identity[4]) >= settled_before:
                identity = None  # touched too recently to vouch for the text read
            kept = reuse.get(reference)
            blob = kept[1] if kept is not None and kept[0] is fact else fact_record(fact)
            records[reference] = (identity, blob)
        document = {
            "version": VERSION, "code": code_tag(), "facts": records, "tracker": pool_state,
            **rest,
        }
        if _write(self.file, document, {**self._quiet, **self._quiet_more()}, base):
            self.written += 1


def _built(facts: Sequence[Fact], diagnostics: tuple[Diagnostic, ...]) -> Recaller:
    """A fresh index of ``facts`` (a command shows the time it takes, facts/build_progress.py)."""
    if len(facts) < _SHOWN_FROM:
        return Recaller(facts, diagnostics=diagnostics)
    from ..facts.build_progress import Phase

    with Phase(f"building the recall index of {len(facts):,} facts"):
        return Recaller(facts, diagnostics=diagnostics)


def _restore(
    document: Mapping[str, Any], current: Mapping[str, Fact], identity_of: IdentityOf
) -> tuple[Recaller, int]:
    """The saved recaller with trusted facts held as themselves and the rest as stand-ins;
    also how many were trusted."""
    records = document["facts"]
    if not isinstance(records, dict):
        raise TypeError("malformed facts")
    tracked: dict[str, Fact] = {}
    trusted = 0
    for reference, (identity, blob) in records.items():
        fact = current.get(reference)
        if fact is not None and identity is not None and identity_of(fact) == tuple(identity):
            tracked[reference] = fact
            trusted += 1
            continue
        ghost = stand_in(blob)
        if ghost.reference != reference:
            raise ValueError("record does not match its reference")
        tracked[reference] = ghost
    tracker = PoolTracker.restore(tuple(document["tracker"]), tracked)
    saved = document["indexes"]
    indexes = {name: SparseIndex.restore(saved[str(name)]) for name in _NAMES}
    membership = tracker.membership
    for name, index in indexes.items():
        for key in index._keys:
            if key is not None and membership.get(key) != name:
                raise ValueError("index and pool state disagree")
    failed: dict[str, TraceSkip] = {}
    for reference, (code, file, message) in dict(document["failed"]).items():
        if reference not in tracked:
            raise ValueError("failed fact not tracked")
        failed[reference] = TraceSkip(code=str(code), file=str(file), message=str(message))
    return Recaller.restored(tracker, indexes, failed), trusted
