"""``export --out`` and ``import bundle``: byte-identical restore, merge, cancel (S15.3)."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from context_engine.cli.main import cli
from context_engine.facts.memory import Memory
from context_engine.transfer.export import export_bundle
from context_engine.transfer.progress import Cancelled
from context_engine.transfer.restore import restore_bundle
from support.bundles import cancel_after, files_of, paths_for, populate, store_files_of, workspace

ORACLE = Path(__file__).resolve().parents[3] / ".." / "shared" / "reasonix-oracle" / "rxharness"


def cli_json(home: Path, ws: Path, *args: str) -> dict[str, object]:
    """One ``context-engine --json`` call; its JSON object."""
    result = CliRunner().invoke(cli, ["--json", "--home", str(home), "--workspace", str(ws),
                                      *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


@pytest.fixture
def exported(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(source home, workspace, bundle) of a populated home."""
    ws = workspace(tmp_path)
    home = tmp_path / "home"
    populate(paths_for(home, ws))
    bundle = tmp_path / "out" / "memories.tar.gz"
    bundle.parent.mkdir()
    payload = cli_json(home, ws, "export", "--out", str(bundle))
    assert payload["counts"] == {
        "project": {"fact": 2, "index": 1, "archive": 1, "revision": 3},
        "global": {"fact": 1, "index": 1, "archive": 1, "revision": 1},
    }
    return home, ws, bundle


def test_restore_into_an_empty_home_is_byte_identical_file_by_file(exported, tmp_path) -> None:
    home, ws, bundle = exported
    target = tmp_path / "restored"
    payload = cli_json(target, ws, "import", "bundle", str(bundle), "--yes")
    assert [s["mode"] for s in payload["scopes"]] == ["restore", "restore"]  # type: ignore[index]
    original, restored = store_files_of(home), store_files_of(target)
    assert sorted(restored) == sorted(original)
    for name, (data, mtime) in original.items():
        assert restored[name] == (data, mtime), name
    assert "context-center" not in {p.name for p in target.iterdir()}  # staging removed


def test_the_restored_home_lists_the_same_facts_and_history(exported, tmp_path) -> None:
    home, ws, bundle = exported
    target = tmp_path / "restored"
    cli_json(target, ws, "import", "bundle", str(bundle), "--yes")
    before, after = Memory(paths_for(home, ws)), Memory(paths_for(target, ws))
    assert after.list_all() == before.list_all()
    assert [(e.path.name, e.fact) for e in after.list_archived()] == [
        (e.path.name, e.fact) for e in before.list_archived()]
    for fact in before.list_all():
        assert after.revisions(fact.id) == before.revisions(fact.id)


@pytest.mark.skipif(not ORACLE.exists(), reason="../shared/reasonix-oracle is not available")
def test_the_real_reasonix_lists_the_same_facts_after_a_restore(exported, tmp_path) -> None:
    home, ws, bundle = exported
    target = tmp_path / "restored"
    cli_json(target, ws, "import", "bundle", str(bundle), "--yes")

    def listed(where: Path) -> list[dict[str, object]]:
        out = subprocess.run([str(ORACLE), "list", "--home", str(where), "--ws", str(ws)],
                             capture_output=True, text=True, check=True).stdout
        payload = json.loads(out)
        assert payload.get("error", "") == ""
        return [{k: v for k, v in f.items() if k != "path"} for f in payload["facts"]]

    assert listed(target) == listed(home)
    assert len(listed(home)) == 3


@pytest.mark.slow
def test_dry_run_checks_the_bundle_and_writes_nothing(exported, tmp_path) -> None:
    _home, ws, bundle = exported
    target = tmp_path / "restored"
    payload = cli_json(target, ws, "import", "bundle", str(bundle), "--dry-run")
    assert payload["written"] is False
    assert [s["files"] for s in payload["scopes"]] == [7, 4]  # type: ignore[index]
    assert not target.exists()


