"""The provider-visible text scrubber (S7.4)."""

from __future__ import annotations

from pathlib import Path

from context_engine.paths import EnginePaths
from context_engine.session.privacy import Scrubber


def test_known_directories_become_tokens(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    paths = EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)
    scrub = Scrubber.for_paths(paths)
    text = (
        f"build in {workspace}/dist, cache {paths.home}/cache. Store {paths.project_store}; "
        f"see {workspace}. Backup {workspace}-old. Mine: /home/alice/x, /Users/bob, "
        r"C:\Users\carol\proj."
    )
    out = scrub(text)
    for secret in (str(workspace), str(paths.home), str(paths.project_store), "alice", "bob"):
        assert secret not in out
    assert "carol" not in out
    assert "<workspace>/dist" in out and "<local-home>/cache" in out and "<workspace>-old" in out


def test_a_short_directory_never_eats_into_a_longer_name() -> None:
    scrub = Scrubber([("/srv/a", "<workspace>")])
    assert scrub("/srv/a/x and /srv/abc") == "<workspace>/x and /srv/abc"
    assert Scrubber([])("nothing to do") == "nothing to do"
