"""What each agent session has already been told, kept between hook processes (S7.3).

One small JSON file per agent session under ``<workspace data>/agent-sessions/``; the session id
is hashed so any string is a safe file name. Writes are atomic (temp file + ``os.replace``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..session.notes import Baseline

KEEP_SESSIONS = 200


def _file(directory: Path, agent: str, session_id: str) -> Path:
    key = hashlib.sha256(f"{agent}\0{session_id}".encode()).hexdigest()[:32]
    return directory / f"{agent}-{key}.json"


class BaselineStore:
    """Load and save the baseline of one agent session."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def load(self, agent: str, session_id: str) -> Baseline | None:
        """The saved baseline, or ``None`` when missing or unreadable (start afresh)."""
        try:
            data = json.loads(_file(self.directory, agent, session_id).read_text("utf-8"))
            return Baseline.from_json(data) if isinstance(data, dict) else None
        except (OSError, ValueError):
            return None

    def save(self, agent: str, session_id: str, baseline: Baseline) -> None:
        """Atomically replace the session's baseline; keep only the newest sessions' files."""
        import tempfile  # a quiet turn saves nothing: keep it off the hook's import path

        self.directory.mkdir(parents=True, exist_ok=True)
        target = _file(self.directory, agent, session_id)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(baseline.to_json(), handle, separators=(",", ":"))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._prune()

    def _prune(self) -> None:
        files = sorted(self.directory.glob("*.json"), key=_mtime, reverse=True)
        for stale in files[KEEP_SESSIONS:]:
            stale.unlink(missing_ok=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
