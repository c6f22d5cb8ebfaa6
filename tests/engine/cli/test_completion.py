"""Structured completion: ids then names without duplicates, archive paths; local, remote and
bash through click's completion protocol (S12 ``complete``, issue 8)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from context_engine.catalog.completion import complete_archives, complete_refs
from context_engine.cli.main import cli
from context_engine.facts.model import Fact
from support.remote import Served, make_served

pytestmark = pytest.mark.timeout(60)


def _fact(id_: str, name: str, scope: str) -> Fact:
    return Fact(id_, 1, name, "", "d", "project", scope, "b")  # type: ignore[arg-type]


def test_ids_come_first_then_each_name_once() -> None:
    facts = [
        _fact("mem-b", "release", "project"),
        _fact("mem-a", "release", "global"),
        _fact("mem-c", "editor", "global"),
    ]
    assert complete_refs(facts) == ("mem-b", "mem-a", "mem-c", "editor", "release")
    assert complete_refs(facts, "rel") == ("release",)
    assert complete_refs(facts, "mem-c") == ("mem-c",)
    assert complete_refs(facts, "zzz") == ()


def test_a_name_that_looks_like_an_id_is_not_repeated() -> None:
    facts = [_fact("same", "same", "project"), _fact("mem-x", "same", "global")]
    assert complete_refs(facts) == ("same", "mem-x")


def test_archive_paths_keep_their_order_and_filter_by_prefix() -> None:
    from datetime import UTC, datetime

    from context_engine.facts.archive import ArchivedEntry

    now = datetime.now(UTC)
    entries = [
        ArchivedEntry(Path("/s/p/.archive/20260102-x.md"), now, None),
        ArchivedEntry(Path("/s/g/.archive/20260101-y.md"), now, None),
    ]
    assert complete_archives(entries) == (
        "/s/p/.archive/20260102-x.md",
        "/s/g/.archive/20260101-y.md",
    )
    assert complete_archives(entries, "/s/g") == ("/s/g/.archive/20260101-y.md",)


@pytest.fixture
def served(tmp_path: Path) -> Served:
    return make_served(tmp_path / "server")


def _run(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["--json", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.output)
    return data


def _local_args(served: Served) -> list[str]:
    return ["--home", str(served.paths.home), "--workspace", str(served.paths.root)]


@pytest.mark.slow
def test_complete_command_local_and_remote_agree(served: Served) -> None:
    facts = served.local().list_facts().facts
    ids = [f.id for f in facts]
    names = sorted({f.name for f in facts})
    local_refs = _run(*_local_args(served), "complete", "refs")["items"]
    assert local_refs == [*ids, *names]
    assert len(local_refs) == len(set(local_refs))  # type: ignore[arg-type]
    archives = _run(*_local_args(served), "complete", "archives")["items"]
    assert archives == [str(e.path) for e in served.local().archived()] and archives
    prefix = _run(*_local_args(served), "complete", "refs", "--prefix", "rel")["items"]
    assert prefix == ["release-target"]

    remote = " ".join(_quote(a) for a in served.command("--no-watch"))
    assert _run("--remote", remote, "complete", "refs")["items"] == local_refs
    assert _run("--remote", remote, "complete", "archives")["items"] == archives
    assert _run("--remote", remote, "complete", "refs", "--prefix", "rel")["items"] == prefix


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


_SCRIPTS: dict[str, str] = {}


def _script(shell: str) -> str:
    """The completion script click generates for ``shell`` (once per test run)."""
    if shell not in _SCRIPTS:
        exe = Path(sys.executable).with_name("context-engine")
        assert exe.exists(), "the console script is installed in the venv"
        _SCRIPTS[shell] = subprocess.run(
            [str(exe)],
            env={**os.environ, "_CONTEXT_ENGINE_COMPLETE": f"{shell}_source"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return _SCRIPTS[shell]


def _bash_complete(words: list[str], env: dict[str, str]) -> list[str]:
    exe = Path(sys.executable).with_name("context-engine")
    script = _script("bash")
    assert "_context_engine_completion" in script
    array = " ".join(_quote(w) for w in words)
    program = (
        f"{script}\n"
        f"COMP_WORDS=({array})\n"
        f"COMP_CWORD={len(words) - 1}\n"
        "_context_engine_completion context-engine\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", program],
                         env={**env, "PATH": f"{exe.parent}{os.pathsep}{env.get('PATH', '')}"},
                         capture_output=True, text=True, check=True, timeout=30)
    return [line for line in out.stdout.splitlines() if line]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
def test_bash_completes_restore_and_recover(served: Served) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("_CONTEXT_ENGINE")}
    facts = served.local().list_facts().facts
    base = ["context-engine", *_local_args(served)]
    refs = _bash_complete([*base, "restore", ""], env)
    assert refs == [*(f.id for f in facts), *sorted({f.name for f in facts})]
    assert _bash_complete([*base, "memory", "revisions", "edi"], env) == ["editor"]
    archives = _bash_complete([*base, "recover", ""], env)
    assert archives == [str(e.path) for e in served.local().archived()]


@pytest.mark.slow
def test_zsh_and_fish_scripts_are_generated() -> None:
    for shell in ("zsh", "fish"):
        out = _script(shell)
        assert f"{shell}_complete" in out and "context-engine" in out


@pytest.mark.slow
def test_shell_completion_under_remote_asks_the_server(served: Served) -> None:
    from click.shell_completion import ShellComplete

    remote = " ".join(_quote(a) for a in served.command("--no-watch"))
    completer = ShellComplete(cli, {}, "context-engine", "_CONTEXT_ENGINE_COMPLETE")
    facts = served.local().list_facts().facts
    got = [c.value for c in completer.get_completions(["--remote", remote, "forget"], "")]
    assert got == [*(f.id for f in facts), *sorted({f.name for f in facts})]
    got = [c.value for c in completer.get_completions(["--remote", remote, "recover"], "")]
    assert got == [str(e.path) for e in served.local().archived()]


@pytest.mark.slow
def test_zsh_and_fish_completion_protocols_answer(served: Served) -> None:
    exe = Path(sys.executable).with_name("context-engine")
    words = ["context-engine", *_local_args(served), "restore", "edi"]
    for shell in ("zsh", "fish"):
        env = {**os.environ, "_CONTEXT_ENGINE_COMPLETE": f"{shell}_complete"}
        # zsh passes the index of the word being completed; fish passes the word itself.
        cword = str(len(words) - 1) if shell == "zsh" else words[-1]
        env.update({"COMP_WORDS": " ".join(_quote(w) for w in words), "COMP_CWORD": cword})
        out = subprocess.run(
            [str(exe)], env=env, capture_output=True, text=True, check=True, timeout=30
        ).stdout
        assert "editor" in out and "release-target" not in out
