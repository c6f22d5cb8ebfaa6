"""The recall trace (S8.10) and its per-workspace persistence (S2.4).

The trace is local-only (CLI, app, ``/memory recall``); it never enters a provider request.
The last trace and a bounded history (200) live under the workspace's own data directory,
never inside a store; every write is atomic (temp file + rename) or a single append.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .. import bounded_json
from ..filemodes import append_private, write_private
from ..records import field, record

HISTORY_LIMIT = 200

# Why a candidate that passed the gate did not make it into the block.
LOST_BUDGET = "budget"
LOST_LIMIT = "limit"
LOST_RELATIVE = "relative score"
LOST_OVERRIDE = "project override"

# Per reason, the trace lists at most this many candidates (best first) plus a total count.
DROPPED_DETAIL = 20


@record
class TraceFact:
    """The fact a hit or a drop is about, with its score."""

    id: str
    revision: int
    name: str
    scope: str
    type: str
    score: float


@record
class TraceHit(TraceFact):
    """One recalled fact as shown in the block."""

    freshness: str
    reason: str
    snippet: str


@record
class TraceDrop(TraceFact):
    """A candidate that passed the gate but lost, and why."""

    reason: str
    detail: str = ""


@record
class TraceSkip:
    """A fact file recall could not use (unreadable, quarantined); file name only."""

    code: str
    file: str
    message: str


@record
class RecallTrace:
    """Everything needed to explain one recall decision."""

    query: str
    hits: tuple[TraceHit, ...] = ()
    omitted: int = 0
    char_budget: int = 0
    used_chars: int = 0
    suppressed: str | None = None
    limit: int = 0
    dropped: tuple[TraceDrop, ...] = ()
    dropped_counts: dict[str, int] = field(default_factory=dict)
    skipped: tuple[TraceSkip, ...] = ()
    candidates: int = 0
    pool_size: int = 0
    at: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (S12 ``recall`` → ``trace``), plus the extra explanation keys.

        What ``dataclasses.asdict`` gives, hits, drops and skips as lists (same keys, order
        and values; a test compares the two), built directly: ``asdict`` recurses through
        ``deepcopy`` for every value, about 1 ms for a trace listing 40 drops.
        """
        return {
            "query": self.query,
            "hits": [_plain(hit, _HIT_FIELDS) for hit in self.hits],
            "omitted": self.omitted,
            "char_budget": self.char_budget,
            "used_chars": self.used_chars,
            "suppressed": self.suppressed,
            "limit": self.limit,
            "dropped": [_plain(drop, _DROP_FIELDS) for drop in self.dropped],
            "dropped_counts": dict(self.dropped_counts),
            "skipped": [_plain(skip, _SKIP_FIELDS) for skip in self.skipped],
            "candidates": self.candidates,
            "pool_size": self.pool_size,
            "at": self.at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RecallTrace:
        """Inverse of :meth:`to_dict` (unknown keys ignored)."""
        return cls(
            query=str(data.get("query", "")),
            hits=tuple(TraceHit(**h) for h in data.get("hits", ())),
            omitted=int(data.get("omitted", 0)),
            char_budget=int(data.get("char_budget", 0)),
            used_chars=int(data.get("used_chars", 0)),
            suppressed=data.get("suppressed"),
            limit=int(data.get("limit", 0)),
            dropped=tuple(TraceDrop(**d) for d in data.get("dropped", ())),
            dropped_counts={
                str(k): int(v) for k, v in dict(data.get("dropped_counts", {})).items()
            },
            skipped=tuple(TraceSkip(**s) for s in data.get("skipped", ())),
            candidates=int(data.get("candidates", 0)),
            pool_size=int(data.get("pool_size", 0)),
            at=str(data.get("at", "")),
        )

    def to_text(self) -> str:
        """Human-readable trace for ``/memory recall`` and the CLI."""
        lines = [f"query: {self.query}"]
        if self.at:
            lines.append(f"at: {self.at}")
        lines.append(
            f"pool: {self.pool_size} fact(s); candidates passing the gate: {self.candidates}"
        )
        lines.append(f"budget: {self.used_chars}/{self.char_budget} chars; limit {self.limit}")
        if self.suppressed:
            lines.append(f"suppressed: {self.suppressed}")
        lines.append(f"hits: {len(self.hits)}; omitted: {self.omitted}")
        for hit in self.hits:
            lines.append(
                f"  + {hit.scope}/{hit.name}.md id={hit.id} revision={hit.revision} "
                f"type={hit.type} freshness={hit.freshness} score={hit.score:.3f} ({hit.reason})"
            )
        if self.dropped:
            lines.append("dropped:")
            for drop in self.dropped:
                extra = f" — {drop.detail}" if drop.detail else ""
                lines.append(
                    f"  - {drop.scope}/{drop.name}.md id={drop.id} score={drop.score:.3f}: "
                    f"{drop.reason}{extra}"
                )
            shown: dict[str, int] = {}
            for drop in self.dropped:
                shown[drop.reason] = shown.get(drop.reason, 0) + 1
            for reason, total in sorted(self.dropped_counts.items()):
                if total > shown.get(reason, 0):
                    lines.append(f"  … {total - shown.get(reason, 0)} more lost on {reason}")
        for skip in self.skipped:
            lines.append(f"skipped: {skip.file} ({skip.code}): {skip.message}")
        return "\n".join(lines) + "\n"


_HIT_FIELDS: tuple[str, ...] = TraceHit.__match_args__
_DROP_FIELDS: tuple[str, ...] = TraceDrop.__match_args__
_SKIP_FIELDS: tuple[str, ...] = TraceSkip.__match_args__


def _plain(record: object, names: tuple[str, ...]) -> dict[str, Any]:
    """A trace record's fields as a dict, in declaration order (its values are scalars)."""
    return {name: getattr(record, name) for name in names}


# ``redact`` is a pure function of its text; a host's turns keep listing the same names,
# details and snippets, so each distinct string is scanned once (bounded: starts over when full).
_REDACTED: dict[str, str] = {}
_REDACTED_LIMIT = 2048
_REDACTED_LONGEST = 1000  # longer texts (a pasted prompt) are scanned each time, not kept


def _redact_cached(text: str) -> str:
    """``policy.sensitive.redact(text)``, remembered for short texts."""
    found = _REDACTED.get(text)
    if found is None:
        from ..policy.sensitive import redact  # only when a trace is written

        found = redact(text)
        if len(text) <= _REDACTED_LONGEST:
            if len(_REDACTED) >= _REDACTED_LIMIT:
                _REDACTED.clear()
            _REDACTED[text] = found
    return found


def redact_trace(data: dict[str, Any]) -> dict[str, Any]:
    """The trace with every secret in the query, snippets, reasons and names redacted (S8.10)."""
    redact = _redact_cached
    out = dict(data)
    out["query"] = redact(str(data.get("query", "")))
    for key, fields in (("hits", ("snippet", "reason", "name")), ("dropped", ("detail", "name"))):
        items = []
        for item in data.get(key, ()):
            item = dict(item)
            for name in fields:
                if isinstance(item.get(name), str):
                    item[name] = redact(item[name])
            items.append(item)
        out[key] = items
    return out


def _size_of(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


class TraceLog:
    """Last trace and bounded history of one workspace, under its own data directory."""

    def __init__(
        self, directory: Path, *, stores: tuple[Path, ...] = (), limit: int = HISTORY_LIMIT
    ):
        resolved = directory.resolve()
        for store in stores:
            store_real = store.resolve()
            if resolved == store_real or store_real in resolved.parents:
                raise ValueError("recall traces must not live inside a store")
        self.directory = directory
        self.limit = limit
        # Lines in the history and its size when this log last looked: a long-lived host's
        # record then re-reads the file only when another process wrote it in between, or to
        # compact it, instead of on every turn.
        self._count: int | None = None
        self._size = -1

    @property
    def last_path(self) -> Path:
        """``recall-last.json``."""
        return self.directory / "recall-last.json"

    @property
    def history_path(self) -> Path:
        """``recall-history.jsonl`` (one trace a line, newest last)."""
        return self.directory / "recall-history.jsonl"

    def record(self, trace: RecallTrace) -> None:
        """Persist ``trace`` as the last one and append it to the history."""
        data = redact_trace(trace.to_dict())
        # One compact encoding for both files (the C encoder; ``indent`` takes the pure-Python
        # one, ~0.4 ms a turn): every reader parses JSON. Not fsync'd: a local explanation of
        # the last turn, replaced atomically every turn; a crash may lose it, never tear it.
        line = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
        write_private(self.last_path, line, durable=False)
        append_private(self.history_path, line)
        self._compact_if_needed(len(line.encode("utf-8")))

    def _compact_if_needed(self, appended: int) -> None:
        """Keep the newest ``limit`` lines; rewrite atomically once the file holds twice that."""
        size = _size_of(self.history_path)
        if self._count is not None and size == self._size + appended:
            self._count += 1  # only our line was added since we last looked
        else:
            self._count = self._count_lines()
        self._size = size
        # Rewriting on every turn would cost the whole history per turn; twice the limit
        # bounds the file while amortising the rewrite.
        if self._count > 2 * self.limit:
            lines = self._lines()
            write_private(self.history_path, "".join(line + "\n" for line in lines[-self.limit :]))
            self._count, self._size = None, -1

    def _count_lines(self) -> int:
        """The history's lines (a torn last one included, as ``_lines`` has it), on its bytes.

        A cold process (each hook turn) counts a history of up to 400 traces, ~3 MB: decoding
        and splitting it as text cost ~5 ms a megabyte, counting newlines a small part of that.
        A blank line (never written; a hand edit) counts here and not in ``_lines``: at worst
        the history is compacted that many lines early.
        """
        try:
            data = self.history_path.read_bytes()
        except FileNotFoundError:
            return 0
        torn = data[data.rfind(b"\n") + 1 :]
        return data.count(b"\n") + (1 if torn.strip() else 0)

    def _lines(self) -> list[str]:
        """Complete history lines (a torn last line is ignored)."""
        try:
            text = self.history_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [line for line in text.split("\n") if line.strip()]

    def last(self) -> RecallTrace | None:
        """The most recent trace, ``None`` before the first recall."""
        try:
            data = bounded_json.loads(self.last_path.read_text(encoding="utf-8"), what="trace")
            return RecallTrace.from_dict(data)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # missing, or edited into something that is not a trace

    def history(self) -> list[RecallTrace]:
        """Up to ``limit`` traces, oldest first."""
        out: list[RecallTrace] = []
        for line in self._lines()[-self.limit :]:
            try:
                out.append(RecallTrace.from_dict(bounded_json.loads(line, what="trace")))
            except (ValueError, TypeError, KeyError, AttributeError):
                continue
        return out
