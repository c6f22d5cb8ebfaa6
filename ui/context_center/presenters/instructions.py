"""Instructions presenter: resolves off-thread, builds the tree, links diagnostics to files."""

from __future__ import annotations

import html
from pathlib import Path

from context_engine.instructions import InstructionDocument
from PySide6.QtCore import QObject, Signal, Slot

from ..models.tree import Node
from ..render.markdown import render_markdown
from ..services.backend import Backend, InstructionsView
from ..services.hub import ChangeSet, Hub
from ..services.tasks import Op, TaskManager
from ..widgets.instructions_tab import InstructionsTab


def build_tree(view: InstructionsView) -> Node:
    """Documents in precedence order, each with its imports nested by the file that made them."""
    root = Node(values=())
    for doc in view.resolution.documents:
        kind = "local" if doc.local else "normal"
        node = root.add(Node((f"{doc.order}. {doc.label}", doc.scope, kind, doc.dir_label),
                             payload=doc, kind="document", tooltip=str(doc.path)))
        by_source: dict[Path, Node] = {doc.path: node}
        for record in doc.imports:  # document order: a parent import precedes its children
            parent = by_source.get(record.source, node)
            child = parent.add(Node((f"@{record.path.name}  (line {record.line})", "", "import",
                                     str(record.path.parent.name)), payload=record,
                                    kind="import", tooltip=str(record.path)))
            by_source[record.path] = child
    return root


class InstructionsPresenter(QObject):
    """Fills the Instructions tab from the latest resolution.

    Signals:
        watched(list, list): files the resolver read and their folders (for the watcher)
    """

    watched = Signal(list, list)

    def __init__(self, tab: InstructionsTab, backend: Backend, tasks: TaskManager,
                 hub: Hub) -> None:
        super().__init__(tab)
        self.tab = tab
        self.backend = backend
        self.tasks = tasks
        self.view: InstructionsView | None = None
        self._rendered: dict[int, str] = {}
        self._selected_label: str | None = None
        hub.changes_applied.connect(self._on_changes)
        tab.document_selected.connect(self._on_document)
        tab.diagnostic_activated.connect(self._on_diagnostic)
        tab.target_changed.connect(self._on_target)
        self.target = ""

    @Slot(object)
    def _on_changes(self, changes: ChangeSet) -> None:
        if changes.touches("instructions"):
            self._start()

    @Slot(str)
    def _on_target(self, target: str) -> None:
        self.target = target.strip()
        self._start()

    def _start(self) -> None:
        target = self.target  # captured here: the worker never reads presenter state
        self.tasks.read(Op("Resolving instructions", lambda t: self._resolve(target),
                           self._on_view, self._on_failed))

    def _on_failed(self, exc: BaseException) -> None:
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        self.tab.header.setText(f"<span style='color:#cf222e'>Instructions could not be "
                                f"resolved: {html.escape(message)}</span>")

    def _resolve(self, target: str) -> tuple[InstructionsView, dict[int, str], list[Path]]:
        """Worker: resolve, render every document's Markdown once, find folders to watch."""
        view = (self.backend.instructions(target=target) if target
                else self.backend.instructions())
        rendered = {doc.order: render_markdown(doc.body) for doc in view.resolution.documents}
        folders = sorted({p.parent for p, _ in view.resolution.watched if p.parent.is_dir()})
        return view, rendered, folders

    def _on_view(self, result: tuple[InstructionsView, dict[int, str], list[Path]]) -> None:
        view, self._rendered, folders = result
        self.view = view
        # Imported files live anywhere under the root: watch exactly the ones the resolver read.
        self.watched.emit([p for p, _ in view.resolution.watched], folders)
        res = view.resolution
        self.tab.header.setText(
            f"Workspace root <code>{html.escape(str(res.root))}</code>, resolved for "
            f"<code>{html.escape(str(res.target))}</code> — "
            f"{len(res.documents)} document(s), {len(res.diagnostics)} diagnostic(s)"
        )
        self.tab.tree_model.set_root(build_tree(view))
        self.tab.tree.expandAll()
        self.tab.diagnostics_model.set_rows(res.diagnostics)
        self.tab.block.setPlainText(view.block)
        # Keep the person on the document they were reading; else the most specific one.
        previous = self._selected_label
        if not (previous and self.tab.select_node(
                lambda p: getattr(p, "label", None) == previous)) and res.documents:
            self.tab.select_node(lambda p: p is res.documents[-1])

    @Slot(object)
    def _on_document(self, payload: object) -> None:
        doc = self._document_of(payload)
        if doc is None:
            return
        self._selected_label = getattr(doc, "label", None)
        body = doc.body
        self.tab.rendered.setHtml(
            f"<p><b>{html.escape(doc.label)}</b> ({html.escape(doc.scope)}, "
            f"{'local' if doc.local else 'normal'}) — <code>{html.escape(str(doc.path))}</code>"
            f"</p><hr>{self._rendered.get(doc.order, '')}"
        )
        self.tab.source.setPlainText(body)

    def _document_of(self, payload: object) -> InstructionDocument | None:
        if self.view is None:
            return None
        for doc in self.view.resolution.documents:
            if payload is doc or payload in doc.imports:
                return doc
        return None

    @Slot(object)
    def _on_diagnostic(self, diagnostic: object) -> None:
        source = getattr(diagnostic, "source", None)
        if source is None or self.view is None:
            return
        # Select the import or document whose file holds the offending line.
        if not self.tab.select_node(lambda p: getattr(p, "path", None) == source
                                    and hasattr(p, "line")):
            self.tab.select_node(lambda p: getattr(p, "path", None) == source)
