"""The recall engine: one ``Recaller`` per workspace holds the index and answers every turn (S8)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import NamedTuple

from ..facts.freshness import freshness
from ..facts.model import Diagnostic, Fact
from .block import DEFAULT_BUDGET, DEFAULT_LIMIT, BlockHit, build_block, clamp_budget, clamp_limit
from .focus import focused
from .gate import rare_enough
from .index import MASK_TERMS, OLDEST, SparseIndex, weights_for
from .pool import POOL, PREFIX, SHADOWED, Membership, PoolTracker
from .query import EMPTY_POOL, NO_MATCH, NO_TERMS, OVER_BUDGET, Query, parse_query, suppression
from .scoring import Ranked, boosted, doc_meta, micros, rank
from .snippet import SNIPPET_SEPARATOR, make_snippet
from .supersede import SubjectCache, superseded
from .tokenize import term_counts, tokens
from .trace import (
    DROPPED_DETAIL,
    LOST_BUDGET,
    LOST_LIMIT,
    LOST_OVERRIDE,
    LOST_RELATIVE,
    RecallTrace,
    TraceDrop,
    TraceHit,
    TraceSkip,
)


def _is_archived(fact: Fact) -> bool:
    """Archived or snapshot copies never enter recall or search.

    Judged by the file's place inside its store (``.archive/<file>`` or
    ``.revisions/<id>/<file>``), not by any path component: a home or workspace that
    itself lives under a folder called ``.archive`` still holds active facts.
    """
    path = fact.path
    if path is None:
        return False
    parts = getattr(path, "_parts", None)  # CPython 3.11's parsed parts: no Path objects made
    if type(parts) is list and parts and parts[-1] == path.name:
        # An anchor ("/", "C:\\") is never ".archive"/".revisions", so [-2]/[-3] decide as
        # parent.name / parent.parent.name do.
        size = len(parts)
        return (size > 1 and parts[-2] == ".archive") or (size > 2 and parts[-3] == ".revisions")
    parent = path.parent
    return parent.name == ".archive" or parent.parent.name == ".revisions"


LOST_SUPERSEDED = "superseded"
LOST_FOCUS = "off subject"
LOST_UNNAMED = "single word not in name, title or description"


def _strong(query: Query, pool: SparseIndex) -> frozenset[str]:
    """S8.5's strong terms; one that stands alone only for being long, or only for being typed
    in capitals (CI, API), must be rare in the pool. Other distinctive terms always stand."""
    size = len(pool)
    marked = query.distinctive - query.acronyms
    return frozenset(t for t in query.strong if t in marked or rare_enough(pool.df(t), size))


def _named_single(
    ranked: list[Ranked], query: Query, fact_of: Callable[[str], Fact]
) -> tuple[list[Ranked], list[Ranked]]:
    """Hits that passed the gate on one long word (S8.5's short-query rule) while the request
    also named something else must carry that word in their name, title or description: the
    request is about a fact named by it, not one that mentions it in passing. A request that is
    that one word (``weasyprint``, ``check weasyprint``) takes every fact mentioning it."""
    counting = _counting_bits(query) & ~_bits_of(query, query.weak)
    if len(_subject_terms(query)) < 2:
        return list(ranked), []
    distinctive = _bits_of(query, query.distinctive)
    kept: list[Ranked] = []
    loose: list[Ranked] = []
    for hit in ranked:
        own = hit.bits & counting
        if own.bit_count() != 1 or own & distinctive:
            kept.append(hit)
            continue
        term = query.terms[own.bit_length() - 1]
        fact = fact_of(hit.reference)
        named = term in tokens(f"{fact.name}\n{fact.title}\n{fact.description}")
        (kept if named else loose).append(hit)
    return kept, loose


def _bits_of(query: Query, terms: frozenset[str]) -> int:
    """Bitmask of ``terms`` among the query's terms (index bit order)."""
    return sum(1 << j for j, t in enumerate(query.terms[:MASK_TERMS]) if t in terms)


def _subject_terms(query: Query) -> list[str]:
    """The query's subject terms: counting, and neither generic nor a bare number."""
    skip = query.ignored | query.weak
    return [t for t in query.terms if t not in skip]


def _counting_bits(query: Query) -> int:
    """Bitmask of the query terms that count toward the gate (index bit order)."""
    counting = query.counting
    return sum(1 << j for j, t in enumerate(query.terms[:MASK_TERMS]) if t in counting)


def tie_key(fact: Fact) -> tuple[str, str, str]:
    """The last tie-break among equal scores: the id (S8.6), then name and scope.

    Files sharing one id are each indexed; without the name and scope their order would be
    slot order, which differs between a fresh build and a restored or changed index. (The
    snapshot lists facts by name and scope, so a fresh build's order is kept.)
    """
    return (fact.id, fact.name, fact.scope)


def _newer(new: Fact, old: Fact) -> bool:
    """Whether ``new`` was updated after ``old`` (unset times are oldest)."""
    return (micros(new.updated_at or new.created_at) or OLDEST) > (
        micros(old.updated_at or old.created_at) or OLDEST
    )


def _same(old: Fact, new: Fact) -> bool:
    """Whether a re-read fact is the one already indexed: the same object, else equal values.

    Not by file stamp (dev, inode, size, mtime): an editor writing in place keeps all four
    when the size does not change and the mtime is put back; only the ctime tells, and a fact
    re-read for that reason must be indexed again. Unchanged files give the same objects from
    the stores' caches, so the comparison runs for re-read facts only.
    """
    return old is new or old == new


# A candidate that lost, as recall found it: the fact (immutable) at the time, its score, the
# reason and the detail. Its ``TraceDrop`` is made only when the trace is read.
PendingDrop = tuple[Fact, float, str, str]
# A shown hit: the fact, its block entry and the snippet the block kept.
PendingHit = tuple[Fact, BlockHit, str]


class RecallResult:
    """The provider-visible block (possibly empty) and the local trace explaining it.

    A turn needs the block at once; the trace may be assembled on its first read, from values
    fixed when recall ran (facts are immutable), so it is the same whenever it is read.
    """

    __slots__ = ("_build", "_trace", "block")

    def __init__(
        self,
        block: str,
        trace: RecallTrace | None = None,
        *,
        build: Callable[[], RecallTrace] | None = None,
    ) -> None:
        if (trace is None) == (build is None):
            raise TypeError("RecallResult needs a trace or a way to build it, not both")
        self.block = block
        self._trace = trace
        self._build = build

    @property
    def trace(self) -> RecallTrace:
        """The trace (S8.10), assembled on first read."""
        if self._trace is None:
            build = self._build
            assert build is not None
            self._trace = build()
            self._build = None
        return self._trace

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecallResult):
            return NotImplemented
        return self.block == other.block and self.trace == other.trace

    # Unhashable, as the dataclass it replaces was (typeshed types __hash__ as a method).
    __hash__ = None  # type: ignore[assignment]  # reason: typeshed types __hash__ as a method

    def __repr__(self) -> str:
        return f"RecallResult(block={self.block!r}, trace={self.trace!r})"


