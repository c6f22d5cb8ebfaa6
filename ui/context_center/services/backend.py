"""The app's one backend: every read and write of a window goes through one ``Catalog``.

Local or remote is the catalog's business (``LocalCatalog`` in process, ``RemoteCatalog`` over
``serve --stdio``), not the app's: the presenters see one class. Every method runs on a worker
thread, never the GUI. Writes are ``catalog.apply(op, Person("app"))``: the person's click is
the confirmation (S10.5); only a forget asks, once, in this window's dialog (S10.4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from context_engine.catalog.base import (
    Catalog,
    CompletionKind,
    History,
    InstructionsView,
    RecallRun,
)
from context_engine.catalog.errors import Unavailable
from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.ops import Accept, Forget, Person, Recover, Restore, Save, WriteOutcome
from context_engine.defaults import RECALL_BUDGET, RECALL_LIMIT
from context_engine.errors import PolicyRefused
from context_engine.facts.archive import ArchivedEntry
from context_engine.facts.changes import Changes
from context_engine.facts.model import FACT_TYPES, SCOPES, Fact
from context_engine.paths import EnginePaths, slugify
from context_engine.policy.confirmation import ConfirmationService
from context_engine.recall.trace import RecallTrace
from context_engine.suggestions.accept import Edits
from context_engine.suggestions.model import MemoryCandidate, SkillCandidate, Suggestions

from ..dialogs.fact_editor import FactDraft
from .fact_rows import FactsSnapshot, ListedTexts, build_rows, still_shown
from .tasks import CancelToken

if TYPE_CHECKING:
    from context_engine.facts.table_columns import Indexed

__all__ = ["Backend", "History", "InstructionsView", "RecallRun", "TraceHistory"]

PERSON = Person("app")
FIRST_PAGE = 2_000  # rows of the first paint from the derived index


@dataclass(frozen=True, slots=True)
class TraceHistory:
    """The last trace and recent ones (newest first)."""

    last: RecallTrace | None
    recent: tuple[RecallTrace, ...]


@dataclass(frozen=True, slots=True)
class Unchecked:
    """Rows shown from the derived indexes before their files are checked."""

    snapshot: FactsSnapshot
    indexed: Indexed


def _changes(outcome: WriteOutcome) -> Changes:
    """The ``Changes`` the presenters publish, from the door's outcome."""
    if not outcome.ran:
        raise PolicyRefused(outcome.result)
    if outcome.changes is not None:  # in process: the store's own value
        return outcome.changes
    return Changes(fact=outcome.fact, archived=tuple(Path(p) for p in outcome.archived))


