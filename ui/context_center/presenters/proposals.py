"""Proposals presenter: lists kept writes; accepts them (through the write tool) or dismisses."""

from __future__ import annotations

import html

from context_engine.paths import EnginePaths
from context_engine.proposals.model import Proposal
from PySide6.QtCore import QObject, Signal, Slot

from ..services.hub import ChangeSet, Hub
from ..services.tasks import Op, TaskManager
from ..widgets.proposals_panel import ProposalsPanel


class ProposalsPresenter(QObject):
    """Loads on the read pool, writes on the writer; the engine decides everything.

    Signals:
        loaded(object): the proposals shown (a tuple)
        accepted(object): a proposal was written (the engine's result)
    """

    loaded = Signal(object)
    accepted = Signal(object)

    def __init__(
        self, panel: ProposalsPanel, paths: EnginePaths | None, tasks: TaskManager, hub: Hub
    ) -> None:
        super().__init__(panel)
        self.panel = panel
        self.paths = paths
        self.tasks = tasks
        self.hub = hub
        panel.setVisible(paths is not None)  # proposals are local files (not over --remote)
        panel.proposal_selected.connect(self._on_selected)
        panel.accept_requested.connect(self._on_accept)
        panel.dismiss_requested.connect(self._on_dismiss)
        hub.changes_applied.connect(self._on_changes)

    def reload(self) -> None:
        """Read the workspace's proposals in the background."""
        paths = self.paths
        if paths is None:
            return
        from context_engine.proposals.review import store_for

        self.tasks.read(
            Op("Reading proposals", lambda t: tuple(store_for(paths).entries()), self._show,
               self._failed))

    @Slot(object)
    def _on_changes(self, changes: ChangeSet) -> None:
        if changes.touches("traces") or changes.touches("facts"):
            self.reload()

    def _show(self, proposals: tuple[object, ...]) -> None:
        self.panel.model.set_rows(proposals)
        count = len(proposals)
        self.panel.status.setText(
            f"{count} write(s) an agent asked for are waiting for your review; nothing was "
            "written." if count else "No writes are waiting for review."
        )
        self.loaded.emit(proposals)

    def _failed(self, exc: BaseException) -> None:
        self.panel.status.setText(f"Proposals unavailable: {getattr(exc, 'message', exc)}")

    @Slot(object)
    def _on_selected(self, proposal: object | None) -> None:
        self.panel.detail.setHtml(proposal_html(proposal) if proposal is not None else "")

    @Slot(object)
    def _on_accept(self, proposal: object) -> None:
        paths = self.paths
        if paths is None:
            return
        from context_engine.engine import ContextEngine
        from context_engine.proposals.review import accept

        def done(result: object) -> None:
            self.panel.status.setText(getattr(result, "result", "Written."))
            self.hub.publish(ChangeSet(frozenset({"facts"}), "app", None))
            self.reload()
            self.accepted.emit(result)

        def failed(exc: BaseException) -> None:
            self.panel.status.setText(f"Not written: {getattr(exc, 'message', exc)}")

        if not isinstance(proposal, Proposal):
            return
        pid = proposal.id
        self.tasks.write(
            Op("Accepting proposal", lambda t: accept(ContextEngine(paths), pid), done, failed))

    @Slot(object)
    def _on_dismiss(self, proposal: object) -> None:
        paths = self.paths
        if paths is None:
            return
        from context_engine.proposals.review import dismiss

        if not isinstance(proposal, Proposal):
            return
        pid = proposal.id
        self.tasks.write(
            Op("Dismissing proposal", lambda t: dismiss(paths, pid), lambda _: self.reload(),
               self._failed))


def proposal_html(proposal: object) -> str:
    """Who asked, when, why a person must confirm, and exactly what would be written."""
    if not isinstance(proposal, Proposal):
        return ""
    p = proposal
    return (
        f"<h3>{html.escape(p.tool)} {html.escape(p.reference)}</h3>"
        f"<p>{html.escape(p.agent)} · {html.escape(p.session)} · {html.escape(p.created_at)}</p>"
        f"<p><b>Why a person must confirm:</b> {html.escape(p.reason)}</p>"
        f"<pre>{html.escape(p.diff or p.content)}</pre>"
    )
