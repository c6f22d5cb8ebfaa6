"""S5.1: upgrade legacy fact files of one store to the S3.1 format, idempotently.

Called with the store lock held. Only files the codec flags ``needs_upgrade`` (no non-empty id
or no revision > 0) are rewritten; unreadable files are left byte-identical; MEMORY.md,
dotfiles and sub-directories are never touched. Plain reads never call this.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import FactFormatError
from .codec import render_fact
from .fs import atomic_write
from .store import Store, is_fact_file_name


def migrate_store(store: Store) -> list[Path]:
    """Rewrite every legacy fact file of ``store``; returns the paths rewritten."""
    try:
        entries = list(os.scandir(store.root))
    except (FileNotFoundError, NotADirectoryError):
        return []
    rewritten: list[Path] = []
    for entry in sorted(entries, key=lambda e: e.name):
        if not is_fact_file_name(entry.name):
            continue
        try:
            if not stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
                continue
        except OSError:
            continue
        path = Path(entry.path)
        try:
            loaded = store.load(path)
        except FactFormatError:
            continue
        if loaded is None or not loaded.parsed.needs_upgrade:
            continue
        data = render_fact(loaded.fact)
        if data != loaded.data:
            atomic_write(store.fs, path, data, revision=loaded.fact.revision)
            rewritten.append(path)
    return rewritten
