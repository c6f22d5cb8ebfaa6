"""Dismissed suggestions of one workspace, kept across restarts in the state root (0600).

A small JSON list of candidate ids, replaced atomically (temp file + rename). Read and
written on worker threads; a missing or unreadable file means "nothing dismissed".
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

FILE_NAME = "dismissed-suggestions.json"
MAX_IDS = 5000  # oldest forgotten first: the file stays small


class DismissedStore:
    """The set of dismissed candidate ids at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def load(self) -> set[str]:
        """The ids on disk (empty when the file is missing or not ours to parse)."""
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return set()
        ids = data.get("dismissed") if isinstance(data, dict) else None
        return {i for i in ids if isinstance(i, str)} if isinstance(ids, list) else set()

    def add(self, ids: set[str]) -> None:
        """Add ``ids`` and write the file atomically, private to the user."""
        with self._lock:
            known = [i for i in self._ordered() if i not in ids] + sorted(ids)
            known = known[-MAX_IDS:]
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = self.path.with_name(f".tmp-{os.getpid()}-{self.path.name}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"version": 1, "dismissed": known}, out)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)

    def _ordered(self) -> list[str]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
            ids = data.get("dismissed", [])
            return [i for i in ids if isinstance(i, str)]
        except (OSError, ValueError, AttributeError):
            return []
