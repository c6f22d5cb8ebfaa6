"""The workspace's proposals file: bounded, de-duplicated, private (S2.4, S2.6, S15.2).

``<workspace data>/proposals.json``, 0600 in a 0700 directory, replaced atomically under a lock.
A file that cannot be parsed is never rewritten: adding to it fails, listing reports it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import ContextEngineError, FactNotFound
from .model import Proposal

MAX_PROPOSALS = 50
FILE_NAME = "proposals.json"


class ProposalFileError(ContextEngineError):
    """The proposals file exists but cannot be read unambiguously."""

    code = "format_error"


class ProposalStore:
    """Load, add and remove proposals of one workspace."""

    def __init__(self, directory: Path, limit: int = MAX_PROPOSALS) -> None:
        self.directory = directory
        self.path = directory / FILE_NAME
        self.limit = limit

    def entries(self) -> list[Proposal]:
        """Every kept proposal, oldest first; empty when there is no file (reads create none)."""
        try:
            text = self.path.read_text("utf-8")
        except FileNotFoundError:
            return []
        try:
            data = json.loads(text)
            entries = data["proposals"] if isinstance(data, dict) else None
            if not isinstance(entries, list):
                raise ValueError("no proposals list")
            return [Proposal.from_json(entry) for entry in entries]
        except (ValueError, KeyError, TypeError) as exc:
            raise ProposalFileError(f"proposals file is not readable: {exc}") from exc

    def get(self, proposal_id: str) -> Proposal:
        """One proposal by id (a unique prefix is enough)."""
        matches = [p for p in self.entries() if p.id == proposal_id]
        if not matches:
            matches = [p for p in self.entries() if p.id.startswith(proposal_id)]
        if len(matches) != 1:
            raise FactNotFound(f'proposal "{proposal_id}" not found')
        return matches[0]

    def add(self, proposal: Proposal) -> Proposal:
        """Keep ``proposal``; the same call again replaces the older one (keeping its id)."""
        with self._locked():
            kept = self.entries()
            same = next((p for p in kept if p.digest == proposal.digest), None)
            if same is not None:
                kept.remove(same)
                proposal = _with_id(proposal, same.id)
            kept.append(proposal)
            self._write(kept[-self.limit :])
        return proposal

    def remove(self, proposal_id: str) -> Proposal:
        """Drop one proposal (after it was accepted or dismissed)."""
        with self._locked():
            found = self.get(proposal_id)
            self._write([p for p in self.entries() if p.id != found.id])
        return found

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        _private_dir(self.directory)
        fd = os.open(self.directory / ".proposals.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                import fcntl
            except ImportError:  # Windows: one writer at a time is the common case
                yield
                return
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _write(self, proposals: list[Proposal]) -> None:
        document = {"version": 1, "proposals": [p.to_json() for p in proposals]}
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(document, handle, ensure_ascii=False, indent=1)
                handle.write("\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _with_id(proposal: Proposal, proposal_id: str) -> Proposal:
    from dataclasses import replace

    return replace(proposal, id=proposal_id)


def _private_dir(directory: Path) -> None:
    """Create ``directory`` (and missing parents) 0700 whatever the umask."""
    missing = []
    current = directory
    while not current.exists():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        path.mkdir(exist_ok=True)
        os.chmod(path, 0o700)
