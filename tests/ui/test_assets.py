"""The one resource locator finds resources/ in the source tree and in a PyInstaller bundle."""

from __future__ import annotations

import sys
from pathlib import Path

from context_center import assets

ROOT = Path(__file__).resolve().parents[2]


def test_source_tree_resources(qtbot):
    assets.resources_dir.cache_clear()
    assert assets.resources_dir() == ROOT / "resources"
    assert not assets.icon("context-center").isNull()
    assert assets.icon("no-such-icon").isNull()


def test_pyinstaller_bundle_wins(monkeypatch, tmp_path: Path):
    (tmp_path / "resources" / "icons").mkdir(parents=True)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assets.resources_dir.cache_clear()
    try:
        assert assets.resources_dir() == tmp_path / "resources"
    finally:
        assets.resources_dir.cache_clear()
