"""The store's restore primitive: exact files placed create-only, all or nothing (S15.3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from context_engine.errors import AlreadyExists, PathEscape
from context_engine.facts.fs import FS
from context_engine.facts.placement import StagedFile, place_files


def staged(tmp: Path, relative: str, data: bytes) -> StagedFile:
    source = tmp / "staging" / relative.replace("/", "__")
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(data)
    return StagedFile(source, relative, 1_700_000_000_123_456_789)


def test_files_land_byte_identical_with_their_mtime(tmp_path: Path) -> None:
    store = tmp_path / "store"
    files = [
        staged(tmp_path, "a.md", b"A"),
        staged(tmp_path, ".revisions/mem-1/000000001.md", b"R1"),
        staged(tmp_path, ".archive/x.md", b"X"),
    ]
    placed = place_files(FS(), store, files)
    assert [p.relative_to(store).as_posix() for p in placed] == [
        "a.md", ".revisions/mem-1/000000001.md", ".archive/x.md"]
    assert (store / ".revisions/mem-1/000000001.md").read_bytes() == b"R1"
    assert os.stat(store / "a.md").st_mtime_ns == 1_700_000_000_123_456_789


def test_an_existing_file_is_never_replaced_and_nothing_stays_placed(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / ".archive").mkdir(parents=True)
    (store / ".archive" / "x.md").write_bytes(b"mine")
    files = [
        staged(tmp_path, "a.md", b"A"),
        staged(tmp_path, ".revisions/mem-1/000000001.md", b"R"),
        staged(tmp_path, ".archive/x.md", b"X"),
    ]
    with pytest.raises(AlreadyExists):
        place_files(FS(), store, files)
    assert (store / ".archive" / "x.md").read_bytes() == b"mine"
    assert sorted(p.name for p in store.rglob("*")) == [".archive", "x.md"]


def test_a_cancel_between_files_undoes_the_placed_ones(tmp_path: Path) -> None:
    store = tmp_path / "store"
    files = [staged(tmp_path, f"f{i}.md", b"x") for i in range(5)]
    calls = [0]

    def check() -> None:
        calls[0] += 1
        if calls[0] == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        place_files(FS(), store, files, check=check)
    assert list(store.iterdir()) == []


def test_a_path_outside_the_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PathEscape):
        place_files(FS(), tmp_path / "store", [staged(tmp_path, "../escape.md", b"x")])
    assert not (tmp_path / "escape.md").exists()


def test_a_bulk_restore_places_everything_and_undoes_everything(tmp_path: Path) -> None:
    store = tmp_path / "store"
    files = [staged(tmp_path, f".revisions/mem-{i % 7}/{i:09d}.md", b"r%d" % i)
             for i in range(100)]  # above BULK_FILES: one sync() instead of fsyncs
    placed = place_files(FS(), store, files)
    assert len(placed) == 100
    assert (store / ".revisions/mem-3/000000010.md").read_bytes() == b"r10"
    again = tmp_path / "again"
    (again / ".revisions" / "mem-6").mkdir(parents=True)
    (again / ".revisions" / "mem-6" / f"{97:09d}.md").write_bytes(b"here")
    with pytest.raises(AlreadyExists):
        place_files(FS(), again, files)
    assert [p.relative_to(again).as_posix() for p in again.rglob("*")] == [
        ".revisions", ".revisions/mem-6", f".revisions/mem-6/{97:09d}.md"]
