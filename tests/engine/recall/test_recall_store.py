"""Recall over a real store: never writes it, skips and reports unreadable files (S8.11)."""

from __future__ import annotations

from pathlib import Path

from context_engine.catalog.local import LocalCatalog
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from support.recall import NOW


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _workspace(tmp_path: Path) -> tuple[EnginePaths, Memory]:
    ws = tmp_path / "ws"
    ws.mkdir()
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=ws, root=ws)
    paths.project_store.mkdir(parents=True)
    memory = Memory(paths)
    memory.save(name="auth-handler-panic", title="AuthHandler panic", description="nil token crash",
                body="AuthHandler panics on an empty token; tracked as #6928.", type="project",
                scope="project")
    memory.save(name="release-train", title="Release train", description="weekly release",
                body="Release builds leave on Thursdays.", type="reference", scope="global")
    return paths, memory


def test_recall_never_writes_a_store(tmp_path: Path) -> None:
    paths, _ = _workspace(tmp_path)
    before = (_tree(paths.project_store), _tree(paths.global_store))
    ws = LocalCatalog(paths).index
    result = ws.recaller().recall("fix AuthHandler #6928", now=NOW)
    assert result.block
    ws.trace_log().record(result.trace)
    ws.recaller().search("release Thursdays")
    assert (_tree(paths.project_store), _tree(paths.global_store)) == before
    assert ws.trace_log().last_path.is_file()
    assert not ws.trace_log().last_path.is_relative_to(paths.project_store)


def test_unreadable_fact_is_skipped_and_reported(tmp_path: Path) -> None:
    paths, _ = _workspace(tmp_path)
    broken = paths.project_store / "broken-note.md"
    broken.write_text("---\nname: [unterminated\n---\nAuthHandler body\n", encoding="utf-8")
    ws = LocalCatalog(paths).index
    result = ws.recaller().recall("fix AuthHandler #6928", now=NOW)
    assert [h.name for h in result.trace.hits] == ["auth-handler-panic"]
    assert "broken-note.md" in [s.file for s in result.trace.skipped]
    assert str(paths.project_store) not in result.trace.to_text()
    assert str(paths.project_store) not in result.block


def test_home_under_a_folder_named_archive_still_recalls(tmp_path: Path) -> None:  # S8.3
    base = tmp_path / ".archive" / ".revisions"
    base.mkdir(parents=True)
    paths, memory = _workspace(base)
    ws = LocalCatalog(paths).index
    result = ws.recaller().recall("fix AuthHandler #6928", now=NOW)
    assert "AuthHandler" in result.block
    memory.forget("auth-handler-panic")
    archived = memory.list_archived()
    assert archived  # the archived copy itself never comes back through recall
    assert ws.recaller().recall("fix AuthHandler #6928", now=NOW).block == ""
