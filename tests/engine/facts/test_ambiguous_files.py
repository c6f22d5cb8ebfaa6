"""Files that admit two readings: read like Reasonix, never rewritten; hostile recover names.

Reasonix (the oracle) reads an empty file, a first line of JSON and a never-closed fence as
legacy facts whose text is the body; we read them the same (same ids, names, bodies). Our
migration rewrites only the shape with one reading (the empty file, as Reasonix does) and leaves
the other two byte-identical with a diagnostic.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from context_engine.cli.main import cli
from context_engine.errors import InvalidName
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from support.store import tree

ORACLE = Path(__file__).resolve().parents[3] / ".." / "shared" / "reasonix-oracle" / "rxharness"

FILES = {
    "empty.md": b"",
    "unclosed.md": b"---\nname: unclosed\ndescription: Unclosed fence\ntype: project\nbody\n",
    "jsonhead.md": b'{"name": "jsonhead", "type": "project"}\nBody after the JSON line\n',
    "jsonblock.md": b'{\n  "name": "jsonblock"\n}\nBody after a JSON block\n',
}
AMBIGUOUS = {
    "unclosed.md": "unterminated_frontmatter",
    "jsonhead.md": "json_header",
    "jsonblock.md": "json_header",
}


def _home(base: Path) -> EnginePaths:
    workspace = base / "ws"
    (workspace / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=base / "home", workspace=workspace)
    Memory(paths).save(name="seed", description="Seed", body="x", type="project")
    for name, data in FILES.items():
        (paths.project_store / name).write_bytes(data)
    return paths


def test_migrate_leaves_ambiguous_files_untouched_with_a_diagnostic(tmp_path: Path) -> None:
    paths = _home(tmp_path)
    before = {name: (paths.project_store / name).read_bytes() for name in FILES}
    runner = CliRunner()
    args = ["--home", str(paths.home), "--workspace", str(paths.workspace), "--json", "migrate"]
    first = runner.invoke(cli, args)
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert report["migrated"] == 1  # empty.md only
    assert {Path(s["file"]).name: s["code"] for s in report["skipped"]} == AMBIGUOUS
    for name in AMBIGUOUS:
        assert (paths.project_store / name).read_bytes() == before[name]
        assert f"{name}: {AMBIGUOUS[name]}: left untouched" in first.stderr
    assert (paths.project_store / "empty.md").read_bytes().startswith(b"---\nid: legacy-")
    # Idempotent: nothing more to do, the same files reported, still byte-identical.
    snapshot = tree(paths.project_store)
    again = json.loads(runner.invoke(cli, args).stdout)
    assert again["migrated"] == 0 and len(again["skipped"]) == 3
    assert tree(paths.project_store) == snapshot
    # Still read as legacy facts whose whole text is the body (as Reasonix reads them).
    facts = {f.name: f for f in Memory(paths).list_all()}
    assert facts["unclosed"].body.startswith("---\nname: unclosed")
    assert facts["jsonhead"].body.startswith('{"name": "jsonhead"')


def test_writes_through_memory_do_not_rewrite_ambiguous_files(tmp_path: Path) -> None:
    """Automatic migration on a first write (S5.1) skips them too."""
    paths = _home(tmp_path)
    before = {name: (paths.project_store / name).read_bytes() for name in AMBIGUOUS}
    memory = Memory(paths)
    memory.save(name="another", description="Another", body="y", type="project")
    for name, data in before.items():
        assert (paths.project_store / name).read_bytes() == data
    assert {d.code for d in memory.migration_skipped["project"]} == set(AMBIGUOUS.values())


def _oracle(*args: str) -> dict[str, object]:
    done = subprocess.run([str(ORACLE), *args], capture_output=True, text=True, check=True)
    value: dict[str, object] = json.loads(done.stdout)
    return value


@pytest.mark.skipif(not ORACLE.is_file(), reason="../shared/reasonix-oracle is not present")
def test_reads_match_reasonix(tmp_path: Path) -> None:
    """Ids, names, types and bodies of these files as Reasonix lists them, and as we do."""
    paths = _home(tmp_path / "ours")
    home, workspace = tmp_path / "theirs" / "home", tmp_path / "theirs" / "ws"
    (workspace / ".git").mkdir(parents=True)
    seed = json.dumps({"name": "seed", "description": "Seed", "type": "project", "body": "x"})
    _oracle("remember", "--home", str(home), "--ws", str(workspace), "--args", seed)
    (store,) = (home / "projects").iterdir()
    for name, data in FILES.items():
        (store / "memory" / name).write_bytes(data)
    listed = _oracle("list", "--home", str(home), "--ws", str(workspace))
    facts = listed["facts"]
    assert isinstance(facts, list)
    oracle = {f["name"]: (f["id"], f["type"], f["body"]) for f in facts if f["name"] != "seed"}
    ours = {f.name: (f.id, f.type, f.body) for f in Memory(paths).list_all() if f.name != "seed"}
    assert len(ours) == len(FILES)
    assert ours == oracle


def _recover_home(tmp_path: Path, name_line: str) -> tuple[Memory, Path]:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True, exist_ok=True)
    memory = Memory(EnginePaths.resolve(home=tmp_path / "home", workspace=workspace))
    memory.save(name="victim", description="Victim", body="b", type="project")
    (entry,) = memory.forget("victim").archived
    text = entry.read_text("utf-8").replace("name: victim", name_line)
    entry.write_text(text, "utf-8")
    return memory, entry


@pytest.mark.parametrize(
    "name_line",
    [
        'name: "../../outside"',
        'name: "/etc/passwd"',
        'name: "C:\\\\x"',
        'name: "a/b"',
        'name: "~root"',
        'name: ".."',
        'name: "x\\u0000y"',
    ],
)
def test_recover_refuses_a_hostile_frontmatter_name(tmp_path: Path, name_line: str) -> None:
    memory, entry = _recover_home(tmp_path, name_line)
    before = tree(memory.paths.state)
    with pytest.raises(InvalidName) as err:
        memory.recover(entry)
    assert err.value.code == "invalid_name"
    assert "not a fact name" in err.value.message
    assert tree(memory.paths.state) == before


def test_recover_still_takes_a_plain_name(tmp_path: Path) -> None:
    memory, entry = _recover_home(tmp_path, 'name: "Release Target"')
    changes = memory.recover(entry)
    assert changes.fact is not None and changes.fact.name == "release-target"


@pytest.mark.parametrize("typed", ["/etc/passwd", "C:\\x", "C:/x", "~/notes", "\\\\server\\x"])
def test_tool_errors_say_a_path_is_not_a_name(tmp_path: Path, typed: str) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    base = ["--home", str(tmp_path / "home"), "--workspace", str(workspace), "tool"]
    runner = CliRunner()
    for tool, args in (
        ("memory", {"operation": "read", "name": typed}),
        ("forget", {"name": typed}),
    ):
        done = runner.invoke(
            cli, [*base, tool, "--args", json.dumps(args), "--controller", "headless"]
        )
        result = json.loads(done.stdout)["result"]
        assert "<path>" not in result
        assert result == (
            "Error: name must be a memory name or reference such as project/<name>.md, "
            "not a file path"
        )
