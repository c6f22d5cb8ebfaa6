"""The Qt front end of the engine's confirmation protocol (S10.6, S13.4).

The engine calls ``confirm(request) -> bool`` on the thread that runs the write (our serial
writer). We hand the request to the GUI thread by a queued signal, open the dialog with
``open()`` (never ``exec()``), and the worker waits for the person's answer; the GUI thread
never blocks. Called on the GUI thread itself, it refuses (fail closed) instead of deadlocking.
No "don't ask again": every request is shown.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThread, Signal, Slot
from PySide6.QtWidgets import QWidget

from ..dialogs.confirm_dialog import ConfirmDialog, ConfirmText
from ..render.diff import diff_lines_html
from ..render.markdown import plain_block

if TYPE_CHECKING:
    from context_engine.policy.confirmation import ConfirmationRequest

ACTIONS = {"forget": "Archive", "remember": "Save"}


def confirm_text(request: ConfirmationRequest) -> ConfirmText:
    """What the dialog states: scope, type, revision N→N+1, the finding, the diff or content."""
    reason = request.reason
    if request.findings:
        reason += f" (sensitive-content rules: {', '.join(request.findings)})"
    if request.tool == "forget":
        # The person's own Forget: say it in their words, not the agent tool's.
        return ConfirmText(
            action="Forget",
            summary=f"Forget {request.reference}? It moves to the archive; Archive → "
                    "Recover brings it back.",
            scope=request.scope,
            type=request.type,
            revision=f"revision {request.revision_from}, kept in the archive"
            if request.revision_from is not None else "",
            content_html=plain_block(request.content),
        )
    action = ACTIONS.get(request.tool, "Apply")
    what = "archive" if request.revision_to is None else "write"
    return ConfirmText(
        action=action,
        summary=f"{request.tool}: {what} {request.reference}",
        tool=request.tool,
        scope=request.scope,
        type=request.type,
        revision=request.revision_label,
        reason=reason,
        content_html=diff_lines_html(request.diff) if request.diff else plain_block(
            request.content),
    )


@dataclass(eq=False)
class _Pending:
    request: ConfirmationRequest
    event: threading.Event = field(default_factory=threading.Event)
    answer: bool = False
    callback: Callable[[bool], None] | None = None

    def resolve(self, answer: bool) -> None:
        self.answer = answer
        self.event.set()
        if self.callback is not None:
            self.callback(answer)


class QtConfirmationService(QObject):
    """Implements ``context_engine.policy.confirmation.ConfirmationService`` with a dialog.

    Signals:
        shown(object): the dialog opened for this ConfirmationRequest (tests wait for it)
    """

    shown = Signal(object)
    _requested = Signal(object)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.dialog = ConfirmDialog(parent)
        self._queue: deque[_Pending] = deque()
        self._current: _Pending | None = None
        self._closed = False
        self._requested.connect(self._on_requested)

    def confirm(self, request: ConfirmationRequest) -> bool:
        """Ask a person and wait for the answer (worker threads only); False when none."""
        if self._closed or QThread.currentThread() is self.thread():
            return False  # waiting here would freeze the very thread that shows the dialog
        pending = _Pending(request)
        self._requested.emit(pending)
        pending.event.wait()
        return pending.answer

    def ask(self, request: ConfirmationRequest, callback: Callable[[bool], None]) -> None:
        """Non-blocking form for the GUI thread: ``callback(confirmed)`` later."""
        self._enqueue(_Pending(request, callback=callback))

    def close(self) -> None:
        """Refuse everything still waiting (application exit): workers never hang."""
        self._closed = True
        for pending in [*self._queue, *([self._current] if self._current else [])]:
            pending.resolve(False)
        self._queue.clear()
        self._current = None
        if self.dialog.isVisible():
            self.dialog.reject()

    @Slot(object)
    def _on_requested(self, pending: _Pending) -> None:
        if self._closed:
            pending.resolve(False)
            return
        self._enqueue(pending)

    def _enqueue(self, pending: _Pending) -> None:
        self._queue.append(pending)
        self._next()

    def _next(self) -> None:
        if self._current is not None or not self._queue:
            return
        self._current = self._queue.popleft()
        current = self._current

        def answered(ok: bool) -> None:
            if self._current is current:
                self._current = None
            current.resolve(ok)
            self._next()

        self.dialog.ask(confirm_text(current.request), answered)
        self.shown.emit(current.request)
