"""The lstat listing a cold turn checks its saved state against (facts/stat_listing.py)."""

from __future__ import annotations

import os
from pathlib import Path

from context_engine.facts.stat_listing import identity_of, scan_listing


def test_the_listing_is_each_candidate_files_own_lstat(tmp_path: Path) -> None:
    store = tmp_path / "memory"
    store.mkdir()
    for name in ("a.md", "b-发布.md", "MEMORY.md", ".tmp-x.md", "notes.txt", "c.md.lock"):
        (store / name).write_text(name)
    (store / "sub.md").mkdir()  # not a file: listed by its identity, judged by the reader
    (store / "link.md").symlink_to(store / "a.md")  # the link's own lstat, never its target's
    found = scan_listing(store)
    names = ("a.md", "b-发布.md", "sub.md", "link.md")
    expected = {name: identity_of(os.lstat(store / name)) for name in names}
    assert found == expected
    assert list(found) == [n for n in os.listdir(store) if n in expected]  # directory order
    assert scan_listing(tmp_path / "missing") == {}
    assert scan_listing(store / "a.md") == {}  # not a directory
