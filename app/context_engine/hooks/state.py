"""What each agent session has already been told, kept between hook processes (S7.3).

One small file per agent session under ``<workspace data>/agent-sessions/``; the session id is
hashed so any string is a safe file name. Writes are atomic (temp file + ``os.replace``). The
document is ``marshal`` of a plain shape (loading cannot run code; ~4× faster than JSON at
10,000 facts). The marks themselves — one per fact, 8.9 MB at 100,000 facts — lie in a marks
file of their own beside it (``<session file stem>.<token>.marks``, the ``marshal`` bytes of
the [id, revision, reference] list), written when a session's baseline is first saved and
whenever its overlay grows past ``session/notes._FLATTEN_PAST`` entries; the document names
that file and carries the marks set and ids taken out since (``Baseline.layered_json``). So a
quiet turn reads a few hundred bytes, and a turn after one change writes one mark: neither
decodes nor encodes 10^5 (``session/notes._MarkTable`` reads the marks file on first use, from
a descriptor opened at load, so a marks file replaced meanwhile still reads as loaded). A file
whose ``facts`` lie inline (an earlier version, as bytes or a plain list) reads as before, and
so does a ``.json`` file of an earlier version when it is the newer of the two.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import time
from pathlib import Path

from ..digests import sha256
from ..filemodes import make_private_dirs, open_private_temp
from ..session.notes import Baseline

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

KEEP_SESSIONS = 200
MARKS_SUFFIX = ".marks"
# A marks file without its session's document is removed once this old (seconds): older than
# any save still between writing it and writing the document.
_ORPHAN_AGE = 600.0
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
            baseline = (
                Baseline.from_json(data, self._marks_reader) if isinstance(data, dict) else None
            )
        except (OSError, ValueError, EOFError, TypeError):
            return None
        if baseline is not None and self.keep:
            _keep(current, baseline)
        return baseline

    def _marks_reader(self, name: str) -> Callable[[], bytes]:
        """What reads the marks file ``name`` when first asked; opened now (``OSError`` when it
        cannot be), so its bytes are the ones this document was saved with."""
        if not name.endswith(MARKS_SUFFIX) or os.sep in name or name.startswith("."):
            raise OSError(f"not a marks file name: {name!r}")
        return _MarksFile(self.directory / name)

    def save(self, agent: str, session_id: str, baseline: Baseline) -> None:
        """Atomically replace the session's baseline; keep only the newest sessions' files.

        Marks lying on a marks file that is still there are saved as its name and the overlay
        on it; any others are written to a new marks file first (``Baseline.layered_json``)."""
        from ..session.notes import packed_marks, saved_layers

        make_private_dirs(self.directory)
        target = _file(self.directory, agent, session_id)
        source, _, _ = saved_layers(baseline.facts)
        stem = target.name[: -len(".marshal")]
        fresh = (
            source is None
            or not source.startswith(stem + ".")
            or not (self.directory / source).exists()  # taken away meanwhile: write anew
        )
        if fresh:
            source = f"{stem}.{time.time_ns():x}{os.getpid():x}{MARKS_SUFFIX}"
            _write_atomic(self.directory / source, packed_marks(baseline.facts))
        assert source is not None
        _write_atomic(target, marshal.dumps(baseline.layered_json(source)))
        if self.keep:
            _keep(target, baseline)
        _file(self.directory, agent, session_id, ".json").unlink(missing_ok=True)  # superseded
        if fresh:
            # The session's earlier marks files: a process that loaded one holds it open.
            # Best effort: one that cannot go now goes at the session's next new marks file.
            for other in self.directory.glob(f"{stem}.*{MARKS_SUFFIX}"):
                if other.name != source:
                    _remove(other)
        self._prune()

    def _prune(self) -> None:
        entries = [p for p in self.directory.iterdir() if not p.name.startswith(".")]
        files = [p for p in entries if p.suffix in (".marshal", ".json")]
        files.sort(key=_mtime, reverse=True)
        for stale in files[KEEP_SESSIONS:]:
            stale.unlink(missing_ok=True)
        # Marks files of sessions whose document is gone (pruned, or never written: a save
        # that stopped between the two writes), once older than any save in progress.
        live = {p.stem for p in files[:KEEP_SESSIONS]}
        old = time.time() - _ORPHAN_AGE
        for marks in entries:
            if (
                marks.suffix == MARKS_SUFFIX
                and marks.name.partition(".")[0] not in live
                and _mtime(marks) < old
            ):
                _remove(marks)


def _remove(path: Path) -> None:
    """Unlink ``path`` if it can be (gone already, or held open where that forbids it: left)."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


class _MarksFile:
    """A marks file opened now and read (then closed) when first called."""

    _fd: int | None = None

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))

    def __call__(self) -> bytes:
        fd = self._fd
        if fd is None:
            raise OSError("marks file already read")
        self._fd = None
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 22):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def __del__(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _write_atomic(target: Path, data: bytes) -> None:
    """``data`` as ``target``, whole or not at all, 0600 whatever the umask (S2.6)."""
    # No ``tempfile`` (random, hashlib) to import.
    fd, tmp = open_private_temp(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
