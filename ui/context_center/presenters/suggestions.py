"""Suggestions presenter: scans in the background when the tab opens; accept writes, scan never."""

from __future__ import annotations

import html

from context_engine.errors import ContextEngineError
from context_engine.suggestions.model import MemoryCandidate, SkillCandidate, Suggestions
from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QWidget

from ..dialogs.fact_editor import FactDraft, FactEditor
from ..render.markdown import render_markdown
from ..services.backend import Backend
from ..services.dismissed import FILE_NAME, DismissedStore
from ..services.hub import ChangeSet, Hub
from ..services.tasks import CancelToken, Op, TaskManager
from ..widgets.suggestions_tab import SuggestionsTab

Candidate = MemoryCandidate | SkillCandidate


def _draft(c: MemoryCandidate) -> FactDraft:
    return FactDraft(c.name, c.title, c.description, c.type, c.scope, c.body)


class SuggestionsPresenter(QObject):
    """Runs scans on the read pool and accepts on the writer.

    Signals:
        scanned(object): a scan result was shown
        accepted(object): a candidate became this Fact
        dismissed_saved(): a dismissal was written to the state root
    """

    scanned = Signal(object)
    dismissed_saved = Signal()
    accepted = Signal(object)

    def __init__(self, tab: SuggestionsTab, window: QWidget, backend: Backend,
                 tasks: TaskManager, hub: Hub) -> None:
        super().__init__(tab)
        self.tab = tab
        self.backend = backend
        self.tasks = tasks
        self.hub = hub
        self.editor = FactEditor(window)
        self.dismissed: set[str] = set()
        try:
            project_dir = getattr(getattr(backend, "paths", None), "project_dir", None)
        except ContextEngineError:  # a remote window's backend has no local paths
            project_dir = None
        # Kept in the state root per workspace; a remote window keeps them for the session.
        self.store = DismissedStore(project_dir / FILE_NAME) if project_dir is not None else None
        self._candidate: Candidate | None = None
        self._detail_generation = 0
        self._scanning: Op | None = None
        self._loaded_dismissed: set[str] = set()
        self.result: Suggestions | None = None
        hub.changes_applied.connect(self._on_changes)
        tab.rescan_requested.connect(self.scan)
        tab.candidate_selected.connect(self._on_selected)
        tab.accept_requested.connect(self._on_accept)
        tab.edit_requested.connect(self._on_edit)
        tab.dismiss_requested.connect(self._on_dismiss)
        self.editor.save_requested.connect(self._on_editor_save)

    def scan(self) -> None:
        """Scan the workspace's recent sessions in the background (cancellable)."""
        if self._scanning is not None and not self._scanning.token.cancelled:
            return  # one scan at a time; a cancelled one no longer counts
        self.tab.status.setText("Scanning recent sessions…")
        store = self.store

        def work(token: CancelToken) -> Suggestions:
            if store is not None:
                self._loaded_dismissed = store.load()
            return self.backend.suggestions(token)

        self._scanning = self.tasks.read(
            Op("Scanning sessions", work, self._on_result, self._on_failed, long=True))

    @Slot(object)
    def _on_changes(self, changes: ChangeSet) -> None:
        if changes.touches("sessions") and self.result is not None:
            self.scan()

    def _on_failed(self, exc: BaseException) -> None:
        self._scanning = None
        self.tab.status.setText(f"Scan failed: {exc}")

    def _on_result(self, result: Suggestions) -> None:
        self._scanning = None
        self.dismissed |= self._loaded_dismissed
        self.result = result
        if not getattr(result, "available", False):
            self.tab.status.setText("Suggestions are unavailable for this workspace.")
            self.tab.model.set_rows([])
            return
        self._show()
        self.scanned.emit(result)

    def _show(self) -> None:
        r = self.result
        if r is None:
            return
        everything: list[Candidate] = [*r.memories, *r.skills]
        rows = [c for c in everything if c.id not in self.dismissed]
        self.tab.model.set_rows(rows)
        self.tab.status.setText(
            f"{len(rows)} candidate(s) from {len(r.sessions)} recent session(s). "
            "Nothing is written until you accept.")

    @Slot(object)
    def _on_selected(self, candidate: Candidate | None) -> None:
        self._candidate = candidate
        self._detail_generation += 1
        generation = self._detail_generation
        if candidate is None:
            self.tab.detail.clear()
            return

        def done(text: str) -> None:
            if generation == self._detail_generation:
                self.tab.detail.setHtml(text)

        self.tasks.read(Op("Rendering", lambda t: candidate_html(candidate), done))

    @Slot(object)
    def _on_accept(self, candidate: Candidate) -> None:
        if isinstance(candidate, MemoryCandidate):
            self._accept(candidate, _draft(candidate))
        else:
            self._accept_skill(candidate)

    def _accept_skill(self, candidate: SkillCandidate) -> None:
        def done(path: object) -> None:
            self.dismissed.add(candidate.id)
            self._show()
            self.tab.status.setText(f"Skill written to {path}.")
            self.accepted.emit(path)

        def failed(exc: BaseException) -> None:
            self.tab.status.setText(f"Not accepted: {getattr(exc, 'message', str(exc))}")

        self.tasks.write(Op("Writing skill",
                            lambda t: self.backend.accept_skill(candidate), done, failed))

    @Slot(object)
    def _on_edit(self, candidate: Candidate) -> None:
        if not isinstance(candidate, MemoryCandidate):
            return  # a skill has no fact to edit
        self._candidate = candidate
        self.editor.edit(_draft(candidate))
        self.editor.setWindowTitle("Edit suggestion before accepting")

    @Slot(object)
    def _on_editor_save(self, draft: FactDraft) -> None:
        if isinstance(self._candidate, MemoryCandidate):
            self._accept(self._candidate, draft, editor=True)

    def _accept(self, candidate: MemoryCandidate, draft: FactDraft, editor: bool = False) -> None:
        def done(fact: object) -> None:
            self.dismissed.add(candidate.id)
            if editor:
                self.editor.set_busy(False)
                self.editor.accept()
            self.hub.publish(ChangeSet(frozenset({"facts"}), "app", fact))
            self._show()
            self.accepted.emit(fact)

        def failed(exc: BaseException) -> None:
            message = getattr(exc, "message", str(exc))
            if editor:
                self.editor.set_busy(False)
                self.editor.set_status(message, error=True)
            self.tab.status.setText(f"Not accepted: {message}")

        self.tasks.write(Op("Accepting suggestion",
                            lambda t: self.backend.accept(candidate, draft), done, failed))

    @Slot(object)
    def _on_dismiss(self, candidate: Candidate) -> None:
        self.dismissed.add(candidate.id)
        self._show()
        store, ids = self.store, {candidate.id}
        if store is not None:
            self.tasks.write(Op("Remembering the dismissal", lambda t: store.add(ids),
                                self._on_dismiss_saved, self._on_dismiss_failed))

    def _on_dismiss_saved(self, _result: object) -> None:
        self.dismissed_saved.emit()

    def _on_dismiss_failed(self, exc: BaseException) -> None:
        self.tab.status.setText(f"Dismissed for now; could not remember it: {exc}")


def candidate_html(c: Candidate) -> str:
    """Title, description, reason, evidence lines and the rendered proposed body."""
    evidence = "".join(f"<li>{html.escape(line)}</li>" for line in c.evidence)
    title = (c.title if isinstance(c, MemoryCandidate) else "") or c.name
    reason = (c.reason if isinstance(c, MemoryCandidate) else "") or "repeated workflow"
    return (
        f"<h3>{html.escape(title)}</h3><p><i>{html.escape(c.description)}</i></p>"
        f"<p><b>Why:</b> {html.escape(reason)}</p>"
        f"<p><b>Evidence</b></p><ul>{evidence}</ul><hr>{render_markdown(c.body)}"
    )
