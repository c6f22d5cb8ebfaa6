"""The palette: guessed from the platform before the first paint, confirmed after it."""

from __future__ import annotations

import pytest
from context_center import theme
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

WINDOW = QPalette.ColorRole.Window


@pytest.fixture
def light_again(qapp: QApplication):
    """The test application's light palette is put back after the test."""
    yield qapp
    theme.apply(qapp, dark=False)


@pytest.mark.parametrize(("platform_dark", "system_dark"),
                         [(True, False), (False, True), (True, True), (False, False)])
def test_the_system_scheme_wins_over_the_first_frames_guess(
        light_again, monkeypatch, platform_dark, system_dark):
    app = light_again
    monkeypatch.setattr(theme, "looks_dark", lambda: platform_dark)
    monkeypatch.setattr(theme, "is_dark", lambda: system_dark)
    light = app.style().standardPalette().color(WINDOW)
    dark = theme.dark_palette().color(WINDOW)
    theme.prepare(app)  # before the first paint: the platform's palette decides
    assert app.palette().color(WINDOW) == (dark if platform_dark else light)
    theme.finish(app)  # after it: the system's colour scheme
    assert app.palette().color(WINDOW) == (dark if system_dark else light)

