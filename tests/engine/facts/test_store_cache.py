"""The listing cache and id hints never serve stale data (S4.10, S3.4)."""

from __future__ import annotations

import os
from pathlib import Path

from context_engine.facts.memory import Memory
from support.store import make_paths


def test_listing_sees_external_changes_on_the_same_object(tmp_path: Path) -> None:
    memory = Memory(make_paths(tmp_path))
    memory.save(name="x", description="first", body="b")
    assert [f.description for f in memory.list_all()] == ["first"]
    other = Memory(make_paths(tmp_path))
    other.save(name="x", description="second", body="b")
    other.save(name="y", description="new", body="b")
    assert [f.description for f in memory.list_all()] == ["second", "new"]
    path = memory.paths.project_store / "x.md"
    # An in-place hand edit of the same length still changes mtime (or inode): re-read.
    data = path.read_bytes().replace(b"second", b"SECOND")
    st = path.stat()
    path.write_bytes(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert [f.description for f in memory.list_all()] == ["SECOND", "new"]
    os.unlink(path)
    assert [f.name for f in memory.list_all()] == ["y"]


def test_save_by_id_after_another_process_renamed_it(tmp_path: Path) -> None:
    memory = Memory(make_paths(tmp_path))
    fact = memory.save(name="x", description="d", body="b").fact
    assert fact is not None
    memory.list_all()  # the id hint now points at x.md
    Memory(make_paths(tmp_path)).save(id=fact.id, name="renamed")
    Memory(make_paths(tmp_path)).save(name="x", description="another fact", body="b")
    updated = memory.save(id=fact.id, body="after").fact
    assert updated is not None
    assert (updated.name, updated.revision, updated.body) == ("renamed", 3, "after")
    assert memory.resolve("x").description == "another fact"


def test_symlinked_fact_file_is_a_diagnostic_and_not_read(tmp_path: Path) -> None:
    memory = Memory(make_paths(tmp_path))
    memory.save(name="real", description="d", body="b")
    secret = tmp_path / "secret.md"
    secret.write_text("---\nname: secret\n---\nprivate\n")
    (memory.paths.project_store / "secret.md").symlink_to(secret)
    snap = memory.snapshot()
    assert [f.name for f in snap.facts] == ["real"]
    assert [(d.code, d.path.name) for d in snap.diagnostics] == [("symlink", "secret.md")]


def test_oversized_file_is_a_diagnostic(tmp_path: Path) -> None:
    from context_engine.facts.decoding import MAX_FACT_BYTES

    memory = Memory(make_paths(tmp_path))
    memory.save(name="ok", description="d", body="b")
    huge = memory.paths.project_store / "huge.md"
    with open(huge, "wb") as handle:
        handle.truncate(MAX_FACT_BYTES + 1)  # sparse: no real disk use
    snap = memory.snapshot()
    assert [f.name for f in snap.facts] == ["ok"]
    assert [(d.code, d.path.name) for d in snap.diagnostics] == [("too_large", "huge.md")]
    assert huge.stat().st_size == MAX_FACT_BYTES + 1


def test_listing_restores_the_callers_gc_state(tmp_path: Path) -> None:
    import gc

    memory = Memory(make_paths(tmp_path))
    memory.save(name="x", description="d", body="b")
    assert gc.isenabled()
    memory.list_all()
    assert gc.isenabled()
    gc.disable()
    try:
        memory.list_all()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_save_by_id_in_a_fresh_process_finds_every_encoding(tmp_path: Path) -> None:
    paths = make_paths(tmp_path)
    store = paths.project_store
    store.mkdir(parents=True)
    fact_id = "mem-" + "ab" * 16
    text = (
        f"---\nid: {fact_id}\nrevision: 4\nname: wide\ndescription: utf-16 file\n"
        "metadata:\n  type: project\n  scope: project\n---\n\nbody\n"
    )
    (store / "wide.md").write_bytes(text.encode("utf-16"))
    (store / "mentions.md").write_text(
        f"---\nid: mem-{'cd' * 16}\nrevision: 1\nname: mentions\ndescription: d\n---\n"
        f"See {fact_id}.\n"
    )
    updated = Memory(paths).save(id=fact_id, body="new body").fact
    assert updated is not None
    assert (updated.name, updated.revision, updated.body) == ("wide", 5, "new body")
    other = Memory(paths).save(id=f"mem-{'cd' * 16}", body="x").fact
    assert other is not None and other.name == "mentions"


def test_archive_listing_cache_follows_the_disk(tmp_path: Path) -> None:
    memory = Memory(make_paths(tmp_path))
    memory.save(name="x", description="dx", body="b")
    memory.save(name="y", description="dy", body="b")
    (x_entry,) = memory.forget("x").archived
    assert [e.fact.name for e in memory.list_archived() if e.fact] == ["x"]
    memory.forget("y")
    assert sorted(e.fact.name for e in memory.list_archived() if e.fact) == ["x", "y"]
    memory.recover(x_entry)
    (only,) = memory.list_archived()
    assert only.fact is not None and only.fact.name == "y"
    only.path.write_bytes(only.path.read_bytes().replace(b"dy", b"edited by hand"))
    (edited,) = memory.list_archived()
    assert edited.fact is not None and edited.fact.description == "edited by hand"


def test_same_size_in_place_edit_with_restored_mtime_is_seen(tmp_path: Path) -> None:
    memory = Memory(make_paths(tmp_path))
    memory.save(name="x", description="before", body="b")
    path = memory.paths.project_store / "x.md"
    st = path.stat()
    assert [f.description for f in memory.list_all()] == ["before"]  # cached now
    with open(path, "r+b") as handle:  # same inode, same size, same tick
        data = handle.read().replace(b"before", b"BEFORE")
        handle.seek(0)
        handle.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # an editor that keeps the mtime
    assert path.stat().st_size == st.st_size and path.stat().st_ino == st.st_ino
    assert [f.description for f in memory.list_all()] == ["BEFORE"]


def test_old_unchanged_files_are_served_from_the_cache(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import context_engine.facts.store as store_module

    memory = Memory(make_paths(tmp_path))
    memory.save(name="x", description="d", body="b")
    monkeypatch.setattr(store_module, "RACY_NS", -(10**18))  # every file counts as old
    memory.list_all()
    reads: list[str] = []
    real = store_module.read_sized

    def counting(fs, path, size):  # type: ignore[no-untyped-def]
        reads.append(str(path))
        return real(fs, path, size)

    monkeypatch.setattr(store_module, "read_sized", counting)
    assert [f.name for f in memory.list_all()] == ["x"]
    assert reads == []
