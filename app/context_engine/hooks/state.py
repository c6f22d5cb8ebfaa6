"""What each agent session has already been told, kept between hook processes (S7.3).

One small file per agent session under ``<workspace data>/agent-sessions/``; the session id is
hashed so any string is a safe file name. Writes are atomic (temp file + ``os.replace``). The
document is ``marshal`` of the same plain shape ``Baseline.to_json`` gives (loading cannot run
code; ~4× faster than JSON at 10,000 facts), its ``facts`` list ``marshal``-encoded once more
inside it: a quiet turn only compares digests, and decoding 10^5 marks it never reads cost
~60 ms at 100,000 facts (``session/notes._MarkTable`` decodes them on first use). A file whose
``facts`` is a plain list (an earlier version) reads as before, and so does a ``.json`` file of
an earlier version when it is the newer of the two.
"""

from __future__ import annotations

import json
import marshal
import os
import time
from pathlib import Path

from ..digests import sha256
from ..filemodes import make_private_dirs, open_private_temp
from ..session.notes import Baseline

KEEP_SESSIONS = 200
# A long-lived process answering hooks (the MCP server's relay) keeps the baselines it loaded
# or saved, each with the identity of its file then: a hook whose file still has that identity
# and had settled (git's racy rule: a change within this window of the check may keep size,
# inode and coarse timestamps) is answered without decoding 10^4 marks again.
_RACY_NS = 2_000_000_000
_KEPT = 32
_kept: dict[Path, tuple[tuple[int, int, int, int, int], int, Baseline]] = {}


def _identity(path: Path) -> tuple[int, int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _keep(path: Path, baseline: Baseline) -> None:
    identity = _identity(path)
    if identity is None:
        _kept.pop(path, None)
        return
    if len(_kept) >= _KEPT and path not in _kept:
        _kept.pop(next(iter(_kept)))
    _kept[path] = (identity, time.time_ns(), baseline)


def _kept_baseline(path: Path) -> Baseline | None:
    held = _kept.get(path)
    if held is None:
        return None
    identity, checked_ns, baseline = held
    if identity != _identity(path) or max(identity[3], identity[4]) >= checked_ns - _RACY_NS:
        return None
    return baseline


def _file(directory: Path, agent: str, session_id: str, suffix: str = ".marshal") -> Path:
    key = sha256(f"{agent}\0{session_id}".encode()).hexdigest()[:32]
    return directory / f"{agent}-{key}{suffix}"


def _document(directory: Path, agent: str, session_id: str) -> object:
    """The newest saved document (marshal, else a legacy JSON file); raises when none."""
    current, legacy = (_file(directory, agent, session_id, s) for s in (".marshal", ".json"))
    try:
        legacy_ns = os.stat(legacy).st_mtime_ns
    except OSError:
        legacy_ns = None
    try:
        if legacy_ns is None or os.stat(current).st_mtime_ns >= legacy_ns:
            return marshal.loads(current.read_bytes())
    except FileNotFoundError:
        if legacy_ns is None:
            raise
    return json.loads(legacy.read_text("utf-8"))


class BaselineStore:
    """Load and save the baseline of one agent session."""

    def __init__(self, directory: Path, *, keep: bool = False) -> None:
        """``keep``: a long-lived process remembers what it loaded and saved (see ``_kept``)."""
        self.directory = directory
        self.keep = keep

    def load(self, agent: str, session_id: str) -> Baseline | None:
        """The saved baseline, or ``None`` when missing or unreadable (start afresh)."""
        current = _file(self.directory, agent, session_id)
        kept = _kept_baseline(current)
        if kept is not None and not _file(self.directory, agent, session_id, ".json").exists():
            return kept
        try:
            data = _document(self.directory, agent, session_id)
            baseline = Baseline.from_json(data) if isinstance(data, dict) else None
        except (OSError, ValueError, EOFError, TypeError):
            return None
        if baseline is not None and self.keep:
            _keep(current, baseline)
        return baseline

    def save(self, agent: str, session_id: str, baseline: Baseline) -> None:
        """Atomically replace the session's baseline; keep only the newest sessions' files."""
        make_private_dirs(self.directory)
        target = _file(self.directory, agent, session_id)
        # 0600 whatever the umask (S2.6), and no ``tempfile`` (random, hashlib) to import.
        fd, tmp = open_private_temp(target)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(marshal.dumps(baseline.packed_json()))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        if self.keep:
            _keep(target, baseline)
        _file(self.directory, agent, session_id, ".json").unlink(missing_ok=True)  # superseded
        self._prune()

    def _prune(self) -> None:
        files = [p for p in self.directory.iterdir() if p.suffix in (".marshal", ".json")]
        files = [p for p in files if not p.name.startswith(".")]
        files.sort(key=_mtime, reverse=True)
        for stale in files[KEEP_SESSIONS:]:
            stale.unlink(missing_ok=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
