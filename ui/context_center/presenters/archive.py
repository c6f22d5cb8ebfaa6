"""Archive & Revisions presenter: loads history and the archive off-thread; diffs; writes."""

from __future__ import annotations

import html

from context_engine.facts.archive import ArchivedEntry
from context_engine.facts.model import Fact
from PySide6.QtCore import QObject, Signal, Slot

from ..render.diff import changed_fields, diff_html, record_text
from ..render.markdown import render_markdown
from ..services.backend import Backend, History
from ..services.fact_rows import FactRow
from ..services.hub import ChangeSet, Hub
from ..services.tasks import Op, TaskManager
from ..widgets.archive_tab import ArchiveTab
from .writes import WriteFlows


class ArchivePresenter(QObject):
    """Keeps the tab on the chosen fact's history and the current archive.

    Signals:
        archive_listed(int): the archive was listed; how many entries it holds
    """

    archive_listed = Signal(int)

    def __init__(self, tab: ArchiveTab, backend: Backend, tasks: TaskManager, hub: Hub,
                 writes: WriteFlows) -> None:
        super().__init__(tab)
        self.tab = tab
        self.backend = backend
        self.tasks = tasks
        self.writes = writes
        self.fact_id: str | None = None
        self.history: History | None = None
        self._entry_generation = 0
        hub.changes_applied.connect(self._on_changes)
        tab.revisions_selected.connect(self._on_revisions_selected)
        tab.restore_requested.connect(self._on_restore)
        tab.archive_selected.connect(self._on_archive_selected)
        tab.recover_requested.connect(self._on_recover)

    def show_fact(self, row: FactRow) -> None:
        """Follow the fact selected in the Facts tab."""
        self.fact_id = row.fact.id
        self._load_history()

    @Slot(object)
    def _on_changes(self, changes: ChangeSet) -> None:
        if changes.touches("facts") or changes.touches("archive"):
            self._load_history()  # one fact's history: cheap
        if changes.touches("archive"):  # listing parses every archive entry: only when it moved
            self.tasks.read(Op("Reading the archive", lambda t: self.backend.archived(),
                               self._on_archive))

    def _on_archive(self, entries: tuple[object, ...]) -> None:
        current = tuple(str(getattr(e, "path", "")) for e in self.tab.archive_model.rows)
        if tuple(str(getattr(e, "path", "")) for e in entries) != current:
            # Only a real change resets the list (and the person's selection in it).
            self.tab.archive_model.set_rows(entries)
        self.archive_listed.emit(len(entries))

    def _load_history(self) -> None:
        fact_id = self.fact_id
        if fact_id is None:
            return

        def work(token: object) -> tuple[History, str]:
            history = self.backend.history(fact_id)
            return history, render_markdown(history.active.body)  # parsed on the worker

        def done(result: tuple[History, str]) -> None:
            history, body_html = result
            if fact_id != self.fact_id:
                return
            if self.history is not None and self._signature(history) == self._signature(
                    self.history):
                return
            self.history = history
            self.tab.revisions_model.set_rows(revision_rows(history, self.writes.written_here))
            fact = history.active
            self.tab.history_label.setText(
                f"<b>{html.escape(fact.reference)}</b> — active revision {fact.revision}, "
                f"{len(history.revisions)} earlier revision(s)")
            self.tab.diff.setHtml(body_html)

        def failed(exc: BaseException) -> None:
            self.history = None
            self.tab.revisions_model.set_rows([])
            self.tab.diff.clear()  # nothing stale next to a disabled Restore
            self.tab.history_label.setText("This fact is no longer active (see the archive).")

        self.tasks.read(Op("Reading history", work, done, failed))

    @staticmethod
    def _signature(history: History) -> tuple[object, ...]:
        return (history.active.id, history.active.revision,
                tuple(f.revision for f in history.revisions))

    @Slot(list)
    def _on_revisions_selected(self, chosen: list[tuple[bool, Fact]]) -> None:
        if self.history is None or not chosen:
            return
        active = self.history.active
        if len(chosen) == 1:
            old, new = chosen[0][1], active
        else:
            new, old = chosen[0][1], chosen[-1][1]  # rows are newest first
        old_label = f"revision {old.revision}"
        new_label = f"revision {new.revision}"
        # Every field the person can change, not only the body.
        self.tab.diff.setHtml(diff_html(record_text(old), record_text(new), old_label, new_label))

    @Slot(object)
    def _on_restore(self, row: tuple[bool, Fact]) -> None:
        if self.history is None:
            return
        fact = row[1]
        self.writes.restore(self.history.active.id, fact.revision, self.history.active.revision)

    @Slot(object)
    def _on_archive_selected(self, entry: object) -> None:
        self._entry_generation += 1
        generation = self._entry_generation
        if entry is None:
            self.tab.archive_detail.clear()
            return

        def work(token: object) -> str:
            return archived_html(entry)

        def done(text: str) -> None:
            if generation == self._entry_generation:
                self.tab.archive_detail.setHtml(text)

        self.tasks.read(Op("Rendering", work, done))

    @Slot(object)
    def _on_recover(self, entry: ArchivedEntry) -> None:
        self.writes.recover(entry.path)


def revision_summary(older: object | None, newer: object) -> str:
    """What one revision changed against the one before it, in words."""
    if older is None:
        return "created"
    fields = changed_fields(older, newer)
    return ", ".join(fields) + " changed" if fields else "no field changed (restored or touched)"


def revision_rows(history: History, written_here: frozenset[tuple[str, int]] = frozenset()
                  ) -> list[tuple[object, ...]]:
    """(is_active, fact, what changed, written by) rows, newest first.

    The fact files do not record who wrote a revision: the engine's write journal does, for
    every write through its door (the app, the CLI, an agent's tool). A revision it has no
    line for was written by another program (Reasonix, an editor) or before the journal.
    """
    facts = [history.active, *history.revisions]
    known = getattr(history, "writers", None) or {}
    rows: list[tuple[object, ...]] = []
    for i, fact in enumerate(facts):
        older = facts[i + 1] if i + 1 < len(facts) else None
        who = known.get(fact.revision) or (
            "the app" if (fact.id, fact.revision) in written_here else "no record (outside?)")
        rows.append((i == 0, fact, revision_summary(older, fact), who))
    return rows


def archived_html(entry: object) -> str:
    """An archive entry's header and rendered body (or why it could not be read)."""
    fact = getattr(entry, "fact", None)
    if fact is None:
        return f"<p>{html.escape(str(getattr(entry, 'diagnostic', '')))}</p>"
    return (
        f"<h3>{html.escape(fact.display_title)}</h3><p><code>{html.escape(fact.reference)}"
        f"</code> · revision {fact.revision}</p><p><i>{html.escape(fact.description)}</i>"
        f"</p><hr>{render_markdown(fact.body)}"
    )
