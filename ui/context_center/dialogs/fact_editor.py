"""Create or edit one fact: name, title, description, type, scope and body."""

from __future__ import annotations

from dataclasses import dataclass, replace

from context_engine.facts.model import Fact
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFont, QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from .discard_dialog import DiscardDialog

FACT_TYPES = ("project", "reference", "user", "feedback")
SCOPES = ("project", "global")


@dataclass(frozen=True, slots=True)
class FactDraft:
    """What the person typed; ``id``/``base_revision`` are set when editing an existing fact."""

    name: str
    title: str
    description: str
    type: str
    scope: str
    body: str
    id: str | None = None
    base_revision: int | None = None
    digest: str | None = None  # sha256 of the bytes read, so a hand edit is caught too

    @property
    def is_new(self) -> bool:
        """Whether this creates a fact."""
        return self.id is None

    @classmethod
    def of(cls, fact: Fact, digest: str | None) -> FactDraft:
        """A draft of an active fact, with the revision and digest it was read at."""
        return cls(name=fact.name, title=fact.title, description=fact.description, type=fact.type,
                   scope=fact.scope, body=fact.body, id=fact.id, base_revision=fact.revision,
                   digest=digest)


class FactEditor(QDialog):
    """Non-modal editor; the owner performs the save and closes it on success.

    Signals:
        save_requested(object): the person pressed Save (Ctrl+S) with this :class:`FactDraft`
    """

    save_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(620, 520)
        self._draft = FactDraft("", "", "", "project", "project", "")
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("slug, e.g. release-target (from the title when empty)")
        self.title_edit = QLineEdit()
        self.description_edit = QLineEdit()
        self.type_box = QComboBox()
        self.type_box.addItems(FACT_TYPES)
        self.scope_box = QComboBox()
        self.scope_box.addItems(SCOPES)
        self.body_edit = QPlainTextEdit()
        self.body_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.status = QLabel()
        self.status.setWordWrap(True)
        form = QFormLayout()
        form.addRow("&Name", self.name_edit)
        form.addRow("&Title", self.title_edit)
        form.addRow("&Description", self.description_edit)
        form.addRow("T&ype", self.type_box)
        form.addRow("&Scope", self.scope_box)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self._on_save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        body_label = QLabel("&Body (Markdown)")
        body_label.setBuddy(self.body_edit)
        layout.addWidget(body_label)
        layout.addWidget(self.body_edit, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        QShortcut(QKeySequence.StandardKey.Save, self, self._on_save)
        self.discard = DiscardDialog(self)
        self._closing_confirmed = False
        for widget, name in ((self.name_edit, "Name"), (self.title_edit, "Title"),
                             (self.description_edit, "Description"), (self.type_box, "Type"),
                             (self.scope_box, "Scope"), (self.body_edit, "Body (Markdown)"),
                             (self.status, "Editor status")):
            widget.setAccessibleName(name)

    @property
    def draft(self) -> FactDraft:
        """The draft as currently typed."""
        return replace(
            self._draft,
            name=self.name_edit.text().strip(),
            title=self.title_edit.text().strip(),
            description=self.description_edit.text().strip(),
            type=self.type_box.currentText(),
            scope=self.scope_box.currentText(),
            body=self.body_edit.toPlainText(),
        )

    def edit(self, draft: FactDraft) -> None:
        """Load ``draft`` into the fields and show the editor (non-blocking)."""
        self._draft = draft
        self._closing_confirmed = False
        self.setWindowTitle("New fact" if draft.is_new else f"Edit {draft.scope}/{draft.name}.md")
        self.name_edit.setText(draft.name)
        self.name_edit.setReadOnly(not draft.is_new)
        self.title_edit.setText(draft.title)
        self.description_edit.setText(draft.description)
        self.type_box.setCurrentText(draft.type)
        self.scope_box.setCurrentText(draft.scope)
        self.body_edit.setPlainText(draft.body)
        self.set_status("" if draft.is_new else f"Editing revision {draft.base_revision}.")
        self.set_busy(False)
        self.open()
        self.title_edit.setFocus(Qt.FocusReason.OtherFocusReason)

    def is_dirty(self) -> bool:
        """Whether the fields differ from what was loaded (closing would lose typing)."""
        d, now = self._draft, self.draft
        return (d.name.strip(), d.title.strip(), d.description.strip(), d.type, d.scope,
                d.body) != (now.name, now.title, now.description, now.type, now.scope, now.body)

    def reject(self) -> None:
        """Esc, Cancel or the close button: ask first when something typed would be lost."""
        if self._closing_confirmed or not self.isVisible() or not self.is_dirty():
            self._closing_confirmed = False
            super().reject()
            return
        if self.discard.isVisible():
            return
        what = "this new fact" if self._draft.is_new else f"{self._draft.scope}/" \
            f"{self._draft.name}.md"
        self.discard.ask(what, self._on_discard_answered)

    def _on_discard_answered(self, discard: bool) -> None:
        if discard:
            self._closing_confirmed = True
            self.reject()
        else:
            self.activateWindow()

    def rebase(self, base_revision: int, digest: str | None) -> None:
        """Keep the typed text but build on what is on disk now ("save as new revision")."""
        self._draft = replace(self._draft, base_revision=base_revision, digest=digest)

    def set_status(self, text: str, error: bool = False) -> None:
        """A line under the body: what happened or what went wrong."""
        color = "#cf222e" if error else ""
        self.status.setStyleSheet(f"color: {color}" if color else "")
        self.status.setText(text)

    def set_busy(self, busy: bool) -> None:
        """Disable Save while a write is in flight."""
        button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        button.setEnabled(not busy)

    @Slot()
    def _on_save(self) -> None:
        if not self.isVisible():
            return
        draft = self.draft
        if not draft.body.strip() or not draft.description:
            self.set_status("A description and a body are required.", error=True)
            return
        if draft.is_new and not (draft.name or draft.title):
            self.set_status("Give the fact a name or a title.", error=True)
            return
        self.set_busy(True)
        self.save_requested.emit(draft)


def monospace() -> QFont:
    """The system fixed-width font (provider blocks, bodies)."""
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
