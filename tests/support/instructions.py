"""Shared helpers for the instruction tests: engine paths over a tree and a recording seam."""

from __future__ import annotations

import os
from pathlib import Path

from context_engine.instructions.opener import FileSystem
from context_engine.paths import EnginePaths


def engine_paths(home: Path, root: Path, workspace: Path | None = None) -> EnginePaths:
    """EnginePaths with an explicit home and root (no .git lookup)."""
    return EnginePaths(home=home, state=home, workspace=workspace or root, root=root)


class RecordingFS(FileSystem):
    """Records the real path of every fd the resolver opens, plus every read."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.read_paths: list[str] = []

    def open(self, path: str, flags: int, dir_fd: int | None = None) -> int:
        fd = super().open(path, flags, dir_fd)
        self.opened.append(os.readlink(f"/proc/self/fd/{fd}"))
        return fd

    def read(self, fd: int, size: int) -> bytes:
        self.read_paths.append(os.readlink(f"/proc/self/fd/{fd}"))
        return super().read(fd, size)


class FailingFS(FileSystem):
    """Raises ``PermissionError`` when opening a path whose last component is in ``names``
    (tests run as root, so chmod cannot make a file unreadable)."""

    def __init__(self, *names: str) -> None:
        self.names = set(names)

    def open(self, path: str, flags: int, dir_fd: int | None = None) -> int:
        if path.rsplit("/", 1)[-1] in self.names:
            raise PermissionError(13, "Permission denied", path)
        return super().open(path, flags, dir_fd)
