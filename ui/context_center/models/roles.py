"""Named custom item roles shared by every model and view."""

from __future__ import annotations

from PySide6.QtCore import Qt

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