class SearchHit(NamedTuple):
    """One explicit-search result (memory tool)."""

    fact: Fact
    score: float


class RecallerStats:
    """Counters that let tests and benchmarks see what work an update did."""

    __slots__ = ("fact_updates", "full_builds", "restored", "tokenized")  # a plain class

    def __init__(self) -> None:
        self.full_builds = 0
        self.fact_updates = 0
        self.tokenized = 0
        self.restored = 0  # facts taken over from a persisted index (recall/persist.py)


class Recaller:
    """Holds the incremental index over both stores and runs S8 recall on each turn.

    Build it from a snapshot's facts, then keep it current with :meth:`sync` (diff by
    reference, revision and file stamp) or :meth:`upsert`/:meth:`remove` per changed fact.
    Thread-safe; recall never writes a store and never raises.
    """

    def __init__(
        self, facts: Iterable[Fact] = (), *, diagnostics: Iterable[Diagnostic] = ()
    ) -> None:
        self._lock = threading.RLock()
        self._tracker = PoolTracker()
        self._indexes: dict[Membership, SparseIndex] = {
            POOL: SparseIndex(),
            SHADOWED: SparseIndex(),
            PREFIX: SparseIndex(),
        }
        self._skipped: tuple[TraceSkip, ...] = ()
        self._failed: dict[str, TraceSkip] = {}
        self._subjects = SubjectCache()
        self.stats = RecallerStats()
        self.sync(facts, diagnostics)

    @classmethod
    def restored(
        cls,
        tracker: PoolTracker,
        indexes: dict[Membership, SparseIndex],
        failed: dict[str, TraceSkip],
    ) -> Recaller:
        """A recaller over a saved state (``recall/persist.py`` checks it before handing it in)."""
        recaller = cls()
        recaller._tracker = tracker
        recaller._indexes = {name: indexes[name] for name in (POOL, SHADOWED, PREFIX)}
        recaller._failed = failed
        return recaller

    def export(self) -> tuple[dict[str, Fact], tuple[object, ...], dict[str, object]]:
        """Tracked facts, pool state and index states as plain containers (for persisting)."""
        with self._lock:
            failed = {ref: (s.code, s.file, s.message) for ref, s in self._failed.items()}
            indexes = {str(name): index.export() for name, index in self._indexes.items()}
            return (
                dict(self._tracker.facts),
                self._tracker.export(),
                {
                    "indexes": indexes,
                    "failed": failed,
                },
            )

    # ----------------------------------------------------------------- maintenance

    @property
    def pool(self) -> SparseIndex:
        """The index of recallable facts (S8.3)."""
        return self._indexes[POOL]

    def facts(self) -> list[Fact]:
        """Every tracked active fact (both stores), project first, then by name."""
        with self._lock:
            return sorted(
                self._tracker.facts.values(), key=lambda f: (f.scope != "project", f.name)
            )

    def membership(self, reference: str) -> Membership | None:
        """Whether a fact is in the pool, shadowed by a project fact, or in the prefix."""
        return self._tracker.membership.get(reference)

    def set_diagnostics(self, diagnostics: Iterable[Diagnostic]) -> None:
        """Report a snapshot's diagnostics in the trace (``sync`` does this besides the diff)."""
        with self._lock:
            self._skipped = tuple(
                TraceSkip(code=d.code, file=d.path.name, message=d.message) for d in diagnostics
            )

    def sync(self, facts: Iterable[Fact], diagnostics: Iterable[Diagnostic] = ()) -> int:
        """Bring the index up to a new snapshot; only changed facts are re-tokenized."""
        with self._lock:
            first = not self._tracker.facts
            if first and not self._failed:
                facts = list(facts)
                built = self._bulk_build(facts)
                if built is not None:
                    self._skipped = tuple(
                        TraceSkip(code=d.code, file=d.path.name, message=d.message)
                        for d in diagnostics
                    )
                    if built:
                        self.stats.full_builds += 1
                    return built
            seen: set[str] = set()
            changes = 0
            for fact in facts:
                if _is_archived(fact):
                    continue
                reference = fact.reference
                seen.add(reference)
                old = self._tracker.facts.get(reference)
                if old is not None and _same(old, fact):
                    continue
                self.upsert(fact)
                changes += 1
            for reference in [r for r in self._tracker.facts if r not in seen]:
                self.remove(reference)
                changes += 1
            for reference in [r for r in self._failed if r not in seen]:
                del self._failed[reference]
            self._skipped = tuple(
                TraceSkip(code=d.code, file=d.path.name, message=d.message) for d in diagnostics
            )
            if first and changes:
                self.stats.full_builds += 1
            return changes

    def apply(
        self,
        upserts: Iterable[Fact],
        removals: Iterable[str],
        diagnostics: Iterable[Diagnostic] = (),
    ) -> int:
        """``sync`` when the caller knows what changed (a watched host, ``recall/live.py``):
        only those facts are looked at, so the cost is that of the changed facts alone.
        References must be unique among the facts this leaves tracked."""
        with self._lock:
            changes = 0
            for reference in removals:
                self._failed.pop(reference, None)
                if reference in self._tracker.facts:
                    self.remove(reference)
                    changes += 1
            for fact in upserts:
                if _is_archived(fact):
                    continue
                old = self._tracker.facts.get(fact.reference)
                if old is not None and _same(old, fact):  # touched, not changed
                    continue
                self.upsert(fact)
                changes += 1
            self.set_diagnostics(diagnostics)
            return changes

    def _bulk_build(self, facts: list[Fact]) -> int | None:
        """First build in one pass per index; ``None`` → use the per-fact path instead.

        Same memberships, slots and postings as upserting the facts one by one (tested); the
        per-fact path keeps its exact handling of duplicate references and unusable facts.
        """
        active = [fact for fact in facts if not _is_archived(fact)]
        try:
            self._tracker.load(active)  # refuses duplicate references
        except Exception:
            self._tracker = PoolTracker()
            return None
        # The tracker's own strings as the index keys: one object per reference, not two
        # (``Fact.reference`` builds a new string each time; ~8 MB at 100,000 facts).
        references = list(self._tracker.facts)
        membership = self._tracker.membership
        groups: dict[Membership, list[tuple[str, Fact]]] = {POOL: [], SHADOWED: [], PREFIX: []}
        for reference, fact in zip(references, active, strict=True):
            groups[membership[reference]].append((reference, fact))
        try:
            for name, members in groups.items():
                # One fact's term counts alive at a time: holding every fact's counts at once
                # made the build's peak (and so the host's RSS) ~7× the finished index.
                self._indexes[name].add_many(
                    ((reference, term_counts(fact), doc_meta(fact)) for reference, fact in members),
                    len(members),
                )
        except Exception:  # an unusable fact: let the per-fact path skip and report it
            self._tracker = PoolTracker()
            self._indexes = {POOL: SparseIndex(), SHADOWED: SparseIndex(), PREFIX: SparseIndex()}
            return None
        self.stats.tokenized += len(active)
        self.stats.fact_updates += len(active)
        return len(active)

    def upsert(self, fact: Fact) -> None:
        """Index a new or changed fact (and re-decide the globals it may shadow)."""
        with self._lock:
            reference = fact.reference
            old = self._tracker.facts.get(reference)
            try:
                for move in self._tracker.upsert(fact):
                    current = self._tracker.facts[move.reference]
                    previous = old if move.reference == reference else current
                    self._move(move.reference, move.before, move.after, previous, current)
                self._failed.pop(reference, None)
            except Exception as exc:  # an unusable fact is skipped and reported, never fatal
                self._failed[reference] = TraceSkip(
                    code="unusable", file=f"{fact.name}.md", message=type(exc).__name__
                )
            self.stats.fact_updates += 1

    def remove(self, reference: str) -> None:
        """Forget a fact that left its store (forgotten, deleted, renamed)."""
        with self._lock:
            old = self._tracker.facts.get(reference)
            for move in self._tracker.remove(reference):
                current = self._tracker.facts.get(move.reference, old)
                if current is not None:
                    self._move(move.reference, move.before, move.after, current, current)
            self.stats.fact_updates += 1

    def _move(
        self,
        reference: str,
        before: Membership | None,
        after: Membership | None,
        previous: Fact | None,
        current: Fact,
    ) -> None:
        """Take ``reference`` out of its old index and put its current text in the new one."""
        if before is not None and previous is not None:
            self.stats.tokenized += 1
            self._indexes[before].remove(reference, term_counts(previous))
        if after is not None:
            self.stats.tokenized += 1
            self._indexes[after].add(reference, term_counts(current), doc_meta(current))

    # ----------------------------------------------------------------- recall

    def recall(
        self,
        message: str,
        *,
        limit: int = DEFAULT_LIMIT,
        budget: int = DEFAULT_BUDGET,
        now: datetime | None = None,
        clean: Callable[[str], str] | None = None,
    ) -> RecallResult:
        """Run S8 for one user turn; never raises (a failure yields no block and a reason).

        ``clean`` scrubs local paths from each title and snippet before the block escapes
        them (S7.4); the engine hands in its own scrubber.
        """
        moment = now if now is not None else datetime.now(UTC)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        limit = clamp_limit(limit)
        budget = clamp_budget(budget)
        try:
            with self._lock:
                return self._recall(message, limit, budget, moment, clean)
        except Exception as exc:  # recall must never fail the turn (S8.11)
            trace = RecallTrace(
                query=message.strip(),
                char_budget=budget,
                limit=limit,
                suppressed=f"recall failed: {type(exc).__name__}",
                at=moment.isoformat(),
            )
            return RecallResult(block="", trace=trace)

    def _empty(
        self, query: str, reason: str, limit: int, budget: int, at: datetime
    ) -> RecallResult:
        """A result with no block and the S8.2 reason."""
        trace = RecallTrace(
            query=query,
            char_budget=budget,
            limit=limit,
            suppressed=reason,
            skipped=self._all_skipped(),
            pool_size=len(self.pool),
            at=at.isoformat(),
        )
        return RecallResult(block="", trace=trace)

    def _all_skipped(self) -> tuple[TraceSkip, ...]:
        """Diagnostics of the snapshot plus facts that failed to index."""
        return self._skipped + tuple(self._failed.values())

    def _recall(
        self,
        message: str,
        limit: int,
        budget: int,
        now: datetime,
        clean: Callable[[str], str] | None = None,
    ) -> RecallResult:
        """The S8 pipeline under the lock."""
        text = message.strip()
        reason = suppression(text)
        if reason is not None:
            return self._empty(text, reason, limit, budget, now)
        if len(self.pool) == 0:
            return self._empty(text, EMPTY_POOL, limit, budget, now)
        query = parse_query(text)
        if not query.terms:
            return self._empty(text, NO_TERMS, limit, budget, now)
        now_us = micros(now) or 0
        pool = self.pool
        weights, avgdl, _ = weights_for(query.terms, [pool])
        strong = _strong(query, pool)
        scored = pool.score(query.terms, weights, avgdl, strong, query.ignored, query.weak)
        drops: dict[str, list[PendingDrop]] = {}
        counts: dict[str, int] = {}
        self._override_drops(query, strong, weights, avgdl, now_us, drops, counts)
        if len(scored.slots) == 0:
            return self._finish(text, "", [], 0, limit, budget, NO_MATCH, drops, counts, 0, now)
        ranking = rank(pool, scored, now_us, limit + DROPPED_DETAIL, DROPPED_DETAIL, self._tie)
        ranked, kept_total = ranking.head, ranking.kept
        counts[LOST_RELATIVE] = ranking.below_total
        drops[LOST_RELATIVE] = [self._drop(r, LOST_RELATIVE) for r in ranking.below]
        ranked, kept_total = self._refine(ranked, kept_total, query, weights, drops, counts)
        chosen, rest = ranked[:limit], ranked[limit:]
        counts[LOST_LIMIT] = kept_total - len(chosen)
        drops[LOST_LIMIT] = [self._drop(r, LOST_LIMIT) for r in rest[:DROPPED_DETAIL]]
        if clean is None:
            from ..session.privacy import Scrubber

            # default_clean's scrubber, looked up once for the turn's titles and snippets.
            clean = Scrubber.for_os_home()
        hits = [self._block_hit(r, query, now, clean) for r in chosen]
        block = build_block([h for h, _ in hits], budget, omitted=kept_total - len(chosen))
        by_id = {id(h): fact for h, fact in hits}
        by_hit = {id(h): r for (h, _), r in zip(hits, chosen, strict=True)}
        lost = [self._drop(by_hit[id(h)], LOST_BUDGET) for h in block.dropped]
        if lost:
            counts[LOST_BUDGET] = len(lost)
            drops[LOST_BUDGET] = lost
        trace_hits = [(by_id[id(hit)], hit, snippet) for hit, snippet in block.shown]
        suppressed = None if block.shown else OVER_BUDGET
        return self._finish(
            text,
            block.text,
            trace_hits,
            block.omitted,
            limit,
            budget,
            suppressed,
            drops,
            counts,
            len(scored.slots),
            now,
        )

    def _refine(
        self,
        ranked: list[Ranked],
        kept_total: int,
        query: Query,
        weights: dict[str, float],
        drops: dict[str, list[PendingDrop]],
        counts: dict[str, int],
    ) -> tuple[list[Ranked], int]:
        """The precision steps after BM25 ranking, each recorded in the trace: one-word hits
        must be named by the word, stale facts beside fresher ones on the same subject go,
        and hits after the first must stay on the request's subject."""
        fact_of = self._tracker.facts.__getitem__
        ranked, loose = _named_single(ranked, query, fact_of)
        stale = superseded(ranked, fact_of, _counting_bits(query), _newer, self._subjects)
        old = [r for r in ranked if r.reference in stale]
        ranked = [r for r in ranked if r.reference not in stale]
        ranked, unfocused = focused(ranked, _subject_terms(query), query.terms, weights, MASK_TERMS)
        steps = ((LOST_UNNAMED, loose), (LOST_SUPERSEDED, old), (LOST_FOCUS, unfocused))
        for reason, lost in steps:
            if not lost:
                continue
            drops[reason] = [
                self._drop(
                    r, reason, f"fresher: {stale[r.reference]}" if r.reference in stale else ""
                )
                for r in lost[:DROPPED_DETAIL]
            ]
            counts[reason] = len(lost)
            kept_total -= len(lost)
        return ranked, kept_total

    def _finish(
        self,
        query: str,
        block: str,
        hits: list[PendingHit],
        omitted: int,
        limit: int,
        budget: int,
        suppressed: str | None,
        drops: dict[str, list[PendingDrop]],
        counts: dict[str, int],
        candidates: int,
        now: datetime,
    ) -> RecallResult:
        """The result; its trace (``used_chars`` exactly the block length) is assembled when
        first read, from the values fixed here."""
        skipped = self._all_skipped()
        pool_size = len(self.pool)

        def build() -> RecallTrace:
            order = (
                LOST_OVERRIDE,
                LOST_UNNAMED,
                LOST_SUPERSEDED,
                LOST_FOCUS,
                LOST_BUDGET,
                LOST_LIMIT,
                LOST_RELATIVE,
            )
            return RecallTrace(
                query=query,
                hits=tuple(
                    TraceHit(id=fact.id, revision=fact.revision, name=fact.name,
                             scope=fact.scope, type=fact.type, score=hit.score,
                             freshness=hit.freshness, reason=hit.reason, snippet=snippet)
                    for fact, hit, snippet in hits
                ),
                omitted=omitted,
                char_budget=budget,
                used_chars=len(block),
                suppressed=suppressed,
                limit=limit,
                dropped=tuple(
                    TraceDrop(id=fact.id, revision=fact.revision, name=fact.name,
                              scope=fact.scope, type=fact.type, score=score, reason=reason,
                              detail=detail)
                    for lost in order
                    for fact, score, reason, detail in drops.get(lost, ())
                ),
                dropped_counts={k: v for k, v in counts.items() if v},
                skipped=skipped,
                candidates=candidates,
                pool_size=pool_size,
                at=now.isoformat(),
            )

        return RecallResult(block=block, build=build)

    def _tie(self, reference: str) -> tuple[str, str, str]:
        """The last tie-break of a tracked fact: its id (S8.6), then name and scope."""
        return tie_key(self._tracker.facts[reference])

    def _drop(self, ranked: Ranked, reason: str, detail: str = "") -> PendingDrop:
        """What the trace will record for a candidate that lost (the fact as it is now)."""
        return (self._tracker.facts[ranked.reference], ranked.score, reason, detail)

    def _override_drops(
        self,
        query: Query,
        strong: frozenset[str],
        weights: dict[str, float],
        avgdl: float,
        now_us: int,
        drops: dict[str, list[PendingDrop]],
        counts: dict[str, int],
    ) -> None:
        """Shadowed globals that would have matched: reported with the project fact that won."""
        shadow = self._indexes[SHADOWED]
        if len(shadow) == 0:
            return
        scored = shadow.score(query.terms, weights, avgdl, strong, query.ignored, query.weak)
        if len(scored.slots) == 0:
            return
        adjusted, stale = boosted(shadow, scored, now_us)
        counts[LOST_OVERRIDE] = len(adjusted)
        # Score, then id: never slot order (a restored index numbers slots differently).
        order = sorted(
            range(len(adjusted)),
            key=lambda i: (-adjusted[i], self._tie(shadow.key(int(scored.slots[i])))),
        )
        out: list[PendingDrop] = []
        for i in order[:DROPPED_DETAIL]:
            reference = shadow.key(int(scored.slots[i]))
            winner = self._tracker.overrider(reference)
            detail = f"overridden by {winner[0]} (same {winner[1]})" if winner else ""
            ranked = Ranked(reference, float(adjusted[i]), bool(stale[i]))
            out.append(self._drop(ranked, LOST_OVERRIDE, detail))
        drops[LOST_OVERRIDE] = out

    def _block_hit(
        self, ranked: Ranked, query: Query, now: datetime, clean: Callable[[str], str]
    ) -> tuple[BlockHit, Fact]:
        """Entry values for one chosen fact: matched terms, freshness, scrubbed snippet."""
        fact = self._tracker.facts[ranked.reference]
        counting = query.counting
        matched = [
            t
            for j, t in enumerate(query.terms[:MASK_TERMS])
            if ranked.bits >> j & 1 and t in counting
        ][:4]
        if len(matched) < 4 and len(query.terms) > MASK_TERMS:
            present = term_counts(fact)
            matched = [t for t in query.terms if t in present and t in counting][:4]
        reason = "matched " + ", ".join(query.shown(t) for t in matched)
        if fact.scope == "project":
            reason += "; project scope"
        # The description and the body are two things: a separator keeps them apart on the
        # one-line ``fact:`` (the snippet collapses newlines).
        source = SNIPPET_SEPARATOR.join(
            part.strip() for part in (fact.description, fact.body) if part.strip()
        )
        hit = BlockHit(
            id=fact.id,
            revision=fact.revision,
            scope=fact.scope,
            type=fact.type,
            freshness=freshness(fact, now),
            score=ranked.score,
            reason=reason,
            title=clean(fact.display_title),
            snippet=make_snippet(
                source or fact.display_title, query.text, query.terms, clean=clean
            ),
        )
        return hit, fact

    # ----------------------------------------------------------------- search (memory tool)

    def search(
        self,
        text: str,
        *,
        fact_type: str | None = None,
        scope: str | None = None,
        limit: int = 8,
        floor: float = 0.15,
    ) -> list[SearchHit]:
        """Explicit BM25 search over every active fact (S9.1): no gate, a relative floor."""
        with self._lock:
            query = parse_query(text)
            if not query.terms:
                return []
            indexes = list(self._indexes.values())
            weights, avgdl, n = weights_for(query.terms, indexes)
            if n == 0:
                return []
            found: list[SearchHit] = []
            for index in indexes:
                scored = index.score(query.terms, weights, avgdl, None)
                for slot, score in zip(scored.slots.tolist(), scored.scores.tolist(), strict=True):
                    fact = self._tracker.facts[index.key(slot)]
                    if fact_type and fact.type != fact_type:
                        continue
                    if scope and fact.scope != scope:
                        continue
                    found.append(SearchHit(fact, score))
            if not found:
                return []
            top = max(h.score for h in found)
            kept = [h for h in found if h.score >= floor * top]
            kept.sort(
                key=lambda h: (-h.score, -(micros(h.fact.updated_at) or OLDEST), tie_key(h.fact))
            )
            return kept[:limit]
