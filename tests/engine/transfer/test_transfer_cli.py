"""The ``import``/``export`` command line: light start-up, progress, local only (S12, S15.3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from context_engine.cli.main import cli
from support.bundles import paths_for, populate, workspace

PROBE = """
import sys
from context_engine.cli.main import main
sys.argv = ["context-engine", *{argv!r}]
try:
    main()
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m.startswith("context_engine.transfer") or m in
                ("tarfile", "zipfile"))
sys.stderr.write("\\nLOADED=" + ",".join(loaded) + "\\n")
"""


def loaded_by(argv: list[str]) -> list[str]:
    """Transfer modules (and tar/zip) a whole ``context-engine`` process imported for argv."""
    done = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True,
                          text=True, timeout=60)
    line = [x for x in done.stderr.splitlines() if x.startswith("LOADED=")][-1]
    return [name for name in line[len("LOADED="):].split(",") if name]


@pytest.mark.slow
def test_help_of_import_and_export_loads_none_of_the_transfer_package() -> None:
    assert loaded_by(["--help"]) == []
    assert loaded_by(["import", "--help"]) == []
    assert loaded_by(["export", "--help"]) == []
    assert loaded_by(["import", "bundle", "--help"]) == []


def test_both_commands_are_listed_in_the_top_level_help() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert "import" in result.output and "export" in result.output


def test_import_bundle_shows_progress_with_the_flag(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    populate(paths_for(tmp_path / "home", ws))
    bundle = tmp_path / "b.tar.gz"
    base = ["--home", str(tmp_path / "home"), "--workspace", str(ws)]
    assert CliRunner().invoke(cli, [*base, "export", "--out", str(bundle)]).exit_code == 0
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "new"), "--workspace", str(ws),
                                      "import", "bundle", str(bundle), "--yes", "--progress"])
    assert result.exit_code == 0, result.output
    assert result.stderr.endswith("import bundle: 11/11\n")
    assert "restore 7 files" in result.output


def test_import_needs_local_files_under_remote(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--json", "--remote", "ssh nowhere", "import", "codex",
                                      "--dry-run"])
    assert result.exit_code == 1
    assert json.loads(result.output)["error"]["code"]


def test_dry_run_and_yes_exclude_each_other(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), "import", "gemini",
                                      "--dry-run", "--yes"])
    assert result.exit_code == 2


def test_ctrl_c_during_export_leaves_no_bundle(tmp_path: Path, monkeypatch) -> None:
    from context_engine.transfer import export

    ws = workspace(tmp_path)
    populate(paths_for(tmp_path / "home", ws))
    real, calls = export.read_file, [0]

    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == 4:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(export, "read_file", interrupted)
    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "--workspace", str(ws),
                                      "export", "--out", str(out / "b.tar.gz")])
    assert result.exit_code == 1
    assert "export cancelled; no bundle was written" in result.stderr
    assert list(out.iterdir()) == []


def test_ctrl_c_during_a_restore_leaves_the_stores_unchanged(tmp_path: Path, monkeypatch
                                                            ) -> None:
    from context_engine.facts import placement
    from support.bundles import store_files_of

    ws = workspace(tmp_path)
    populate(paths_for(tmp_path / "home", ws))
    bundle = tmp_path / "b.tar.gz"
    base = ["--home", str(tmp_path / "home"), "--workspace", str(ws)]
    assert CliRunner().invoke(cli, [*base, "export", "--out", str(bundle)]).exit_code == 0
    real, calls = placement._place, [0]

    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == 8:  # in the global store, after the whole project store
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(placement, "_place", interrupted)
    target = tmp_path / "new"
    result = CliRunner().invoke(cli, ["--home", str(target), "--workspace", str(ws), "import",
                                      "bundle", str(bundle), "--yes"])
    assert result.exit_code == 1
    assert "import cancelled; the stores are unchanged" in result.stderr
    assert store_files_of(target) == {}