@pytest.mark.slow
def test_merge_into_a_non_empty_home_never_overwrites(exported, tmp_path) -> None:
    _home, ws, bundle = exported
    target = tmp_path / "other"
    memory = Memory(paths_for(target, ws))
    memory.save(name="release-target", description="Here it is another fact", body="Mine.")
    memory.save(name="local-only", description="only in this home", body="Keep me.")
    before = files_of(target)
    skipped = cli_json(target, ws, "import", "bundle", str(bundle), "--yes")
    project = skipped["scopes"][0]  # type: ignore[index]
    assert project["mode"] == "merge"
    assert [(c["kind"], c["path"], c["resolution"]) for c in project["conflicts"]] == [
        ("name", "release-target.md", "skipped")]
    after = files_of(target)
    for name, value in before.items():
        if not name.endswith("MEMORY.md"):
            assert after[name] == value, name  # nothing of this home was changed
    names = {f.name for f in memory.list_all()}
    assert names == {"release-target", "local-only", "记忆召回", "prefers-tabs"}
    mine = memory.resolve("project/release-target.md")
    assert mine.body == "Mine." and mine.revision == 1
    # The new fact came with its id and history; the archive entries too.
    tabs = memory.resolve("global/prefers-tabs.md")
    assert [f.revision for f in memory.revisions(tabs.id)] == [1]
    assert len(memory.list_archived()) == 2


@pytest.mark.slow
def test_a_conflict_can_be_kept_as_a_new_revision_and_a_rerun_adds_nothing(exported, tmp_path
                                                                          ) -> None:
    _home, ws, bundle = exported
    target = tmp_path / "other"
    memory = Memory(paths_for(target, ws))
    memory.save(name="release-target", description="Here it is another fact", body="Mine.")
    payload = cli_json(target, ws, "import", "bundle", str(bundle), "--yes",
                       "--on-conflict", "revision")
    assert payload["revised"] == [{"reference": "project/release-target.md", "revision": 2}]
    fact = memory.resolve("project/release-target.md")
    assert fact.body == "Publish from main-v2." and fact.revision == 2
    assert [f.body for f in memory.revisions(fact.id)] == ["Mine."]
    snapshot = files_of(target)
    again = cli_json(target, ws, "import", "bundle", str(bundle), "--yes",
                     "--on-conflict", "revision")
    assert again["revised"] == [] and again["placed"] == 0
    assert files_of(target) == snapshot


@pytest.mark.slow
def test_restoring_the_same_bundle_twice_adds_nothing(exported, tmp_path) -> None:
    _home, ws, bundle = exported
    target = tmp_path / "restored"
    cli_json(target, ws, "import", "bundle", str(bundle), "--yes")
    snapshot = files_of(target)
    payload = cli_json(target, ws, "import", "bundle", str(bundle), "--yes")
    assert payload["placed"] == 0
    assert all(s["conflicts"] == [] for s in payload["scopes"])  # type: ignore[union-attr]
    assert files_of(target) == snapshot


def test_a_cancelled_restore_leaves_the_target_untouched(exported, tmp_path) -> None:
    _home, ws, bundle = exported
    target = tmp_path / "restored"
    paths = paths_for(target, ws)
    for stop_after in (3, 14, 20):  # while reading the bundle, placing project, placing global
        check = cancel_after(stop_after)
        with pytest.raises(Cancelled):
            restore_bundle(paths, bundle, write=True, check=check)
        assert store_files_of(target) == {}, stop_after
        assert not (target / "context-center").exists()


def test_a_cancelled_export_leaves_no_file(exported, tmp_path) -> None:
    home, ws, _bundle = exported
    out = tmp_path / "out" / "cancelled.tar.gz"
    check = cancel_after(6)  # half way through the 11 files
    with pytest.raises(Cancelled):
        export_bundle(paths_for(home, ws), out, check=check)
    assert sorted(p.name for p in out.parent.iterdir()) == ["memories.tar.gz"]


def test_export_reports_progress_and_skips_symlinks(exported, tmp_path) -> None:
    home, ws, _bundle = exported
    store = paths_for(home, ws).project_store
    (tmp_path / "outside.md").write_text("---\nname: outside\n---\n\nsecret\n")
    (store / "linked.md").symlink_to(tmp_path / "outside.md")
    seen: list[tuple[int, int]] = []
    out = tmp_path / "out" / "b.tar.gz"
    report = export_bundle(paths_for(home, ws), out, scopes=("project",),
                           progress=lambda d, t, _w: seen.append((d, t)))
    with tarfile.open(out) as tar:
        names = tar.getnames()
    assert "project/linked.md" not in names and report.files == 7
    assert seen[-1] == (7, 7) and seen == sorted(seen)
    assert out.stat().st_mode & 0o777 == 0o600


