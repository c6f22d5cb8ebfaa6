"""Named custom item roles shared by every model and view."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, Qt

_BASE = int(Qt.ItemDataRole.UserRole)

ROW = _BASE + 1  # the whole row object (a frozen dataclass)
KEY = _BASE + 2  # a stable identity (fact id, archive path, trace index …)
SORT = _BASE + 3  # a value comparable within the column
KIND = _BASE + 4  # a short kind tag (document, import, diagnostic, hit, omitted …)
DETAIL = _BASE + 5  # longer text for a detail pane

NAMES: dict[int, bytes] = {
    ROW: b"row",
    KEY: b"key",
    SORT: b"sort",
    KIND: b"kind",
    DETAIL: b"detail",
}


def header(headers: list[str] | tuple[str, ...], section: int, orientation: Qt.Orientation,
           role: int) -> Any:
    """A horizontal header's text for a model with these headers (rows are not numbered)."""
    if (role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(headers)):
        return headers[section]
    return None


def with_ours(names: dict[int, QByteArray]) -> dict[int, QByteArray]:
    """Qt's default role names plus ours."""
    return {**names, **{role: QByteArray(name) for role, name in NAMES.items()}}