class Backend:
    """One window's reads and writes, all through ``catalog``."""

    def __init__(self, catalog: Catalog, *, local: bool = True,
                 recall_in_child: bool = False, keep_index: bool = False) -> None:
        self.catalog = catalog
        self.local = local  # a local window also watches this machine's folders
        # Recall in a child process (memory bounded): only for a catalog with the engine's
        # own files and defaults, which a fresh process opens exactly the same way.
        self.recall_in_child = recall_in_child
        # A window is a host that records traces (and writes facts) anyway: its first read of
        # a home without a derived index creates it, as a hook or the MCP server does, so the
        # rows parsed so far are committed as it goes and the next window starts from them.
        self.keep_index = keep_index

    @property
    def name(self) -> str:
        """The catalog's display name (``local`` or the remote's ``host:root``)."""
        return self.catalog.name

    def local_catalog(self) -> LocalCatalog:
        """This window's in-process catalog; import and bundles work on local files only."""
        if not isinstance(self.catalog, LocalCatalog):
            raise Unavailable("local", "this needs local files; not available remotely")
        return self.catalog

    @property
    def paths(self) -> EnginePaths:
        """This window's workspace paths (a local window's; ``Unavailable`` for a remote)."""
        return self.local_catalog().paths

    def confirm_with(self, confirmation: ConfirmationService) -> None:
        """Let this window's dialog answer what the catalog's policy asks a person."""
        self.catalog.confirm_with(confirmation)

    # -- reads ---------------------------------------------------------------------------------

    def facts(self, token: CancelToken | None = None) -> FactsSnapshot:
        """Both stores' facts as Facts-tab rows, with overrides and duplicates explained."""
        snap = self.catalog.list_facts()
        if token is not None:
            token.check()
        # The archive is listed by the Archive tab (on archive changes only), not per reload.
        return FactsSnapshot(build_rows(snap.facts), snap.diagnostics)

    def first_rows(self, token: CancelToken | None = None) -> FactsSnapshot | None:
        """A first page of the project store's rows its derived index vouches for, else ``None``.

        Each file is checked by one lstat, no directory scan: milliseconds at any size. Rows
        carry no body (read when shown). ``None`` for a remote window or an empty page.
        """
        if not isinstance(self.catalog, LocalCatalog):
            return None
        from context_engine.facts.table_listing import first_rows

        self.catalog.require("facts")
        texts = ListedTexts()
        facts = first_rows(self.catalog.memory.stores.get("project"), FIRST_PAGE, texts)
        if token is not None:
            token.check()
        if not facts:
            return None
        return FactsSnapshot(build_rows(facts, lazy=True, bodies=texts.bodies), (), partial=True)

    def listed_facts(
        self, token: CancelToken | None = None, previous: FactsSnapshot | None = None
    ) -> FactsSnapshot | None:
        """Both stores' rows, validated against the files, without bodies; ``None`` if remote.

        Memory stays bounded at any size: the derived index vouches for unchanged files, the
        rest are parsed (and the index told), and no parsed body is kept — each row keeps only
        its search text; the detail pane reads the body from the file. Facts unchanged since
        ``previous`` (the rows on screen) are reused, not held twice.
        """
        if not isinstance(self.catalog, LocalCatalog):
            return None
        from context_engine.facts.table_listing import list_stores

        self.catalog.require("facts")
        texts = ListedTexts(previous.rows if previous is not None else ())
        listing = list_stores(self.catalog.memory.stores.all(), texts)
        if token is not None:
            token.check()
        texts.forget_previous()  # its map of the old rows is not needed any more
        if previous is not None and still_shown(previous, listing.facts, listing.diagnostics):
            return previous  # nothing changed: the rows on screen stay (no second copy)
        rows = build_rows(listing.facts, lazy=True, bodies=texts.bodies, texts=texts.texts)
        return FactsSnapshot(rows, listing.diagnostics)

    def listed_table(
        self, token: CancelToken | None = None, previous: FactsSnapshot | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> FactsSnapshot | None:
        """Both stores' rows as a column table (``fact_table``); ``None`` for a remote window.

        No ``Fact`` per row and no body: the derived index vouches for unchanged files (the
        rest are parsed and the index told, a batch at a time), search words are looked up in
        it (:meth:`search`). Rows unchanged since ``previous`` share its strings; when nothing
        changed at all, ``previous`` itself is answered (no second table). ``progress(done,
        total)``: after each batch of files parsed (what it raises stops the read there).
        """
        if not isinstance(self.catalog, LocalCatalog):
            return None
        from context_engine.facts.table_columns import list_columns

        from .fact_table import Rows, build_table, same_rows

        self.catalog.require("facts")
        stores = self.catalog.memory.stores.all()
        if self.keep_index:
            for store in stores:
                if store.index is not None:
                    store.index.create = True
        before = previous.rows if previous is not None and previous.columns else None
        old = (before.table.cols, before.order) if isinstance(before, Rows) else None
        cols = list_columns(stores, old, progress)
        if token is not None:
            token.check()
        if previous is not None and isinstance(before, Rows) and \
                same_rows(before, cols, tuple(previous.diagnostics)):
            return previous  # nothing changed: the rows on screen stay
        table = build_table(cols, search=self.search)
        return FactsSnapshot(Rows(table), tuple(cols.diagnostics))

    def indexed_table(self, token: CancelToken | None = None,
                      limit: int | None = None) -> Unchecked | None:
        """Both stores' rows as their derived indexes recorded them, not yet checked against
        the files (no lstat, no notes): shown at once. ``None``: remote, or no indexed row.

        :meth:`validated_table` then gives the checked table (``partial`` until then).
        ``limit``: a first page (each store's first rows in listing order; milliseconds).
        """
        if not isinstance(self.catalog, LocalCatalog):
            return None
        from context_engine.facts.table_columns import indexed_columns

        from .fact_table import Rows, build_table

        self.catalog.require("facts")
        indexed = indexed_columns(self.catalog.memory.stores.all(), limit)
        if token is not None:
            token.check()
        if indexed is None:
            return None
        table = build_table(indexed.cols, search=self.search, notes=False)
        return Unchecked(FactsSnapshot(Rows(table), (), partial=True), indexed)

    def validated_table(self, unchecked: Unchecked,
                        token: CancelToken | None = None) -> FactsSnapshot:
        """The table :meth:`listed_table` gives, from the rows of :meth:`indexed_table`: the
        files checked (the very rows kept when they all vouch), then keys and notes."""
        from context_engine.facts.table_columns import validated_columns

        from .fact_table import Rows, build_table, with_notes

        cols = validated_columns(self.local_catalog().memory.stores.all(), unchecked.indexed)
        if token is not None:
            token.check()
        shown = unchecked.snapshot.rows
        assert isinstance(shown, Rows)
        if cols.file is unchecked.indexed.cols.file:  # every row shown was vouched for
            table = with_notes(shown.table, cols)
        else:
            table = build_table(cols, search=self.search)
        return FactsSnapshot(Rows(table), tuple(cols.diagnostics))

    def search(self, words: Sequence[str],
               names: Sequence[set[str] | None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> list[set[str] | None]:
        """Per store (project, global): the fact files whose text holds every word, looked up
        in the store's derived index (``None``: no usable index, the caller checks the rows).
        ``cancelled`` turning true aborts the scan (``SearchInterrupted``)."""
        from context_engine.facts.table_columns import search_files

        stores = self.local_catalog().memory.stores.all()
        return [search_files(store.index, store.scope, words,
                             None if names is None or k >= len(names) else names[k], cancelled)
                for k, store in enumerate(stores)]

    def body(self, ref: str) -> str:
        """The body of the active fact ``ref`` (read when a row is shown)."""
        return self.catalog.read(ref).fact.body

    def draft_for(self, ref: str) -> FactDraft:
        """A draft of the active fact ``ref`` with the revision and digest it was read at."""
        loaded = self.catalog.read(ref)
        return FactDraft.of(loaded.fact, loaded.digest)

    def history(self, ref: str) -> History:
        """The active fact ``ref`` names and its earlier revisions."""
        return self.catalog.revisions(ref)

    def archived(self) -> tuple[ArchivedEntry, ...]:
        """Archive entries of both stores, newest first."""
        return self.catalog.archived()

    def instructions(
        self, token: CancelToken | None = None, target: str | None = None
    ) -> InstructionsView:
        """The resolution for ``target`` (relative to the workspace root) and the block."""
        return self.catalog.instructions(target or None)

    def recall(
        self, message: str, limit: int = RECALL_LIMIT, budget: int = RECALL_BUDGET,
        token: CancelToken | None = None,
    ) -> RecallRun:
        """Run S8 recall exactly as ``context-engine recall`` does; the trace is recorded.

        With ``recall_in_child`` (a window's own local catalog) it runs in a child process:
        the live recall index never stays in the app (``services/recall_child.py``).
        """
        if self.recall_in_child and isinstance(self.catalog, LocalCatalog):
            from .recall_child import recall_in_child

            self.catalog.require("recall")
            return recall_in_child(self.catalog.paths, message, limit, budget, token)
        return self.catalog.recall(message, limit=limit, budget=budget)

    def trace_history(self, token: CancelToken | None = None) -> TraceHistory:
        """The last recorded trace and the recent ones, newest first."""
        return TraceHistory(self.catalog.last_trace(), self.catalog.recent_traces())

    def suggestions(self, token: CancelToken | None = None) -> Suggestions:
        """Scan recent sessions (never writes); without the capability: unavailable (S11.6)."""
        try:
            return self.catalog.suggestions()
        except Unavailable:
            return Suggestions(available=False)

    def complete(self, kind: CompletionKind, prefix: str = "") -> tuple[str, ...]:
        """Completion candidates (the CLI's ``complete``)."""
        return self.catalog.complete(kind, prefix)

    # -- writes (serial writer thread only) ----------------------------------------------------

    def save(self, draft: FactDraft) -> Changes:
        """Create or update from the editor; an update checks the revision and bytes it read."""
        if draft.is_new:
            # Named by reference: created in exactly the chosen scope; a same-named fact in the
            # other scope is kept (an override pair), never archived behind the person's back.
            name = f"{draft.scope}/{slugify(draft.name or draft.title)}.md"
            op = Save(name=name, title=draft.title, description=draft.description, body=draft.body,
                      type=draft.type, scope=draft.scope, create_only=True)
        else:
            op = Save(id=draft.id, title=draft.title, description=draft.description,
                      body=draft.body, type=draft.type, scope=draft.scope,
                      expected_revision=draft.base_revision, expected_digest=draft.digest)
        return _changes(self.catalog.apply(op, PERSON))

    def forget(self, fact_id: str) -> WriteOutcome:
        """Forget by id: exactly this identity; the window's dialog asks once (S10.4)."""
        return self.catalog.apply(Forget(fact_id), PERSON)

    def restore(self, fact_id: str, revision: int, expected_revision: int) -> Changes:
        """Snapshot ``revision`` becomes a new revision (S4.6)."""
        return _changes(self.catalog.apply(Restore(fact_id, revision, expected_revision), PERSON))

    def recover(self, archive_path: Path | str) -> Changes:
        """Bring an archive entry back (S4.8); the path is the catalog's own."""
        return _changes(self.catalog.apply(Recover(str(archive_path)), PERSON))

    def accept_skill(self, candidate: SkillCandidate) -> Path:
        """Write a skill candidate as a new SKILL.md, never over an existing one (S11.5)."""
        outcome = self.catalog.apply(Accept(candidate.id, candidate=candidate), PERSON)
        if outcome.path is None:
            raise PolicyRefused("the suggestion was not written as a skill")
        return Path(outcome.path)

    def accept(self, candidate: MemoryCandidate, draft: FactDraft) -> Fact:
        """Save an (edited) memory candidate as a new fact, create-only (S11.5)."""
        edits = Edits(name=draft.name or None, title=draft.title, description=draft.description,
                      type=next((t for t in FACT_TYPES if t == draft.type), None),
                      scope=next((s for s in SCOPES if s == draft.scope), None), body=draft.body)
        outcome = self.catalog.apply(Accept(candidate.id, edits, candidate), PERSON)
        if outcome.fact is None:
            raise PolicyRefused("the suggestion was not saved as a fact")
        return outcome.fact

