"""One ref resolver (``facts/refs.py``): every surface resolves a ref the same way.

The drifts it removes: ``read project/x`` (no ``.md``) worked in the CLI but the agent's
``memory`` tool answered not found; a fact whose file name differs from its frontmatter name
(``bom-crlf.md`` holding ``name: bomcrlf``) was listed as ``project/bomcrlf.md`` yet ``read``
by that reference or name failed. Reasonix resolves by the name; the oracle is the judge.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.ops import Person, Save
from context_engine.cli.main import cli
from context_engine.engine import ContextEngine
from context_engine.paths import EnginePaths
from support import ROOT

ORACLE = ROOT.parent / "shared" / "reasonix-oracle" / "rxharness"
REFS = ("bomcrlf", "project/bomcrlf.md", "project/bomcrlf", "bom-crlf", "project/bom-crlf.md")


@pytest.fixture
def paths(tmp_path: Path) -> EnginePaths:
    """A workspace with ``x`` and a hand-renamed ``bom-crlf.md`` that holds ``name: bomcrlf``."""
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    catalog = LocalCatalog(paths)
    for name in ("x", "bomcrlf"):
        save = Save(name=name, description=f"the {name} fact", body=f"Body of {name}.")
        catalog.apply(save, Person("cli"))
    (paths.project_store / "bomcrlf.md").rename(paths.project_store / "bom-crlf.md")
    return paths


def _cli_read(paths: EnginePaths, ref: str) -> str | None:
    """The reference ``context-engine read REF`` prints, or None when it finds nothing."""
    where = ["--home", str(paths.home), "--workspace", str(paths.workspace)]
    result = CliRunner().invoke(cli, [*where, "--json", "read", ref])
    if result.exit_code != 0:
        return None
    return str(json.loads(result.stdout)["fact"]["reference"])


def _tool_read(paths: EnginePaths, ref: str) -> str | None:
    """The reference the agent's ``memory`` tool reads for REF, or None when not found."""
    outcome = ContextEngine(paths).run_tool(
        "memory", {"operation": "read", "name": ref}, controller="headless"
    )
    return outcome.result.split(" — ")[0] if outcome.ran else None


@pytest.mark.parametrize("ref", ["project/x", "project/x.md", "x", "x.md"])
def test_every_spelling_of_a_reference_resolves_in_the_cli_and_the_memory_tool(
    paths: EnginePaths, ref: str
) -> None:
    assert _cli_read(paths, ref) == "project/x.md"
    assert _tool_read(paths, ref) == "project/x.md"


def test_a_listed_reference_always_resolves(paths: EnginePaths) -> None:
    listed = {f.reference for f in LocalCatalog(paths).list_facts().facts}
    assert listed == {"project/x.md", "project/bomcrlf.md"}
    for reference in listed:
        assert _cli_read(paths, reference) == reference
        assert _tool_read(paths, reference) == reference


def test_the_file_name_differing_from_the_name_resolves_by_the_name_everywhere(
    paths: EnginePaths,
) -> None:
    found = {ref: (_cli_read(paths, ref), _tool_read(paths, ref)) for ref in REFS}
    named = ("project/bomcrlf.md", "project/bomcrlf.md")
    assert found == {
        "bomcrlf": named,
        "project/bomcrlf.md": named,
        "project/bomcrlf": named,
        "bom-crlf": (None, None),  # the file stem is not a name (Reasonix agrees)
        "project/bom-crlf.md": (None, None),
    }


@pytest.mark.skipif(not ORACLE.exists(), reason="../shared/reasonix-oracle is not here")
def test_refs_resolve_as_reasonix_resolves_them(paths: EnginePaths) -> None:
    """Differential: for each ref, Reasonix finds a fact exactly when we do, the same one."""
    for ref in (*REFS, "project/x", "x"):
        run = subprocess.run(
            [str(ORACLE), "read", "--home", str(paths.home), "--ws", str(paths.workspace),
             "--ref", ref],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        answer = json.loads(run.stdout)
        theirs = answer["fact"]["name"] if answer.get("fact") else None
        ours = _cli_read(paths, ref)
        assert (ref, ours) == (ref, f"project/{theirs}.md" if theirs else None)


def test_forget_archives_what_read_names(paths: EnginePaths) -> None:
    where = ["--home", str(paths.home), "--workspace", str(paths.workspace)]
    result = CliRunner().invoke(cli, [*where, "--json", "forget", "project/bomcrlf"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["archived"]) == 1
    assert {f.reference for f in LocalCatalog(paths).list_facts().facts} == {"project/x.md"}
