"""S5.1: upgrade legacy fact files of one store to the S3.1 format, idempotently.

Called with the store lock held. Only files the codec flags ``needs_upgrade`` (no non-empty id
or no revision > 0) are rewritten; unreadable files are left byte-identical; MEMORY.md,
dotfiles and sub-directories are never touched. Plain reads never call this.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import FactFormatError
from .codec import render_fact
from .fs import atomic_write
from .store import Store


def migrate_store(store: Store) -> list[Path]:
    """Rewrite every legacy fact file of ``store``; returns the paths rewritten.

    The (cached) snapshot names the candidates; each is re-read under the lock before writing.
    """
    store.snapshot()
    rewritten: list[Path] = []
    for path in store.legacy_files():
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
