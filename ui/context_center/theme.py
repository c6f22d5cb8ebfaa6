"""Light and dark palettes that follow the system colour scheme; icons search path.

Two steps, so the first frame costs little: :func:`prepare` (the Fusion style and a palette,
before the first paint) and :func:`finish` (after it: the icon, the system's colour scheme
confirmed, and its changes followed). Before the first paint nothing here touches PySide's
``Qt`` namespace: asking for the colour scheme returns a ``Qt.ColorScheme``, and that builds
every enum of the namespace (~40 ms); the platform palette answers the same question then.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

_applied: list[bool] = []  # the scheme (dark or not) of the palette last set, if any


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
    from PySide6.QtCore import Qt

    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def looks_dark() -> bool:
    """Whether the platform's own palette is dark (light text on a darker window).

    Where a system reports a dark scheme its platform theme gives a dark palette too; this
    guess needs no ``Qt`` enum, and :func:`finish` confirms it with :func:`is_dark`.
    """
    platform = QGuiApplication.palette()
    role = QPalette.ColorRole
    return platform.color(role.WindowText).lightness() > platform.color(role.Window).lightness()


def apply(app: QApplication, dark: bool | None = None) -> None:
    """Set the palette for ``dark`` (default: the system's scheme), unless it is set already."""
    from .render import markdown

    dark = is_dark() if dark is None else dark
    markdown.set_dark(dark)
    if _applied == [dark]:
        return  # re-setting a palette re-polishes every widget for nothing
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
    _applied[:] = [dark]


def prepare(app: QApplication) -> None:
    """Before the first paint: the Fusion style and the palette the platform suggests."""
    dark = looks_dark()  # the platform's palette, before the style's replaces it
    app.setStyle("Fusion")
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
    _applied[:] = [dark]


def finish(app: QApplication) -> None:
    """After the first paint: the icon, the system's scheme confirmed, and followed."""
    from . import assets

    assets.register_search_paths()
    app.setWindowIcon(assets.icon("context-center"))
    apply(app)
    QGuiApplication.styleHints().colorSchemeChanged.connect(lambda _scheme: apply(app))


def install(app: QApplication) -> None:
    """Fusion style, the palette now and whenever the system scheme changes."""
    prepare(app)
    finish(app)
