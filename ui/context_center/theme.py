"""The Fusion style, light and dark palettes that follow the system colour scheme; icons.

In steps, so the first frame costs little: :func:`application` (made with the Fusion style),
:func:`prepare` (a palette, before the first paint) and :func:`finish` (after it: the icon,
the system's colour scheme and the style's own palette confirmed, and changes followed).

Before the first paint nothing here hands PySide a ``QStyle`` or a ``Qt`` enum: PySide builds
a class's enums when it first meets the class, ~570 members for ``QStyle`` (~10 ms) and ~1,200
for the ``Qt`` namespace (~40 ms), which asking for the colour scheme returns. So the style is
set by Qt's ``-style`` option, the light palette is a copy of Fusion's (checked against the
style's own in :func:`finish` and by a test), and the platform's palette guesses the scheme.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

STYLE = "Fusion"
# Fusion's standard palette (Qt 6): role → (active and inactive, disabled) ARGB; the shades
# of its window grey are derived in light_palette(), as Fusion derives them. Link,
# LinkVisited and NoRole are left unset, as Fusion leaves them.
FUSION_LIGHT = {
    "WindowText": (0xff000000, 0xffbebebe),
    "Button": (0xffefefef, 0xffefefef),
    "Text": (0xff000000, 0xffbebebe),
    "BrightText": (0xffffffff, 0xffffffff),
    "ButtonText": (0xff000000, 0xffbebebe),
    "Base": (0xffffffff, 0xffefefef),
    "Window": (0xffefefef, 0xffefefef),
    "Highlight": (0xff308cc6, 0xff919191),
    "HighlightedText": (0xffffffff, 0xffffffff),
    "AlternateBase": (0xfff7f7f7, 0xfff7f7f7),
    "ToolTipBase": (0xffffffdc, 0xffffffdc),
    "ToolTipText": (0xff000000, 0xff000000),
    "PlaceholderText": (0x80000000, 0x80000000),
    "Accent": (0xff308cc6, 0xff919191),
}


def application(argv: list[str]) -> QApplication:
    """The QApplication, made with the Fusion style (an existing one is given the style)."""
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        existing.setStyle(STYLE)  # returns the QStyle: its enums are built (made elsewhere)
        return existing
    return QApplication([argv[0] if argv else "context-center", "-style", STYLE, *argv[1:]])


def light_palette() -> QPalette:
    """Fusion's light palette, made without asking the style (see the module docstring)."""
    window = QColor(239, 239, 239)
    mid, dark = window.darker(130), window.darker(150)
    shadow = dark.darker(135)
    colours = {name: (QColor.fromRgba(normal), QColor.fromRgba(disabled))
               for name, (normal, disabled) in FUSION_LIGHT.items()}
    colours.update(Light=(window.lighter(150),) * 2, Mid=(mid, mid),
                   Midlight=(mid.lighter(110),) * 2, Dark=(dark, QColor(190, 190, 190)),
                   Shadow=(shadow, shadow.lighter(150)))
    p = QPalette()
    group, role = QPalette.ColorGroup, QPalette.ColorRole
    for name, (normal, disabled) in colours.items():
        for which, colour in ((group.Active, normal), (group.Inactive, normal),
                              (group.Disabled, disabled)):
            p.setColor(which, getattr(role, name), colour)
    return p


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
    wanted = dark_palette() if dark else app.style().standardPalette()
    if app.palette() != wanted:  # re-setting a palette re-polishes every widget for nothing
        app.setPalette(wanted)


def prepare(app: QApplication) -> None:
    """Before the first paint: the palette the platform's own suggests, dark or light."""
    app.setPalette(dark_palette() if looks_dark() else light_palette())


def finish(app: QApplication) -> None:
    """After the first paint: the icon, the system's scheme confirmed, and followed."""
    from . import assets

    assets.register_search_paths()
    app.setWindowIcon(assets.icon("context-center"))
    apply(app)
    QGuiApplication.styleHints().colorSchemeChanged.connect(lambda _scheme: apply(app))


def install(app: QApplication) -> None:
    """The palette now and whenever the system scheme changes (the style: :func:`application`)."""
    prepare(app)
    finish(app)
