"""Plain read commands answer without click and print what the full command line prints (#14)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from context_engine.cli.fast import plain_command
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from support import APP_DIR
from support.store import git_paths

RUN = "from {module} import main; main()"


@pytest.mark.parametrize(
    ("argv", "command", "words", "as_json"),
    [
        (["list"], "list", [], False),
        (["--json", "list"], "list", [], True),
        (["list", "--json"], "list", [], True),
        (["--home", "/h", "--workspace=/w", "read", "x.md"], "read", ["x.md"], False),
        (["recall", "why", "does", "it", "fail"], "recall", ["why", "does", "it", "fail"], False),
        (["recall", "why", "--json", "now"], "recall", ["why", "now"], True),
        (["--json", "memory"], "memory", [], True),
        (["remember", "--name", "n", "--body=b b", "--json"], "remember", [], True),
        (["remember", "--id", "mem-1", "--type", "user", "--expected-revision", "3"], "remember",
         [], False),
    ],
)
def test_plain_read_command_lines_are_recognised(
    argv: list[str], command: str, words: list[str], as_json: bool
) -> None:
    plain = plain_command(argv)
    assert plain is not None
    assert (plain.command, plain.args, plain.as_json) == (command, words, as_json)


@pytest.mark.parametrize(
    "argv",
    [
        [], ["list", "--type", "user"], ["list", "--help"], ["read"], ["read", "a", "b"],
        ["read", "-x"], ["recall"], ["recall", "--limit", "3", "x"], ["remember", "--name", "x"],
        ["--home", "/a", "--home", "/b", "list"], ["--home"], ["--home", "--json", "list"],
        ["--remote", "ssh x", "list"], ["list", "--home", "/h"], ["memory", "recall"],
        ["--version"], ["search", "x"], ["--home=", "list"],
        ["remember", "--body", "b"], ["remember", "--name", "n"], ["remember", "--id", "x", "y"],
        ["remember", "--name", "n", "--body", "-b"], ["remember", "--name", "n", "--body", ""],
        ["remember", "--id", "x", "--type", "User"], ["remember", "--id", "x", "--scope", "all"],
        ["remember", "--id", "x", "--expected-revision", "+1"], ["remember", "--id", "x", "--id=y"],
        ["remember", "--name", "n", "--body-file", "f"], ["remember", "--name", "n", "--body"],
    ],
)
def test_every_other_command_line_goes_to_click(argv: list[str]) -> None:
    assert plain_command(argv) is None


def test_a_path_option_naming_a_file_goes_to_click(tmp_path: Path) -> None:
    file = tmp_path / "f"
    file.write_text("x")
    assert plain_command(["--home", str(file), "list"]) is None  # click refuses it
    assert plain_command(["--home", str(tmp_path), "list"]) is not None


@pytest.fixture()
def home(tmp_path: Path) -> EnginePaths:
    paths = git_paths(tmp_path)
    memory = Memory(paths)
    memory.save(name="release-target", title="Release target", description="Where releases go",
                body="Release artifacts are published from main-v2.", type="project")
    memory.save(name="docker-cache", description="Docker cache after the migration",
                body="The docker release build times out when the cache is cold.", type="feedback")
    memory.save(name="colour-codes", description="a body with escape codes",
                body="Red \x1b[31malert\x1b[0m text, 発布 and emoji 🚀.", type="reference")
    memory.save(name="team-style", description="Global style", body="Prefer small commits.",
                type="user", scope="global")
    (paths.project_store / "broken.md").write_text("---\nnot: [closed\n")  # a diagnostic
    return paths


def _run(module: str, argv: list[str], home: EnginePaths) -> subprocess.CompletedProcess[str]:
    """One whole process: the console script's entry, or the click command line itself."""
    env = {**os.environ, "PYTHONPATH": str(APP_DIR), "PYTHONIOENCODING": "utf-8"}
    code = RUN.format(module=module)
    extra = ["-X", "importtime"] if module == "context_engine.cli.entry" else []
    globals_ = ["--home", str(home.home), "--workspace", str(home.workspace)]
    return subprocess.run(
        [sys.executable, *extra, "-c", code, *globals_, *argv], capture_output=True, text=True,
        env=env, cwd=home.workspace, timeout=120,
    )


def _stable(text: str) -> str:
    """Output with the recall trace's clock readings blanked (two runs, two instants)."""
    text = re.sub(r'("at": "|at: )[0-9T:.+-]+', r"\1AT", text)
    return re.sub(r"\d+(\.\d+)? ms", "N ms", text)


