"""Helpers for the remote-workspace tests (issue 8): a served home, a client home, an audit."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from context_engine.catalog.local import LocalCatalog
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.policy.confirmation import ConfirmationRequest

from support.suggest import Home, install, make_home

_AUDIT: list[str] | None = None
_AUDIT_LOCK = threading.Lock()
_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "os.mkdir", "os.rename", "os.remove"})


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _AUDIT is None or event not in _EVENTS or not args:
        return
    target = args[0]
    if isinstance(target, (str, bytes, os.PathLike)):
        with _AUDIT_LOCK:
            if _AUDIT is not None:
                _AUDIT.append(os.fsdecode(target))


sys.addaudithook(_hook)


@contextmanager
def audit_opens() -> Iterator[list[str]]:
    """Every path this process opens, lists, creates or removes while the block runs."""
    global _AUDIT
    seen: list[str] = []
    _AUDIT = seen
    try:
        yield seen
    finally:
        _AUDIT = None


def touched_under(seen: list[str], root: Path) -> list[str]:
    """The audited paths inside ``root`` (relative paths count as the cwd's)."""
    base = os.path.realpath(root)
    out = []
    for path in seen:
        real = os.path.realpath(path)
        if real == base or real.startswith(base + os.sep):
            out.append(path)
    return out


@dataclass
class Served:
    """A home + workspace a server serves, with facts, sessions, instructions and a trace."""

    home: Home
    base: Path

    @property
    def paths(self) -> EnginePaths:
        """The server's engine paths."""
        return self.home.paths

    def command(self, *extra: str) -> list[str]:
        """argv of ``serve --stdio`` for this home with its own environment."""
        env = [
            "env",
            "-u",
            "REASONIX_STATE_HOME",
            "-u",
            "CLAUDE_CONFIG_DIR",
            "-u",
            "CODEX_HOME",
            "-u",
            "GEMINI_CLI_HOME",
            f"HOME={self.base}",
            f"REASONIX_HOME={self.paths.home}",
        ]
        return [
            *env,
            sys.executable,
            "-m",
            "context_engine",
            "serve",
            "--stdio",
            "--home",
            str(self.paths.home),
            "--workspace",
            str(self.paths.root),
            *extra,
        ]

    def local(self) -> LocalCatalog:
        """The same catalog in process (what the remote must equal)."""
        return LocalCatalog(self.paths)


def make_served(base: Path) -> Served:
    """A server-side machine: two scopes of facts, an override, an archive, sessions, AGENTS.md."""
    home = make_home(base)
    install(home, "reasonix")
    (home.root / "AGENTS.md").write_text(
        "# Team rules\n\nRun the release build with `make release`.\n\n@missing.md\n",
        encoding="utf-8",
    )
    memory = Memory(home.paths)
    memory.save(name="release-target", description="Release builds target arm64",
                body="The release build targets arm64 and runs make release.", type="project")
    memory.save(name="global/release-target", description="Global release default",
                body="Default is x86.", type="reference")
    memory.save(name="editor", description="Preferred editor", body="Use vim keybindings.",
                type="user", scope="global")
    doomed = memory.save(
        name="old-note", description="An old note", body="Obsolete deploy notes.", type="project"
    )
    assert doomed.fact is not None
    memory.forget(doomed.fact.id)
    changed = memory.save(name="project/release-target",
                          description="Release builds target arm64 only",
                          body="The release build targets arm64 only.")
    assert changed.fact is not None and changed.fact.revision == 2
    return Served(home, base)


def make_client_home(base: Path) -> EnginePaths:
    """The client machine: its own home with a fact of its own (must never show up)."""
    root = base / "work" / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# LOCAL ONLY rules\n", encoding="utf-8")
    state = base / "reasonix-home"
    paths = EnginePaths(home=state, state=state, workspace=root, root=root)
    Memory(paths).save(
        name="local-secret", description="Local only fact", body="LOCAL ONLY", type="project"
    )
    return paths


@dataclass
class Recorder:
    """A ConfirmationService that records requests and answers with ``answer``."""

    answer: Callable[[ConfirmationRequest], bool]
    requests: list[ConfirmationRequest] = field(default_factory=list)

    def confirm(self, request: ConfirmationRequest) -> bool:
        """Record, then answer."""
        self.requests.append(request)
        return self.answer(request)


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``predicate`` until true or ``timeout``; returns its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()

