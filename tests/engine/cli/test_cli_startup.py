"""The command line a newcomer meets first (S12): start-up imports, --version, global options
after the command, --json on the memory family, exit codes, and names that slug as S3.7 says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from context_engine import ContextEngine, EnginePaths
from context_engine.cli import registry
from context_engine.cli.main import cli
from context_engine.paths import slugify
from support import RELEASE

ROOT = Path(__file__).resolve().parents[3]
HEAVY = (
    "numpy",
    "mcp",
    "mcp_types",
    "context_engine.recall",
    "context_engine.suggestions",
    "context_engine.tools.mcp_server",
    "context_engine.engine",
)

# Runs the real entry point in a fresh interpreter and reports, at exit, which heavy modules
# the command loaded.
PROBE = """
import atexit, sys
HEAVY = {heavy!r}
def report():
    prefixes = tuple(h + "." for h in HEAVY)
    loaded = sorted(m for m in sys.modules if m in HEAVY or m.startswith(prefixes))
    sys.stderr.write("\\nHEAVY=" + ",".join(loaded) + "\\n")
atexit.register(report)
sys.argv = ["context-engine", *{argv!r}]
from context_engine.cli.main import main
main()
"""


def heavy_modules(argv: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> list[str]:
    """The heavy modules a whole ``context-engine`` process loaded for ``argv``."""
    code = PROBE.format(heavy=HEAVY, argv=argv)
    run_env = {**os.environ, "PYTHONPATH": str(ROOT / "app"), **(env or {})}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=run_env,
                          cwd=tmp_path, timeout=60, check=False)
    marker = [line for line in done.stderr.splitlines() if line.startswith("HEAVY=")]
    assert marker, done.stderr
    assert done.returncode == 0, done.stderr
    return [name for name in marker[-1][len("HEAVY=") :].split(",") if name]


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["list", "--help"],
        ["memory", "--help"],
        ["hook", "--help"],
        ["mcp", "--help"],
    ],
)
def test_help_and_version_import_nothing_heavy(argv: list[str], tmp_path: Path) -> None:
    assert heavy_modules(argv, tmp_path) == []


@pytest.mark.slow
def test_commands_that_do_not_recall_stay_light(tmp_path: Path) -> None:
    home = tmp_path / "home"
    base = ["--home", str(home), "--workspace", str(tmp_path)]
    assert heavy_modules([*base, "remember", "--name", "n", "--body", "b"], tmp_path) == []
    assert heavy_modules([*base, "list", "--json"], tmp_path) == []
    assert heavy_modules([*base, "read", "n"], tmp_path) == []
    assert heavy_modules([*base, "memory", "summary"], tmp_path) == []


def test_tab_completion_of_command_names_is_light(tmp_path: Path) -> None:
    env = {
        "_CONTEXT_ENGINE_COMPLETE": "bash_complete",
        "COMP_WORDS": "context-engine li",
        "COMP_CWORD": "1",
    }
    assert heavy_modules([], tmp_path, env) == []


def test_version_is_the_installed_distribution() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"context-engine, version {version('context-center')}"


def test_help_lists_every_command_with_its_own_short_help() -> None:
    group = cli
    ctx = group.make_context("context-engine", ["--help"], resilient_parsing=True)
    for name in registry.TOP_LEVEL:
        command = group.get_command(ctx, name)
        assert command is not None, name
        assert registry.SHORT_HELP[name] == command.get_short_help_str(limit=200), name
    memory_group = group.get_command(ctx, "memory")
    assert memory_group is not None
    assert isinstance(memory_group, click.Group)
    for name in registry.MEMORY:
        sub = memory_group.get_command(ctx, name)
        assert sub is not None, name
        assert registry.MEMORY_SHORT_HELP[name] == sub.get_short_help_str(limit=200), name


class Cli:
    """``context-engine`` in process on a temporary home and workspace."""

    def __init__(self, tmp: Path) -> None:
        self.home, self.ws = tmp / "home", tmp / "ws"
        self.ws.mkdir()
        (self.ws / ".git").mkdir()
        self.runner = CliRunner()

    def run(self, *args: str, code: int = 0, stdin: str | None = None) -> Any:
        """Global options first, ``--json``; the parsed object."""
        base = ["--home", str(self.home), "--workspace", str(self.ws), "--json"]
        return self.after(*base, *args, code=code, stdin=stdin)

    def after(self, *args: str, code: int = 0, stdin: str | None = None) -> Any:
        """Exactly ``args``; the parsed JSON object."""
        result = self.runner.invoke(cli, list(args), input=stdin)
        assert result.exit_code == code, (result.output, result.exception)
        return json.loads(result.stdout)


@pytest.fixture()
def c(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_global_options_after_the_command(c: Cli) -> None:
    c.run("remember", "--name", "x", "--description", "d", "--body", "b")
    where = ["--home", str(c.home), "--workspace", str(c.ws)]
    listed = c.after("list", "--json", *where)
    assert [f["name"] for f in listed["facts"]] == ["x"]
    assert c.after("read", "x", *where, "--json")["body"] == "b"
    assert c.after(*where, "read", "x", "--json")["body"] == "b"


def test_the_same_global_option_twice_with_different_values_is_bad_usage(c: Cli) -> None:
    result = c.runner.invoke(cli, ["--home", str(c.home), "list", "--home", str(c.ws)])
    assert result.exit_code == 2


def test_every_memory_command_honours_json(c: Cli) -> None:
    fact = c.run("remember", "--name", "x", "--description", "d", "--body", "v1")["fact"]
    c.run("remember", "--id", fact["id"], "--body", "v2")
    summary = c.run("memory")
    assert set(summary) == {"instructions", "facts", "diagnostics", "archived", "stores"}
    assert [f["name"] for f in summary["facts"]] == ["x"] and summary["archived"] == 0
    assert c.run("memory", "summary") == summary
    assert c.run("memory", "revisions", "x") == c.run("revisions", "x")
    assert c.run("memory", "restore", "x", "1")["fact"]["revision"] == 3
    (archived_path,) = c.run("forget", "x")["archived"]
    assert c.run("memory", "archived") == c.run("archived")
    assert c.run("memory", "recover", archived_path)["fact"]["id"] == fact["id"]
    assert c.run("memory", "instructions")["documents"] == []
    assert c.run("memory", "recall") == {"trace": None}


def test_missing_refs_fail_the_same_way_for_read_and_forget(c: Cli) -> None:
    assert c.run("read", "nothing", code=1)["error"]["code"] == "not_found"
    assert c.run("forget", "nothing", code=1)["error"]["code"] == "not_found"


def test_tool_args_dash_reads_stdin(c: Cli) -> None:
    args = RELEASE
    payload = c.run(
        "tool", "remember", "--controller", "headless", "--args", "-", stdin=json.dumps(args)
    )
    assert payload["written"] is True
    assert c.run("read", "release-target")["body"] == args["body"]


# S3.7: every run of characters that are not letters or digits is one "-", so a slug is a
# fixed point. The old pattern ``[^\w]+|_+`` made "0_-0" into "0--0".
@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("0_-0", "0-0"),
        ("build _notes", "build-notes"),
        ("a_-_b", "a-b"),
        ("__x__", "x"),
        ("İx", "ix"),
        ("ΣΑΣ", "σασ"),
        ("e\u0301x", "e-x"),
        ("a²b", "a²b"),
    ],
)
def test_slug_runs_collapse_and_slugs_are_fixed_points(name: str, slug: str) -> None:
    assert slugify(name) == slug
    assert slugify(slug) == slug


def test_a_name_with_underscores_is_found_by_the_name_it_was_saved_with(c: Cli) -> None:
    saved = c.run(
        "remember", "--name", "build _notes", "--description", "Build notes", "--body", "make all"
    )["fact"]
    assert saved["name"] == "build-notes"
    assert c.run("read", "build _notes")["fact"]["id"] == saved["id"]

    class Approve:
        def confirm(self, request: object) -> bool:
            return True

    engine = ContextEngine(EnginePaths.resolve(home=c.home, workspace=c.ws))
    outcome = engine.run_tool(
        "forget", {"name": "build _notes"}, controller="interactive", confirmation=Approve()
    )
    assert outcome.written, outcome.result
    assert c.run("list")["facts"] == []
