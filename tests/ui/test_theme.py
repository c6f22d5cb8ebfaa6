"""The palette: guessed from the platform before the first paint, confirmed after it."""

from __future__ import annotations

import pytest
from context_center import theme
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

WINDOW = QPalette.ColorRole.Window


@pytest.fixture
def fusion(qapp: QApplication):
    """The test application in the app's style; its light palette is put back after."""
    app = theme.application([])
    yield app
    theme.apply(app, dark=False)


def test_the_light_palette_is_fusions_own(fusion):
    standard = fusion.style().standardPalette()
    copy = theme.light_palette()
    assert copy == standard
    assert copy.resolveMask() == standard.resolveMask()  # the same roles left to the platform


@pytest.mark.parametrize(("platform_dark", "system_dark"),
                         [(True, False), (False, True), (True, True), (False, False)])
def test_the_system_scheme_wins_over_the_first_frames_guess(
        fusion, monkeypatch, platform_dark, system_dark):
    monkeypatch.setattr(theme, "looks_dark", lambda: platform_dark)
    monkeypatch.setattr(theme, "is_dark", lambda: system_dark)
    light = fusion.style().standardPalette().color(WINDOW)
    dark = theme.dark_palette().color(WINDOW)
    theme.prepare(fusion)  # before the first paint: the platform's palette decides
    assert fusion.palette().color(WINDOW) == (dark if platform_dark else light)
    theme.finish(fusion)  # after it: the system's colour scheme
    assert fusion.palette().color(WINDOW) == (dark if system_dark else light)


def test_a_light_copy_that_drifted_from_the_style_is_replaced(fusion, monkeypatch):
    monkeypatch.setattr(theme, "is_dark", lambda: False)
    drifted = theme.light_palette()
    drifted.setColor(WINDOW, QColor(1, 2, 3))  # as if another Qt changed Fusion's colours
    monkeypatch.setattr(theme, "light_palette", lambda: drifted)
    theme.prepare(fusion)
    assert fusion.palette().color(WINDOW) == QColor(1, 2, 3)
    theme.finish(fusion)
    assert fusion.palette() == fusion.style().standardPalette()
