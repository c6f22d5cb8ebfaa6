"""The confirm-write dialog states exactly what will happen (S10.6, S13.4)."""

from __future__ import annotations

import threading

from context_center.services.confirmation import QtConfirmationService, confirm_text
from context_engine.policy.confirmation import ConfirmationRequest
from PySide6.QtWidgets import QWidget

DIFF = (
    "--- project/release-target.md (revision 3)\n"
    "+++ project/release-target.md (revision 4)\n"
    "@@ -1 +1 @@\n-old body\n+new body\n"
)


def _request(**kw) -> ConfirmationRequest:
    fields = dict(tool="remember", reason="memory updates require confirmation",
                  findings=("github-token",), reference="project/release-target.md",
                  scope="project", type="project", content="name: release-target\n", diff=DIFF,
                  revision_from=3, revision_to=4, digest="d")
    fields.update(kw)
    return ConfirmationRequest(**fields)  # type: ignore[arg-type]


def test_text_states_scope_type_revision_finding_and_diff():
    text = confirm_text(_request())
    assert text.action == "Save" and text.scope == "project" and text.type == "project"
    assert text.revision == "revision 3 → 4"
    assert "memory updates require confirmation" in text.reason
    assert "github-token" in text.reason
    assert "+new body" in text.content_html and "-old body" in text.content_html
    forget = confirm_text(_request(tool="forget", diff="", revision_to=None, content="body"))
    # The person's own forget, in their words: nothing about tools, archived only once done.
    assert forget.action == "Forget" and forget.revision == "revision 3, kept in the archive"
    assert "Recover" in forget.summary and not forget.tool
    assert "body" in forget.content_html


def test_worker_waits_for_the_answer_and_ok_confirms(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    service = QtConfirmationService(parent)
    answers: list[bool] = []
    worker = threading.Thread(target=lambda: answers.append(service.confirm(_request())))
    with qtbot.waitSignal(service.shown, timeout=3000):
        worker.start()
    dialog = service.dialog
    assert dialog.isVisible() and not dialog.ok_button.isDefault()
    assert dialog.cancel_button.isDefault()
    assert "revision 3 → 4" in dialog._facts.text()
    assert "new body" in dialog._content.toPlainText()
    assert "don't ask" not in dialog._facts.text().lower()
    assert answers == []  # the worker is still waiting; the GUI thread is not
    dialog.ok_button.click()
    worker.join(5)
    assert answers == [True]


def test_requests_queue_one_dialog_at_a_time(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    service = QtConfirmationService(parent)
    seen: list[bool] = []
    service.ask(_request(reference="project/a.md"), seen.append)
    service.ask(_request(reference="project/b.md"), seen.append)
    assert "project/a.md" in service.dialog._summary.text()
    service.dialog.cancel_button.click()
    assert seen == [False]
    assert "project/b.md" in service.dialog._summary.text()
    service.dialog.ok_button.click()
    assert seen == [False, True]
