"""``context-engine --remote "<command>"``: the CLI on the server's catalog only (issue 8, S12)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from context_engine.cli.main import cli
from support.fixtures import client_home_fixture, served_fixture  # noqa: F401 - pytest fixtures
from support.remote import Served, audit_opens, touched_under

pytestmark = pytest.mark.timeout(60)


def _remote(served: Served, *extra: str) -> str:
    return " ".join(shlex.quote(a) for a in served.command("--no-watch", *extra))


def _invoke(*args: str) -> tuple[int, dict[str, object]]:
    result = CliRunner().invoke(cli, ["--json", *args], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout or "{}")


@pytest.mark.slow
def test_remote_reads_print_what_the_server_home_holds(served: Served, client_home: Path) -> None:
    local = ["--home", str(served.paths.home), "--workspace", str(served.paths.root)]
    expected_list = _invoke(*local, "list")[1]
    expected_read = _invoke(*local, "read", "global/release-target.md")[1]
    expected_archived = _invoke(*local, "archived")[1]
    expected_revisions = _invoke(*local, "revisions", "project/release-target.md")[1]
    remote = _remote(served)
    with audit_opens() as seen:
        assert _invoke("--remote", remote, "list") == (0, expected_list)
        assert _invoke("--remote", remote, "read", "global/release-target.md") == (
            0,
            expected_read,
        )
        assert _invoke("--remote", remote, "archived") == (0, expected_archived)
        assert _invoke("--remote", remote, "revisions", "project/release-target.md") == (
            0,
            expected_revisions,
        )
        code, recalled = _invoke("--remote", remote, "recall", "release", "build")
        code_i, instructions = _invoke("--remote", remote, "instructions")
    assert touched_under(seen, client_home) == []
    assert code == 0 and "release target" in str(recalled["block"])
    assert code_i == 0 and instructions["root"] == str(served.paths.root)
    names = {f["name"] for f in expected_list["facts"]}  # type: ignore[union-attr]
    assert "local-secret" not in names


def test_commands_that_need_local_files_fail_closed(served: Served, client_home: Path) -> None:
    remote = _remote(served)
    with audit_opens() as seen:
        for command in (["prefix"], ["note", "hi"], ["migrate"], ["tool", "memory"]):
            code, payload = _invoke("--remote", remote, *command)
            assert code == 1
            assert payload["error"]["code"] == "unavailable"  # type: ignore[index]
    assert touched_under(seen, client_home) == []
    result = CliRunner().invoke(cli, ["--remote", remote, "--home", "/x", "list"])
    assert result.exit_code == 2


@pytest.mark.slow
def test_remember_is_the_persons_own_action_locally_and_remotely(
    served: Served, client_home: Path
) -> None:
    """The drift: local ``remember`` wrote, ``--remote … remember`` ran the agent policy (and,
    with no TTY to ask, refused). Both are ``apply(Save, Person("cli"))`` now: written, no prompt.
    """
    local = ["--home", str(served.paths.home), "--workspace", str(served.paths.root)]
    remote = ["--remote", _remote(served)]
    for where, how in (("local", local), ("remote", remote)):
        code, payload = _invoke(
            *how, "remember", "--name", f"shell-{where}", "--scope", "global", "--type", "user",
            "--description", "Preferred shell", "--body", "fish",
        )  # fmt: skip
        assert (where, code) == (where, 0), payload
        assert payload["fact"]["reference"] == f"global/shell-{where}.md"  # type: ignore[index]  # reason: JSON object
    names = {f.reference for f in served.local().list_facts().facts}
    assert {"global/shell-local.md", "global/shell-remote.md"} <= names
    code, payload = _invoke(*remote, "forget", "global/shell-remote.md")
    assert code == 0 and len(payload["archived"]) == 1  # type: ignore[arg-type]  # reason: JSON list
    assert list(client_home.rglob("shell-*.md")) == []


@pytest.mark.slow
def test_unavailable_and_disconnected_are_errors(served: Served, client_home: Path) -> None:
    code, payload = _invoke("--remote", _remote(served, "--without", "suggestions"), "suggest")
    assert (code, payload) == (0, {"available": False, "memories": [], "skills": []})
    code, payload = _invoke("--remote", _remote(served, "--without", "writes"), "forget", "x")
    assert code == 1 and payload["error"]["code"] == "unavailable"  # type: ignore[index]
    code, payload = _invoke("--remote", "false", "list")  # exits at once: no server at all
    assert code == 1 and payload["error"]["code"] == "disconnected"  # type: ignore[index]


@pytest.mark.slow
def test_remote_memory_family_is_the_servers(served: Served, client_home: Path) -> None:
    remote = _remote(served)
    runner = CliRunner()
    with audit_opens() as seen:
        summary = runner.invoke(cli, ["--remote", remote, "memory"])
        archived = runner.invoke(cli, ["--remote", remote, "memory", "archived"])
        history = runner.invoke(cli, ["--remote", remote, "memory", "revisions", "release-target"])
    assert touched_under(seen, client_home) == []
    assert summary.exit_code == 0, summary.output
    assert "project/release-target.md" in summary.output and "local-secret" not in summary.output
    assert "AGENTS.md" in summary.output and "Archive: 1 forgotten" in summary.output
    assert "old-note" in archived.output
    assert history.exit_code == 0 and "r1" in history.output


@pytest.mark.slow
def test_remote_suggest_and_accept_use_the_servers_sessions(
    served: Served, client_home: Path, tmp_path: Path
) -> None:
    local = ["--home", str(served.paths.home), "--workspace", str(served.paths.root)]
    expected = _invoke(*local, "suggest")
    assert expected[0] == 0 and expected[1]["memories"], "fixture sessions must yield candidates"
    candidate = expected[1]["memories"][0]["id"]  # type: ignore[index]
    body = tmp_path / "edited-body.txt"  # the person's own file on this machine
    body.write_text("Edited on the client.\n", encoding="utf-8")
    remote = _remote(served)
    with audit_opens() as seen:
        assert _invoke("--remote", remote, "suggest") == expected
        code, payload = _invoke("--remote", remote, "accept", candidate, "--body-file", str(body))
    assert touched_under(seen, client_home) == []
    assert code == 0, payload
    fact = served.local().read(payload["fact"]["id"]).fact  # type: ignore[index]
    assert "Edited on the client." in fact.body
    assert list(client_home.rglob(f"{fact.name}.md")) == []
