"""The one resource locator: source tree, installed wheel, or PyInstaller bundle."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

from PySide6.QtCore import QDir
from PySide6.QtGui import QIcon

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def resources_dir() -> Path:
    """Directory holding ``icons/`` and ``styles/``, wherever the app was installed from."""
    candidates: list[Path] = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:  # PyInstaller one-folder: the spec copies resources/ next to the modules.
        candidates.append(Path(bundle) / "resources")
    candidates.append(_PACKAGE_DIR / "resources")  # wheel: hatch force-include
    candidates.append(_PACKAGE_DIR.parent.parent / "resources")  # source tree / editable
    for candidate in candidates:
        if (candidate / "icons").is_dir():
            return candidate
    return candidates[-1]


def register_search_paths() -> None:
    """Let Qt resolve ``icons:name.svg`` through the locator (call once, GUI thread)."""
    QDir.setSearchPaths("icons", [str(resources_dir() / "icons")])


def icon(name: str) -> QIcon:
    """An SVG icon from ``resources/icons`` by stem (empty icon when missing)."""
    path = resources_dir() / "icons" / f"{name}.svg"
    return QIcon(str(path)) if path.is_file() else QIcon()


def style_sheet(name: str = "app") -> str:
    """A Qt style sheet from ``resources/styles`` (empty when missing)."""
    path = resources_dir() / "styles" / f"{name}.qss"
    return path.read_text(encoding="utf-8") if path.is_file() else ""
