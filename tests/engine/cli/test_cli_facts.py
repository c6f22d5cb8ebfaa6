"""The fact commands of ``context-engine`` (S12): JSON shapes, exit codes, round trips."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from context_engine.cli.main import cli

FACT_KEYS = {
    "id",
    "revision",
    "name",
    "title",
    "description",
    "type",
    "scope",
    "reference",
    "created_at",
    "updated_at",
    "freshness",
}


class Cli:
    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.ws = tmp / "ws"
        self.ws.mkdir()
        self.runner = CliRunner()

    def run(self, *args: str, code: int = 0, stdin: str | None = None) -> Any:
        base = ["--home", str(self.home), "--workspace", str(self.ws), "--json"]
        result = self.runner.invoke(cli, [*base, *args], input=stdin)
        assert result.exit_code == code, (result.output, result.exception)
        return json.loads(result.stdout) if code != 2 else result

    def text(self, *args: str, code: int = 0) -> str:
        base = ["--home", str(self.home), "--workspace", str(self.ws)]
        result = self.runner.invoke(cli, [*base, *args])
        assert result.exit_code == code, (result.output, result.exception)
        return result.output


@pytest.fixture()
def c(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def remember(c: Cli, *extra: str, code: int = 0, stdin: str | None = None) -> Any:
    return c.run("remember", "--description", "d", *extra, code=code, stdin=stdin)


def test_remember_read_list_shapes(c: Cli) -> None:
    out = remember(c, "--name", "Release Target", "--title", "T", "--body", "main-v2")
    assert set(out) == {"fact", "archived"} and out["archived"] == []
    fact = out["fact"]
    assert set(fact) == FACT_KEYS
    assert (fact["name"], fact["revision"], fact["reference"]) == (
        "release-target",
        1,
        "project/release-target.md",
    )
    assert fact["freshness"] == "fresh" and fact["created_at"].endswith("Z")
    read = c.run("read", "project/release-target.md")
    assert read == {"fact": fact, "body": "main-v2"}
    assert c.run("list") == {"facts": [fact]}
    assert c.run("list", "--scope", "global") == {"facts": []}
    assert c.run("list", "--type", "project")["facts"] == [fact]


def test_body_file_and_stdin(c: Cli, tmp_path: Path) -> None:
    body_file = tmp_path / "body.md"
    body_file.write_text("from a file\n")
    remember(c, "--name", "f", "--body-file", str(body_file))
    assert c.run("read", "f")["body"] == "from a file"
    remember(c, "--name", "s", "--body-file", "-", stdin="from stdin\n")
    assert c.run("read", "s")["body"] == "from stdin"


def test_update_conflict_and_errors(c: Cli) -> None:
    fact = remember(c, "--name", "x", "--body", "v1")["fact"]
    v2 = remember(c, "--id", fact["id"], "--body", "v2", "--expected-revision", "1")["fact"]
    assert v2["revision"] == 2 and v2["id"] == fact["id"]
    err = remember(c, "--id", fact["id"], "--body", "v3", "--expected-revision", "1", code=1)
    assert err == {
        "error": {
            "code": "revision_conflict",
            "message": "memory revision conflict: expected 1, found 2",
        }
    }
    missing = c.run("read", "mem-" + "0" * 32, code=1)
    assert missing["error"]["message"] == f'memory id "mem-{"0" * 32}" not found'
    usage = c.run("remember", "--name", "y", code=2)
    assert "--body" in usage.output
    bad_type = c.run("remember", "--name", "y", "--body", "b", "--type", "nope", code=2)
    assert "nope" in bad_type.output


def test_revisions_restore_forget_archived_recover(c: Cli) -> None:
    fact = remember(c, "--name", "x", "--body", "v1")["fact"]
    remember(c, "--id", fact["id"], "--body", "v2", "--description", "second")
    revs = c.run("revisions", "x")
    assert revs["fact"]["revision"] == 2
    assert [r["revision"] for r in revs["revisions"]] == [1]
    assert set(revs["revisions"][0]) == {"revision", "updated_at", "scope", "type", "description"}
    restored = c.run("restore", "x", "1")
    assert restored["fact"]["revision"] == 3 and restored["archived"] == []
    assert c.run("read", "x")["body"] == "v1"
    assert [r["revision"] for r in c.run("revisions", "x")["revisions"]] == [2, 1]
    forgot = c.run("forget", "x")
    (path,) = forgot["archived"]
    # Forgetting what is not there fails like reading it (exit 1, not_found; README, S12).
    assert c.run("forget", "x", code=1) == {
        "error": {"code": "not_found", "message": "nothing to forget: x"}
    }
    archived = c.run("archived")["archived"]
    assert [a["path"] for a in archived] == [path]
    assert set(archived[0]) == {"path", "archived_at", "fact"}
    assert archived[0]["fact"]["id"] == fact["id"]
    recovered = c.run("recover", path)
    assert (recovered["fact"]["id"], recovered["fact"]["revision"]) == (fact["id"], 4)
    err = c.run("recover", path, code=1)
    assert err["error"] == {"code": "archive_not_found", "message": "archived memory not found"}


def test_remember_reports_archived_other_copy(c: Cli) -> None:
    remember(c, "--name", "dup", "--scope", "global", "--body", "g")
    out = remember(c, "--name", "dup", "--scope", "project", "--body", "p")
    assert len(out["archived"]) == 1 and "/memory/global/.archive/" in out["archived"][0]


def test_migrate(c: Cli) -> None:
    store = c.home / "projects" / ("-" + str(c.ws).strip("/").replace("/", "-")) / "memory"
    store.mkdir(parents=True)
    (store / "old.md").write_text("---\nname: old\ndescription: legacy\n---\nbody\n")
    assert c.run("list")["facts"][0]["id"].startswith("legacy-")
    config = c.home / "config.toml"
    config.write_text('[agent]\nmodel = "x"\nmemory_compiler = true\n\n[ui]\ntheme = "dark"\n')
    first = c.runner.invoke(cli, ["--home", str(c.home), "--workspace", str(c.ws), "migrate"])
    assert first.exit_code == 0 and "migrated 1 file(s)" in first.stdout
    assert "memory_compiler" in first.stderr  # the one-time S5.4 notice
    assert config.read_text() == '[agent]\nmodel = "x"\n\n[ui]\ntheme = "dark"\n'
    assert c.run("migrate") == {"migrated": 0}


def test_memory_text_family(c: Cli) -> None:
    fact = remember(c, "--name", "x", "--body", "v1")["fact"]
    remember(c, "--id", fact["id"], "--body", "v2")
    summary = c.text("memory")
    assert fact["id"] in summary and "r2" in summary and "Stores:" in summary
    assert "r1" in c.text("memory", "revisions", "x")
    assert "restored" in c.text("memory", "restore", "x", "1")
    c.run("forget", "x")
    assert "Archive: 1 forgotten" in c.text("memory")
    listing = c.text("memory", "archived")
    path = listing.split()[1]
    assert "recovered project/x.md" in c.text("memory", "recover", path)
    assert "archived memory not found" in c.text("memory", "recover", path, code=1)


@pytest.mark.slow
def test_installed_console_script(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "context-engine"
    if not exe.exists():
        pytest.skip("context-engine is not installed in this environment")
    ws = tmp_path / "ws"
    ws.mkdir()
    base = [str(exe), "--home", str(tmp_path / "home"), "--workspace", str(ws), "--json"]
    made = subprocess.run(
        [*base, "remember", "--name", "sub", "--description", "d", "--body-file", "-"],
        input="piped body",
        capture_output=True,
        text=True,
        check=True,
    )
    fact = json.loads(made.stdout)["fact"]
    read = subprocess.run([*base, "read", fact["id"]], capture_output=True, text=True, check=True)
    assert json.loads(read.stdout)["body"] == "piped body"
    bad = subprocess.run([*base, "read", "missing"], capture_output=True, text=True)
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["error"]["code"] == "not_found"


def test_restore_and_recover_warn_on_stderr_when_memory_md_is_not_rewritten(
    c: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import context_engine.facts.recovery as recovery
    import context_engine.facts.saving as saving

    fact = remember(c, "--name", "x", "--body", "v1")["fact"]
    remember(c, "--id", fact["id"], "--body", "v2")
    (path,) = c.run("forget", "x")["archived"]
    remember(c, "--name", "y", "--body", "w1")
    remember(c, "--name", "y", "--body", "w2")

    def failing(*args: object) -> tuple[str, ...]:
        return ("MEMORY.md was not updated: disk full",)

    monkeypatch.setattr(saving, "refresh_indexes", failing)
    monkeypatch.setattr(recovery, "refresh_indexes", failing)
    base = ["--home", str(c.home), "--workspace", str(c.ws)]
    for args, text in (
        (["restore", "y", "1"], "restored project/y.md"),
        (["recover", path], "recovered project/x.md"),
    ):
        result = c.runner.invoke(cli, [*base, *args])
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(text)
        assert result.stderr == "warning: MEMORY.md was not updated: disk full\n"
