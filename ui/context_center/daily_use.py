"""Wires the everyday conveniences of one window: undo, edit keys, open/reveal, multi-forget,
export, Open workspace…, the unsaved-edit guard on close, and the watcher's overflow notice.

Kept apart from the composition root so each piece stays small; ``install(root)`` is called
once per :class:`Application`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QMessageBox

from .services.fact_rows import FactRow
from .services.tasks import Op

if TYPE_CHECKING:
    from .application import Application

# Windows opened with File → Open workspace… live as long as the app.
_OPEN: list[Application] = []


class Desktop:
    """The desktop's handlers (replaced in tests): open a file, show a folder."""

    def open_file(self, path: Path) -> bool:
        """Open ``path`` in the person's external editor."""
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))

    def reveal(self, path: Path) -> bool:
        """Show the folder holding ``path`` in the file manager."""
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path.parent)))


class DailyUse(QObject):
    """The glue between one window's menus, tabs and write flows for everyday work."""

    def __init__(self, root: Application) -> None:
        super().__init__(root)
        self.root = root
        self.desktop = Desktop()
        w, writes, tab = root.window, root.writes, root.facts_tab
        w.undo_requested.connect(writes.undo_last)
        writes.undo_changed.connect(self._on_undo_changed)
        w.edit_requested.connect(self._on_edit_key)
        w.open_workspace_requested.connect(self.ask_workspace)
        w.close_guard = self.may_close
        tab.forget_many_requested.connect(self._on_forget_many)
        tab.export_requested.connect(self.ask_export)
        tab.open_requested.connect(self._on_open)
        tab.reveal_requested.connect(self._on_reveal)
        root.watcher.overflowed.connect(self._on_overflow)
        from .presenters.instruction_edits import InstructionEdits

        self.instruction_edits = InstructionEdits(w, root.tasks, root.hub)
        itab = root.instructions_tab
        itab.edit_requested.connect(self.instruction_edits.edit)
        itab.open_requested.connect(self._on_open)
        itab.reveal_requested.connect(self._on_reveal)
        root.writes.forgotten.connect(self._on_forgotten)

    # -- undo ---------------------------------------------------------------------------------

    @Slot(object)
    def _on_undo_changed(self, step: Any) -> None:
        self.root.window.offer_undo(None if step is None else step.label)

    # -- keys ---------------------------------------------------------------------------------

    @Slot()
    def _on_edit_key(self) -> None:
        if self.root.window.tabs.currentWidget() is self.root.facts_tab:
            row = self.root.facts_tab.selected_row()
            if row is not None:
                self.root.writes.edit(row)

    def may_close(self) -> bool:
        """Before the window closes: an open editor with unsaved changes asks first."""
        for editor in (self.root.writes.editor, self.root.suggestions.editor,
                       self.instruction_edits.editor):
            if editor.isVisible() and editor.is_dirty():
                editor.reject()  # opens "Discard your unsaved changes?"; Keep is the default
                return False
        return True

    # -- several facts at once ----------------------------------------------------------------

    @Slot(list)
    def _on_forget_many(self, rows: list[FactRow]) -> None:
        # Each forget asks on its own (S10.4): the policy's confirmation is never batched.
        for row in rows:
            self.root.writes.forget(row)

    @Slot(object)
    def _on_forgotten(self, outcome: Any) -> None:
        if getattr(outcome, "written", False):
            self.root.window.show_message("Forgotten: moved to the archive (Recover brings "
                                          "it back).", 8000)

    def ask_export(self, rows: list[FactRow]) -> QFileDialog | None:
        """Choose a folder, then copy the selected facts' files into it (never overwriting)."""
        if not rows:
            return None
        dialog = QFileDialog(self.root.window, f"Export {len(rows)} fact(s) to a folder")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda folder: self.export(rows, Path(folder)))
        dialog.open()
        return dialog

    def export(self, rows: list[FactRow], folder: Path,
               on_done: Callable[[list[Path]], None] | None = None) -> None:
        """Copy the fact files byte for byte into ``folder`` (O_EXCL), off the GUI thread."""
        sources = [r.fact.path for r in rows if r.fact.path is not None]

        def done(written: list[Path]) -> None:
            self.root.window.show_message(f"Exported {len(written)} fact file(s) to {folder}.",
                                          8000)
            if on_done is not None:
                on_done(written)

        def failed(exc: BaseException) -> None:
            self.root.window.show_message(f"Export stopped: {exc}", 10000)

        self.root.tasks.read(Op("Exporting facts", lambda t: export_files(sources, folder),
                                done, failed))

    # -- files on the desktop ------------------------------------------------------------------

    @Slot(object)
    def _on_open(self, path: Path) -> None:
        if not self.desktop.open_file(path):
            self.root.window.show_message(f"No application opens {path}.", 8000)

    @Slot(object)
    def _on_reveal(self, path: Path) -> None:
        if not self.desktop.reveal(path):
            self.root.window.show_message(f"Could not show {path.parent}.", 8000)

    # -- watcher -------------------------------------------------------------------------------

    @Slot()
    def _on_overflow(self) -> None:
        self.root.window.show_message(
            "Too many file changes at once: some events were lost, so every view is being "
            "re-read from disk.", 10000)

    # -- another workspace ---------------------------------------------------------------------

    def ask_workspace(self) -> QFileDialog:
        """File → Open workspace…: pick a folder; it opens in a new window (same home)."""
        dialog = QFileDialog(self.root.window, "Open workspace")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda folder: self.open_workspace(Path(folder)))
        dialog.open()
        return dialog

    def open_workspace(self, folder: Path) -> Application | None:
        """A new window on ``folder`` with this window's home; an error when it is missing."""
        from context_engine.paths import EnginePaths, find_workspace_root

        from .application import build

        if not folder.is_dir():
            box = QMessageBox(QMessageBox.Icon.Warning, "Context Center",
                              f"{folder} is not a folder; nothing was opened.",
                              QMessageBox.StandardButton.Ok, self.root.window)
            box.open()
            return None
        here = self.root.paths
        workspace = folder.expanduser().resolve()
        paths = (EnginePaths.resolve(workspace=workspace) if here is None else
                 EnginePaths(home=here.home, state=here.state, workspace=workspace,
                             root=find_workspace_root(workspace)))
        other = build(paths, self.root.window._settings)
        _OPEN.append(other)
        other.launch()
        return other


def export_files(sources: list[Path], folder: Path) -> list[Path]:
    """Copy each file into ``folder`` under its own name; an existing file is never replaced."""
    import os

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sources:
        target = folder / source.name
        data = source.read_bytes()
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        written.append(target)
    return written


def install(root: Application) -> DailyUse:
    """Wire the conveniences of ``root``'s window."""
    return DailyUse(root)