@pytest.mark.slow  # two whole processes per command line
def test_plain_read_commands_print_what_the_full_command_line_prints(home: EnginePaths) -> None:
    some = Memory(home).snapshot().facts[0]
    lines = [
        ["list"], ["list", "--json"], ["--json", "list"], ["memory"], ["memory", "--json"],
        ["read", "project/release-target.md"], ["read", some.id], ["read", "docker-cache"],
        ["--json", "read", "global/team-style.md"], ["read", "project/colour-codes.md"],
        ["read", "project/nope.md"], ["--json", "read", "nope"],
        ["recall", "why", "does", "the", "docker", "release", "build", "time", "out"],
        ["--json", "recall", "release", "target"],
    ]
    for argv in lines:
        fast = _run("context_engine.cli.entry", argv, home)
        imported = {
            line.rsplit("|", 1)[-1].strip()
            for line in fast.stderr.splitlines()
            if line.startswith("import time:")
        }
        fast_err = "".join(
            line for line in fast.stderr.splitlines(keepends=True)
            if not line.startswith("import time:")
        )
        full = _run("context_engine.cli.main", argv, home)
        assert (fast.returncode, _stable(fast.stdout), fast_err) == (
            full.returncode, _stable(full.stdout), full.stderr
        ), argv
        if argv != ["read", "project/colour-codes.md"]:  # escape codes: click strips them
            assert "click" not in imported, argv
            assert "context_engine.cli.facts_cmds" not in imported, argv
    assert "\x1b" not in _run("context_engine.cli.entry", lines[9], home).stdout


def _unrandom(text: str, paths: EnginePaths) -> str:
    """Output with ids, write times and home paths blanked (two homes, two ids, two instants)."""
    text = text.replace(str(paths.project_dir), "PROJECT").replace(str(paths.state), "STATE")
    text = re.sub(r"\d{8}-\d{6}\.\d{3}-", "STAMP-", text)  # an archived copy's name
    text = re.sub(r"mem-[0-9a-f]{32}", "mem-ID", text)
    return re.sub(r'"(created_at|updated_at)": "[^"]*"', r'"\1": "T"', text)


@pytest.mark.slow  # two whole processes per command line
def test_plain_remember_writes_and_prints_what_the_full_command_line_does(
    tmp_path: Path,
) -> None:
    homes = [git_paths(tmp_path / side) for side in ("fast", "full")]
    for paths in homes:
        Memory(paths).save(name="release-target", description="Where releases go",
                           body="Release artifacts are published from main-v2.", type="project")
    lines = [
        ["remember", "--name", "kernel-retry", "--body", "Kernel socket retries use jitter."],
        ["--json", "remember", "--name=global/style", "--title", "Style", "--body", "Small.",
         "--type", "user", "--scope", "global"],
        ["remember", "--id", "{id}", "--body", "Published from main-v3 now.", "--json"],
        ["remember", "--id", "{id}", "--description", "moved", "--expected-revision", "1"],
        ["remember", "--id", "mem-nobody", "--body", "x"],
        ["--json", "remember", "--name", "release-target", "--body", "again", "--scope", "global"],
    ]
    for argv in lines:
        results = []
        for paths, module in zip(homes, ("context_engine.cli.entry", "context_engine.cli.main"),
                                 strict=True):
            fact_id = next(f.id for f in Memory(paths).snapshot().facts
                           if f.name == "release-target")
            done = _run(module, [a.replace("{id}", fact_id) for a in argv], paths)
            imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                        if line.startswith("import time:")}
            err = "".join(line for line in done.stderr.splitlines(keepends=True)
                          if not line.startswith("import time:"))
            results.append((done.returncode, _unrandom(done.stdout, paths), _unrandom(err, paths)))
            if module == "context_engine.cli.entry":
                assert "click" not in imported, argv
                # A person's save never consults the S10 policy: its rules do not load.
                assert "context_engine.policy.write_policy" not in imported, argv
                assert "context_engine.catalog.policy_writes" not in imported, argv
                # Temp names and ids from os.urandom, digests from CPython's own modules.
                assert not imported & {"_hashlib", "secrets"}, argv
        assert results[0] == results[1], argv
    snapshots = [[(f.name, f.scope, f.type, f.title, f.description, f.body, f.revision)
                  for f in Memory(paths).snapshot().facts] for paths in homes]
    assert snapshots[0] == snapshots[1]


def test_memory_on_a_terminal_goes_to_clicks_pager(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert plain_command(["memory"]) is None
    assert plain_command(["memory", "--json"]) is not None  # JSON is never paged
