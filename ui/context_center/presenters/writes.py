"""Every write the person starts: create, edit, forget, restore, recover, accept.

A person's own edit is itself the confirmation (S10.5); forget asks first (S10.4). An edit
whose file moved underneath never overwrites: the conflict dialog lets the person choose.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from context_engine.errors import (
    AlreadyExists,
    ContextEngineError,
    ModifiedExternally,
    RevisionConflict,
)
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from ..dialogs.conflict_dialog import RELOAD, SAVE_AS_NEW, ConflictDialog
from ..dialogs.fact_editor import FactDraft, FactEditor
from ..render.diff import record_text
from ..services.backend import Backend
from ..services.confirmation import QtConfirmationService
from ..services.fact_rows import FactRow
from ..services.hub import ChangeSet, Hub
from ..services.tasks import Op, TaskManager

FACT_AREAS = frozenset({"facts", "archive"})


@dataclass(frozen=True, slots=True)
class UndoStep:
    """How to undo the last write: restore ``revision`` on top of ``expected`` (S4.6).

    A restore writes a new revision, so the undo is itself undoable the same way.
    """

    fact_id: str
    reference: str
    revision: int
    expected: int

    @property
    def label(self) -> str:
        """What the status bar says next to the Undo button."""
        return f"Saved revision {self.expected} of {self.reference}"


def undo_step(before: int | None, changes: Any) -> UndoStep | None:
    """The undo of a write that moved a fact from revision ``before`` to ``changes.fact``."""
    fact = getattr(changes, "fact", None)
    if fact is None or before is None or not getattr(changes, "changed", True):
        return None
    if fact.revision <= before:
        return None
    return UndoStep(fact.id, fact.reference, before, fact.revision)


class WriteFlows(QObject):
    """Runs writes on the serial writer and publishes their ``Changes`` through the hub.

    Signals:
        saved(object): a save from the editor succeeded (the engine's Changes)
        failed(str): a write failed; the message says why
        conflict_shown(): the conflict dialog opened (tests wait for it)
        forgotten(object): a forget finished (the door's WriteOutcome; written or refused)
        undo_changed(object): the :class:`UndoStep` now offered, or None
    """

    saved = Signal(object)
    undo_changed = Signal(object)
    forgotten = Signal(object)
    failed = Signal(str)
    conflict_shown = Signal()

    def __init__(self, parent: QWidget, backend: Backend, tasks: TaskManager, hub: Hub) -> None:
        super().__init__(parent)
        self.backend = backend
        self.tasks = tasks
        self.hub = hub
        self.editor = FactEditor(parent)
        self.confirmation = QtConfirmationService(parent)
        self.confirm = self.confirmation.dialog
        self.conflict = ConflictDialog(parent)
        self.editor.save_requested.connect(self._on_save_requested)
        self.undo: UndoStep | None = None
        self.written_here: frozenset[tuple[str, int]] = frozenset()  # (id, revision) we wrote

    # -- create and edit -------------------------------------------------------------------

    def new_fact(self) -> None:
        """Open the editor on an empty draft."""
        self.editor.edit(FactDraft("", "", "", "project", "project", ""))

    def edit(self, row: FactRow) -> None:
        """Read the fact's exact bytes off-thread, then open the editor on them."""
        self.tasks.read(
            Op("Opening fact", lambda t: self.backend.draft_for(row.fact.id),
               self.editor.edit, self._report)
        )

    def notice_snapshot(self, snapshot: Any) -> None:
        """Warn in an open editor as soon as its fact moved on disk (the save will ask)."""
        draft = self.editor.draft
        if not self.editor.isVisible() or draft.is_new:
            return
        of = getattr(snapshot.rows, "revision_of", None)  # a column table: a scan of its ids
        if callable(of):
            revision = of(draft.id)
        else:
            revision = next((r.fact.revision for r in snapshot.rows if r.fact.id == draft.id),
                            None)
        if revision is None:
            self.editor.set_status("This fact is no longer active on disk (forgotten or "
                                   "moved). Saving will not recreate it silently.", error=True)
        elif revision != draft.base_revision:
            self.editor.set_status(
                f"Changed on disk since you opened it: now revision {revision}. "
                "Saving will show the difference and ask how to proceed.", error=True)

    def save_editor(self) -> None:
        """Ctrl+S from the main window: save the open editor."""
        if self.editor.isVisible():
            self.editor.buttons.accepted.emit()

    def _on_save_requested(self, draft: FactDraft) -> None:
        self._write(
            "Saving fact",
            lambda: self.backend.save(draft),
            on_done=lambda changes: self._on_saved(draft, changes),
            on_error=lambda exc: self._on_save_failed(draft, exc),
        )

    def _on_saved(self, draft: FactDraft, changes: Any) -> None:
        self.editor.set_busy(False)
        self.editor.accept()
        self.saved.emit(changes)
        self._offer_undo(undo_step(draft.base_revision, changes))

    def _offer_undo(self, step: UndoStep | None) -> None:
        self.undo = step
        self.undo_changed.emit(step)

    def undo_last(self) -> None:
        """Undo the last write: restore the revision it replaced (a new, undoable revision)."""
        step, self.undo = self.undo, None
        self.undo_changed.emit(None)
        if step is not None:
            self.restore(step.fact_id, step.revision, step.expected)

    def _on_save_failed(self, draft: FactDraft, exc: BaseException) -> None:
        self.editor.set_busy(False)
        if isinstance(exc, RevisionConflict | ModifiedExternally) and not draft.is_new:
            self.tasks.read(
                Op("Reading the file on disk", lambda t: self.backend.draft_for(str(draft.id)),
                   lambda disk: self._show_conflict(draft, disk), self._report)
            )
            return
        message = exc.message if isinstance(exc, ContextEngineError) else str(exc)
        if isinstance(exc, AlreadyExists):
            message = (f"A fact named \"{draft.name or draft.title}\" already exists in the "
                       "project or global store; nothing was written. Edit that fact, or "
                       "choose another name.")
        self.editor.set_status(message, error=True)
        self.failed.emit(message)

    def _show_conflict(self, mine: FactDraft, disk: FactDraft) -> None:
        def decide(choice: str) -> None:
            if choice == RELOAD:
                self.editor.edit(disk)
            elif choice == SAVE_AS_NEW:
                self.editor.rebase(int(disk.base_revision or 0), disk.digest)
                self._on_save_requested(self.editor.draft)
                self.editor.set_busy(True)
            else:
                self.editor.set_status("Not saved: the file changed on disk.", error=True)

        self.conflict.ask(
            mine.name, int(mine.base_revision or 0), int(disk.base_revision or 0),
            record_text(disk), record_text(self.editor.draft), decide,
        )
        self.conflict_shown.emit()

    # -- forget, restore, recover ----------------------------------------------------------

    def forget(self, row: FactRow) -> None:
        """Forget through the engine's policy; its confirmation request opens our dialog."""
        fact_id = row.fact.id

        def done(outcome: Any) -> None:
            if outcome.written and outcome.changes is not None:
                self.hub.publish(ChangeSet(FACT_AREAS, "app", outcome.changes))
            self.forgotten.emit(outcome)

        self.tasks.write(
            Op("Forgetting fact", lambda token: self.backend.forget(fact_id),
               done, self._report)
        )

    def restore(self, fact_id: str, revision: int, active_revision: int,
                on_done: Callable[[Any], None] | None = None) -> None:
        """Restore (the person's click is the confirmation, S10.5); offered for undo after."""
        def done(changes: Any) -> None:
            self._offer_undo(undo_step(active_revision, changes))
            if on_done is not None:
                on_done(changes)

        self._write("Restoring revision",
                    lambda: self.backend.restore(fact_id, revision, active_revision), done)

    def recover(self, archive_path: Any, on_done: Callable[[Any], None] | None = None) -> None:
        """Recover an archive entry (the person's click is the confirmation, S10.5)."""
        self._write("Recovering fact", lambda: self.backend.recover(archive_path), on_done)

    # -- plumbing ------------------------------------------------------------------------------

    def _write(
        self,
        label: str,
        call: Callable[[], Any],
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        areas: frozenset[str] = FACT_AREAS,
    ) -> Op:
        def success(changes: Any) -> None:
            fact = getattr(changes, "fact", None)
            if fact is not None:
                self.written_here = self.written_here | {(fact.id, fact.revision)}
            self.hub.publish(ChangeSet(areas, "app", changes))
            if on_done is not None:
                on_done(changes)

        return self.tasks.write(
            Op(label, lambda token: call(), success, on_error or self._report)
        )

    def _report(self, exc: BaseException) -> None:
        message = exc.message if isinstance(exc, ContextEngineError) else str(exc)
        self.failed.emit(message)


def error_html(message: str) -> str:
    """A failure line for a detail pane."""
    return f"<p style='color:#cf222e'>{html.escape(message)}</p>"
