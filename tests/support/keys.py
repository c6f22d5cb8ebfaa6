"""Key-event helpers for the dialog tests: press a key from every focus position."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget


def focus_positions(dialog: QWidget) -> list[QWidget]:
    """Every visible child that can take keyboard focus, in creation order."""
    return [w for w in dialog.findChildren(QWidget)
            if w.isVisible() and w.isEnabled() and w.focusPolicy() & Qt.FocusPolicy.TabFocus]


def press_from(qtbot, dialog: QWidget, widget: QWidget, key: Qt.Key) -> None:
    """Give ``widget`` the real focus in its active dialog, then press ``key`` on it."""
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=2000)
    widget.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(widget.hasFocus, timeout=2000)
    target = QApplication.focusWidget() or widget
    qtbot.keyClick(target, key)


def every_position(qtbot, open_dialog: Callable[[], QWidget], key: Qt.Key,
                   check: Callable[[QWidget], None]) -> int:
    """Open the dialog afresh for each focus position, press ``key`` there, run ``check``."""
    count = len(focus_positions(open_dialog()))
    for i in range(count):
        dialog = open_dialog()
        widget = focus_positions(dialog)[i]
        press_from(qtbot, dialog, widget, key)
        qtbot.wait(50)
        check(widget)
    return count
