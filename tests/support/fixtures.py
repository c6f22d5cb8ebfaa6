"""Shared pytest fixtures; a test module imports the ones it uses (``# noqa: F401``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.remote import Served, make_client_home, make_served


@pytest.fixture(name="served")
def served_fixture(tmp_path: Path) -> Served:
    """A served workspace (``make_served``) under the test's temporary directory."""
    return make_served(tmp_path / "server")


@pytest.fixture(name="client_home")
def client_home_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A client machine whose home, cwd and environment all point at its own data."""
    paths = make_client_home(tmp_path / "client")
    monkeypatch.setenv("HOME", str(tmp_path / "client"))
    monkeypatch.setenv("REASONIX_HOME", str(paths.home))
    monkeypatch.delenv("REASONIX_STATE_HOME", raising=False)
    monkeypatch.chdir(paths.root)
    return tmp_path / "client"
