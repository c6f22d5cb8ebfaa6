"""``context-engine prefix`` prints the stable prefix exactly as a provider receives it (S12)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from context_engine.cli.main import cli
from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory


def test_prefix_text_and_json(tmp_path: Path) -> None:
    workspace = tmp_path / "proj"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "AGENTS.md").write_text(f"Build into {workspace}/out.\n", "utf-8")
    home = tmp_path / "home"
    engine = ContextEngine.open(workspace=workspace, home=home)
    Memory(engine.paths).save(name="prefers-tabs", description="Indentation", body="Use tabs.",
                              type="feedback", scope="global")
    base = ["--home", str(home), "--workspace", str(workspace)]
    text = CliRunner().invoke(cli, [*base, "prefix"])
    assert text.exit_code == 0, text.output
    expected = engine.stable_prefix()
    assert text.output == expected
    assert "### prefers tabs (global/feedback)" in expected and "# Instructions" in expected
    as_json = CliRunner().invoke(cli, [*base, "--json", "prefix"])
    assert json.loads(as_json.output) == {"prefix": expected}
    for output in (text.output, as_json.output):
        assert str(workspace) not in output and str(home) not in output
