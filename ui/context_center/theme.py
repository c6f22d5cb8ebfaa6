"""Light and dark palettes that follow the system colour scheme; icons search path."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from . import assets
from .render import markdown


def dark_palette() -> QPalette:
    """A restrained dark palette for the Fusion style."""
    p = QPalette()
    base, window, text = QColor(30, 31, 34), QColor(43, 45, 48), QColor(223, 225, 229)
    p.setColor(QPalette.ColorRole.Window, window)
    p.setColor(QPalette.ColorRole.WindowText, text)
    p.setColor(QPalette.ColorRole.Base, base)
    p.setColor(QPalette.ColorRole.AlternateBase, QColor(38, 39, 42))
    p.setColor(QPalette.ColorRole.Text, text)
    p.setColor(QPalette.ColorRole.Button, window)
    p.setColor(QPalette.ColorRole.ButtonText, text)
    p.setColor(QPalette.ColorRole.ToolTipBase, window)
    p.setColor(QPalette.ColorRole.ToolTipText, text)
    p.setColor(QPalette.ColorRole.Highlight, QColor(53, 116, 240))
    p.setColor(QPalette.ColorRole.HighlightedText, QColor(255, 255, 255))
    p.setColor(QPalette.ColorRole.Link, QColor(88, 157, 246))
    p.setColor(QPalette.ColorRole.Mid, QColor(70, 72, 76))
    p.setColor(QPalette.ColorRole.PlaceholderText, QColor(140, 143, 150))
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(120, 120, 120))
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor(120, 120, 120))
    return p


def is_dark() -> bool:
    """Whether the system asks for a dark scheme."""
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def apply(app: QApplication) -> None:
    """Apply the palette matching the system scheme now."""
    dark = is_dark()
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
    markdown.set_dark(dark)


def install(app: QApplication) -> None:
    """Fusion style, the palette now and whenever the system scheme changes."""
    assets.register_search_paths()
    app.setWindowIcon(assets.icon("context-center"))
    app.setStyle("Fusion")
    apply(app)
    QGuiApplication.styleHints().colorSchemeChanged.connect(lambda _scheme: apply(app))
