"""The Reasonix oracle (../shared/reasonix-oracle/rxharness) for differential tests.

Every difference a test may see is listed once, with its reason, in
``tests/engine/data/oracle/accepted.json`` (argued in docs/decisions.md). A differential
case names the accepted differences it shows; it fails when it differs in a way it did not
name, or names one it no longer shows. Tests skip with a message when the oracle is absent.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support import DATA, ROOT

ORACLE = ROOT.parent / "shared" / "reasonix-oracle" / "rxharness"
ACCEPTED_FILE = DATA / "oracle" / "accepted.json"


def accepted() -> dict[str, dict[str, str]]:
    """The documented differences, by id."""
    entries = json.loads(ACCEPTED_FILE.read_text(encoding="utf-8"))
    return {entry["id"]: entry for entry in entries}


def require_oracle() -> Path:
    """The oracle binary, or skip the test (../shared is not part of every checkout)."""
    if not ORACLE.is_file():
        pytest.skip(f"Reasonix oracle not found at {ORACLE} (../shared/reasonix-oracle/)")
    return ORACLE


class Oracle:
    """One Reasonix home and workspace driven through the oracle's JSON commands."""

    def __init__(self, home: Path, ws: Path) -> None:
        self.binary = require_oracle()
        self.home, self.ws = home, ws

    def run(self, command: str, **flags: str) -> dict[str, Any]:
        """Run one command; its JSON answer (a Go error string, if any, is under "error")."""
        argv = [str(self.binary), command, "--home", str(self.home), "--ws", str(self.ws)]
        for key, value in flags.items():
            argv += [f"--{key.replace('_', '-')}", value]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, (argv, done.stderr)
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    def remember(self, **args: object) -> dict[str, Any]:
        """The agent ``remember`` tool with these arguments."""
        return self.run("remember", args=json.dumps(args, ensure_ascii=False))

    def facts(self) -> list[dict[str, Any]]:
        """Active facts of both stores."""
        return list(self.run("list")["facts"])


def check_case(case: str, shown: set[str], declared: set[str]) -> None:
    """A case shows exactly the accepted differences it declares, all of them documented."""
    known = accepted()
    assert declared <= set(known), f"{case}: undocumented ids {sorted(declared - set(known))}"
    assert shown == declared, f"{case}: differences {sorted(shown)}, declared {sorted(declared)}"