def test_progress_is_shown_on_stderr_with_the_flag(exported, tmp_path) -> None:
    home, ws, _bundle = exported
    result = CliRunner().invoke(cli, ["--home", str(home), "--workspace", str(ws), "export",
                                      "--out", str(tmp_path / "p.tar.gz"), "--progress"])
    assert result.exit_code == 0
    assert "export: 11/11" in result.stderr
    quiet = CliRunner().invoke(cli, ["--home", str(home), "--workspace", str(ws), "export",
                                     "--out", str(tmp_path / "q.tar.gz")])
    assert "export:" not in quiet.stderr


@pytest.mark.slow
@pytest.mark.parametrize("planted", [".archive", ".revisions"])
def test_a_symlinked_folder_in_the_target_store_is_never_written_through(
    exported, tmp_path, planted: str
) -> None:
    _home, ws, bundle = exported
    target = tmp_path / "other"
    store = paths_for(target, ws).global_store
    store.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (store / planted).symlink_to(outside, target_is_directory=True)
    result = CliRunner().invoke(cli, ["--home", str(target), "--workspace", str(ws), "import",
                                      "bundle", str(bundle), "--yes"])
    assert result.exit_code == 1
    assert "escapes store" in result.stderr
    assert list(outside.iterdir()) == []
    assert store_files_of(target) == {}  # the project store was rolled back too


def test_a_file_name_the_bundle_cannot_hold_is_skipped_and_said(exported, tmp_path) -> None:
    home, ws, _bundle = exported
    store = paths_for(home, ws).project_store
    (store / "back\\slash.md").write_bytes((store / "记忆召回.md").read_bytes())
    out = tmp_path / "out" / "named.tar.gz"
    payload = cli_json(home, ws, "export", "--out", str(out))
    assert payload["skipped"] == ["project/back\\slash.md"]
    restored = cli_json(tmp_path / "r", ws, "import", "bundle", str(out), "--yes")
    assert restored["written"] is True  # the bundle stays readable by its own reader


def test_restored_files_are_private_whatever_the_umask(exported, tmp_path) -> None:
    _home, ws, bundle = exported
    target = tmp_path / "restored"
    old = os.umask(0o277)  # would make new files read-only and folders unlistable
    try:
        cli_json(target, ws, "import", "bundle", str(bundle), "--yes")
    finally:
        os.umask(old)
    store = paths_for(target, ws).project_store
    modes = {p.name: p.stat().st_mode & 0o777 for p in store.rglob("*.md")}
    assert set(modes.values()) == {0o600}, modes


@pytest.mark.slow
def test_a_store_without_an_index_is_restored_without_one(tmp_path) -> None:
    ws = workspace(tmp_path)
    home = tmp_path / "home"
    paths = paths_for(home, ws)
    populate(paths)
    (paths.project_store / "MEMORY.md").unlink()
    bundle = tmp_path / "b.tar.gz"
    cli_json(home, ws, "export", "--out", str(bundle))
    target = tmp_path / "restored"
    cli_json(target, ws, "import", "bundle", str(bundle), "--yes")
    assert store_files_of(target) == store_files_of(home)
    assert not (paths_for(target, ws).project_store / "MEMORY.md").exists()


@pytest.mark.slow
def test_each_conflict_can_be_chosen_on_its_own(exported, tmp_path) -> None:
    _home, ws, bundle = exported
    target = tmp_path / "other"
    memory = Memory(paths_for(target, ws))
    memory.save(name="release-target", description="Here it is another fact", body="Mine.")
    memory.save(name="prefers-tabs", type="user", scope="global", description="tabs here",
                body="Mine too.")
    planned = cli_json(target, ws, "import", "bundle", str(bundle), "--dry-run")
    paths = [(s["scope"], c["path"]) for s in planned["scopes"]  # type: ignore[union-attr]
             for c in s["conflicts"]]
    assert paths == [("project", "release-target.md"), ("global", "prefers-tabs.md")]
    payload = cli_json(target, ws, "import", "bundle", str(bundle), "--yes",
                       "--revise", "global/prefers-tabs.md")
    assert payload["revised"] == [{"reference": "global/prefers-tabs.md", "revision": 2}]
    assert memory.resolve("project/release-target.md").body == "Mine."  # skipped
    assert memory.resolve("global/prefers-tabs.md").body == "Indent with tabs, width 8."
