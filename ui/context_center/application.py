"""Composition root: builds the engine backend, services, tabs and wires their signals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from context_engine.catalog.local import LocalCatalog
from context_engine.paths import EnginePaths
from context_engine.suggestions.readers.claude_code import sanitize
from context_engine.suggestions.roots import SourceRoots
from PySide6.QtCore import QEvent, QObject, QSettings, QTimer, Slot
from PySide6.QtWidgets import QMessageBox, QWidget

from .presenters.archive import ArchivePresenter
from .presenters.bundles import BundlePresenter
from .presenters.facts import FactsPresenter
from .presenters.importing import ImportPresenter
from .presenters.instructions import InstructionsPresenter
from .presenters.proposals import ProposalsPresenter
from .presenters.recall import RecallPresenter
from .presenters.suggestions import SuggestionsPresenter
from .presenters.writes import WriteFlows
from .services.backend import Backend
from .services.fact_rows import FactRow, FactsSnapshot
from .services.hub import ChangeSet, Hub
from .services.tasks import Op, TaskManager
from .services.watcher import FileWatcher, WatchTargets
from .widgets.archive_tab import ArchiveTab
from .widgets.facts_tab import FactsTab
from .widgets.instructions_tab import InstructionsTab
from .widgets.main_window import MainWindow
from .widgets.recall_tab import RecallTab
from .widgets.suggestions_tab import SuggestionsTab


def watch_targets(paths: EnginePaths) -> WatchTargets:
    """Both stores, the instruction directories, the session folders and our trace folder."""
    from .services.watch_scope import claude_dir_to_watch

    claude = claude_dir_to_watch(paths, SourceRoots.from_env().claude)
    # Reasonix sessions, and this workspace's Claude Code transcripts (suggestion sources);
    # never the person's real ~/.claude when --home points elsewhere.
    sessions = [claude / "projects" / sanitize(str(paths.root))] if claude is not None else []
    targets = WatchTargets.of(paths, sessions)
    if claude is not None:
        targets.boundaries = (*targets.boundaries, claude)
    return targets


class Application(QObject):
    """Owns every long-lived object of one window; ``start()`` loads, ``shutdown()`` stops."""

    def __init__(self, paths: EnginePaths | None, settings: QSettings,
                 backend: Backend | None = None, window: MainWindow | None = None) -> None:
        super().__init__()
        self.paths = paths
        # A given backend (a remote workspace's) is the only data source: no local paths are
        # watched or shown for it (S13.6).
        if backend is None:
            if paths is None:
                raise ValueError("a window needs the workspace's paths or a backend")
            # A plain local catalog: a child process opens it the same way (bounded recall).
            backend = Backend(LocalCatalog(paths), recall_in_child=True, keep_index=True)
        self.backend = backend
        self.tasks = TaskManager(parent=self)
        self.hub = Hub(self)
        # A window already on screen (``shell.open_shell``) gets the real tabs in its places.
        self.window = window if window is not None else MainWindow(settings)
        self.window.complete()  # a first-frame shell's deferred settings (Ctrl+Q app-wide)
        self.instructions_tab = InstructionsTab()
        self.facts_tab = FactsTab()
        self.archive_tab = ArchiveTab()
        self.suggestions_tab = SuggestionsTab()
        self.recall_tab = RecallTab()
        for tab, title in (
            (self.instructions_tab, "Instructions"),
            (self.facts_tab, "Facts"),
            (self.archive_tab, "Archive && Revisions"),
            (self.suggestions_tab, "Suggestions"),
            (self.recall_tab, "Recall"),
        ):
            self.window.add_tab(tab, title)
        args = (self.backend, self.tasks, self.hub)
        self.writes = WriteFlows(self.window, *args)
        self.backend.confirm_with(self.writes.confirmation)  # the policy asks in this window
        self.facts = FactsPresenter(self.facts_tab, *args)
        self.instructions = InstructionsPresenter(self.instructions_tab, *args)
        self.archive = ArchivePresenter(self.archive_tab, *args, self.writes)
        self.suggestions = SuggestionsPresenter(self.suggestions_tab, self.window, *args)
        own_files = paths if self.backend.local else None  # proposals are local files
        self.proposals = ProposalsPresenter(
            self.suggestions_tab.proposals, own_files, self.tasks, self.hub
        )
        self.recall = RecallPresenter(self.recall_tab, *args)
        self.importing = ImportPresenter(self.window, self.backend, self.tasks)
        self.bundles = BundlePresenter(self.window, self.backend, self.tasks)
        local = self.backend.local and paths is not None
        targets = watch_targets(paths) if local and paths is not None else WatchTargets([], [], [])
        self.watcher = FileWatcher(targets, self)
        self._first_paint: _FirstPaint | None = None
        self._counts: dict[str, object] = {}
        self._wire()
        from .daily_use import install as install_daily_use

        self.daily_use = install_daily_use(self)
        if local and paths is not None:
            self.window.show_paths(str(paths.project_store), str(paths.global_store))
            self.window.setWindowTitle(f"{paths.root.name} — Context Center")

    def _wire(self) -> None:
        w = self.window
        w.refresh_requested.connect(self.refresh)
        w.new_fact_requested.connect(self.writes.new_fact)
        w.import_requested.connect(self.importing.open)
        self.importing.imported.connect(lambda _report: self.refresh())
        local = self.paths is not None and self.backend.local
        for action in (w.import_action, w.export_bundle_action, w.import_bundle_action):
            action.setEnabled(local)  # the other agents' files and the stores are local
        w.export_bundle_requested.connect(self.bundles.export)
        w.import_bundle_requested.connect(self.bundles.restore)
        self.bundles.restored.connect(lambda _report: self.refresh())
        self.bundles.exported.connect(
            lambda report: w.show_message(f"Exported {report.files} files to {report.path}"))
        self.bundles.failed.connect(lambda message: w.show_message(message, 10000))
        w.save_requested.connect(self.writes.save_editor)
        w.find_requested.connect(self._on_find)
        w.forget_requested.connect(self._on_forget_selected)
        w.cancel_requested.connect(self._on_cancel)
        self.watcher.changed.connect(self.hub.publish)
        self.tasks.started.connect(self._on_task_progress)
        self.tasks.progressed.connect(self._on_task_progress)
        self.tasks.finished.connect(self._on_task_progress)
        self.tasks.unhandled.connect(self._on_task_failed)
        self.facts_tab.new_requested.connect(self.writes.new_fact)
        self.facts_tab.edit_requested.connect(self.writes.edit)
        self.facts_tab.forget_requested.connect(self.writes.forget)
        self.facts_tab.history_requested.connect(self._on_history_requested)
        self.facts_tab.selection_changed.connect(self._on_fact_selected)
        w.tabs.currentChanged.connect(self._on_tab_changed)
        self.facts.snapshot_applied.connect(self._on_facts_snapshot)
        self.facts.snapshot_applied.connect(self.writes.notice_snapshot)
        self.recall_tab.hit_activated.connect(self._on_hit_activated)
        self.archive.archive_listed.connect(self._on_archive_listed)
        self.instructions.watched.connect(self._on_instruction_files)
        self.writes.failed.connect(self._on_write_failed)
        self.writes.saved.connect(self._on_saved)

    def launch(self) -> None:
        """Restore and show the window, then start loading once it has painted.

        Starting the background reads only after the first paint keeps the worker threads
        from competing with the GUI thread for the interpreter while the window first draws.
        """
        if not self.window.isVisible():  # else the shell restored and showed it already
            self.window.restore_state()
            self.window.show()
        self._first_paint = _FirstPaint(self.window, self.start)

    def start(self) -> None:
        """Start watching and load every view in the background."""
        self.watcher.start()
        self.refresh()
        self._on_tab_changed(self.window.tabs.currentIndex())
        self._on_task_progress(None)  # the shell's "Starting…" gives way to the real work

    def refresh(self) -> None:
        """F5: re-read everything (also what a watcher overflow does)."""
        self.hub.publish(ChangeSet.everything("disk"))

    def shutdown(self) -> None:
        """Stop the watcher and worker threads."""
        self.watcher.stop()
        self.writes.confirmation.close()  # a writer waiting for an answer gets "no"
        self.tasks.shutdown()

    @Slot()
    def _on_find(self) -> None:
        self.window.tabs.setCurrentWidget(self.facts_tab)
        self.facts_tab.focus_search()

    @Slot()
    def _on_forget_selected(self) -> None:
        if self.window.tabs.currentWidget() is self.facts_tab:
            row = self.facts_tab.selected_row()
            if row is not None:
                self.writes.forget(row)

    @Slot(object)
    def _on_fact_selected(self, row: FactRow | None) -> None:
        if row is not None:
            self.archive.show_fact(row)

    @Slot(object)
    def _on_hit_activated(self, hit: object) -> None:
        scope, fact_id = getattr(hit, "scope", None), getattr(hit, "id", None)
        if scope and fact_id:
            self.window.tabs.setCurrentWidget(self.facts_tab)
            self.facts_tab.reveal((scope, fact_id))

    @Slot(object)
    def _on_history_requested(self, row: FactRow) -> None:
        self.archive.show_fact(row)
        self.window.tabs.setCurrentWidget(self.archive_tab)

    @Slot(int)
    def _on_tab_changed(self, _index: int) -> None:
        # Suggestions are scanned when the tab opens (S11.1), in the background.
        if self.window.tabs.currentWidget() is self.suggestions_tab:
            self.suggestions.scan()
            self.proposals.reload()

    @Slot()
    def _on_cancel(self) -> None:
        for op in self.tasks.pending:
            if op.long:
                op.cancel()

    @Slot(object)
    def _on_task_progress(self, _op: Op | None) -> None:
        long_ops = [op for op in self.tasks.pending if op.long]
        first = long_ops[0] if long_ops else None
        self.window.show_progress("" if first is None else first.detail or first.label + "…")

    @Slot(object, object)
    def _on_task_failed(self, op: Op, exc: BaseException) -> None:
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        self.window.show_message(f"{op.label} failed: {message}", 10000)

    @Slot(object)
    def _on_facts_snapshot(self, snapshot: FactsSnapshot) -> None:
        self._counts["facts"] = snapshot
        self._show_counts()

    @Slot(int)
    def _on_archive_listed(self, count: int) -> None:
        self._counts["archived"] = count
        self._show_counts()

    def _show_counts(self) -> None:
        snapshot = self._counts.get("facts")
        if not isinstance(snapshot, FactsSnapshot):
            return
        project = snapshot.project  # counted on the worker that made the snapshot
        archived = self._counts.get("archived")
        self.window.show_counts(
            f"{len(snapshot.rows)} facts ({project} project, {len(snapshot.rows) - project} "
            f"global) · {'…' if archived is None else archived} archived · "
            f"{len(snapshot.diagnostics)} unreadable"
        )

    @Slot(list, list)
    def _on_instruction_files(self, files: list[Path], folders: list[Path]) -> None:
        if self.backend.local:  # a remote window never watches local folders
            self.watcher.watch_files("instructions", files, folders)

    @Slot(object)
    def _on_saved(self, changes: object) -> None:
        fact = getattr(changes, "fact", None)
        if fact is not None:  # follow the fact, even when the edit moved it to the other scope
            self.facts_tab.select_key((fact.scope, fact.id))
        self.window.show_message("Saved.", 4000)

    @Slot(str)
    def _on_write_failed(self, message: str) -> None:
        self.window.show_message(f"Nothing changed: {message}", 10000)
        if not self.writes.editor.isVisible():
            box = QMessageBox(QMessageBox.Icon.Warning, "Context Center", message,
                              QMessageBox.StandardButton.Ok, self.window)
            box.open()


class _FirstPaint(QObject):
    """Calls ``then`` once, right after the watched widget's first paint (or 1 s at most)."""

    def __init__(self, widget: QWidget, then: Callable[[], None]) -> None:
        super().__init__(widget)
        self._then: Callable[[], None] | None = then
        self._widget = widget
        widget.installEventFilter(self)
        QTimer.singleShot(1000, self._fire)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Notice the first paint; never consumes the event."""
        if watched is self._widget and event.type() == QEvent.Type.Paint:
            QTimer.singleShot(0, self._fire)
        return False

    @Slot()
    def _fire(self) -> None:
        then, self._then = self._then, None
        if then is not None:
            self._widget.removeEventFilter(self)
            then()


def build(paths: EnginePaths | None, settings: QSettings | None = None,
          backend: Backend | None = None, window: MainWindow | None = None) -> Application:
    """Build the application for ``paths`` or a given backend (after the QApplication exists).

    ``window``: the shell already shown (``shell.open_shell``), which gets the real tabs.
    """
    if settings is None:
        settings = QSettings("ContextCenter", "context-center")
    return Application(paths, settings, backend, window)
