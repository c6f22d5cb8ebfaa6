"""The benches' page-cache probe (``bench/residency.py``) reports what the kernel holds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from residency import resident_share

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mincore: Linux")


def test_a_file_just_written_and_read_is_reported_cached(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    path.write_bytes(b"x" * 65536)
    path.read_bytes()
    share = resident_share(path)
    assert share is not None and share > 0.5


def test_a_missing_file_is_unknown_and_an_empty_one_wholly_cached(tmp_path: Path) -> None:
    assert resident_share(tmp_path / "absent") is None
    (tmp_path / "empty").write_bytes(b"")
    assert resident_share(tmp_path / "empty") == 1.0

