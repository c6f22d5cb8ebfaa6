"""Regression: PySide6 6.12.0 leaks a reference to None on every void Qt call (CPython < 3.12).

After a few thousand calls the interpreter aborts with ``Fatal Python error: none_dealloc``;
pyproject pins ``<6.12`` on Python < 3.12. On 3.12+ None is immortal and the count is constant.
"""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QLabel, QWidget

CALLS = 5000


def test_void_qt_calls_do_not_leak_none(qtbot):
    widget = QWidget()
    label = QLabel()
    qtbot.addWidget(widget)
    qtbot.addWidget(label)
    widget.resize(10, 10)  # warm up any one-time caches
    label.setText("x")
    before = sys.getrefcount(None)
    for i in range(CALLS):
        widget.resize(10 + i % 5, 10)
        label.setText("x" if i % 2 else "y")
    after = sys.getrefcount(None)
    # A leak drops one reference per call: 2 * CALLS. Allow small noise from the interpreter.
    assert abs(after - before) < 100, f"None refcount moved by {after - before}"
