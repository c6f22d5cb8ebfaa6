"""A sample workspace and home for ``context-center --demo`` and the app's tests (S13.1).

Everything is written through the engine's own store API (so fact files are canonical bytes),
except session transcripts and instruction files, which other programs own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import cast

from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.ops import Forget, Person, Save, WriteOutcome
from context_engine.facts.model import FactType, Scope
from context_engine.paths import EnginePaths

NOW = datetime.now(UTC).replace(microsecond=0)


@dataclass(frozen=True, slots=True)
class Demo:
    """Where the demo lives and the environment the app needs to find its sessions."""

    root: Path
    workspace: Path
    home: Path
    paths: EnginePaths
    environment: dict[str, str] = field(default_factory=dict)


USER_AGENTS = """# Personal preferences

- Answer in English, briefly; show commands before explaining them.
- Never push to a remote without asking first.
"""

PROJECT_AGENTS = """# Payments service

This repository holds the payments API (Go) and its admin UI (TypeScript).

@docs/conventions.md

## Build

- `make build` builds everything; `make test` runs the unit tests.

@../secrets/notes.md
"""

CONVENTIONS = """## Conventions

- Errors are wrapped with `fmt.Errorf("…: %w", err)`; never swallow them.
- Money is stored as integer cents, never as floats.

@./style.md
"""

STYLE = """## Style

```go
func Charge(ctx context.Context, cents int64) error {
\treturn nil
}
```
"""

LOCAL = """# Local overrides (not committed)

- The staging database runs on port 6432 on this machine.
"""

@dataclass(frozen=True, slots=True)
class FactSpec:
    """One sample fact."""

    name: str
    title: str
    type: FactType
    scope: Scope
    description: str
    body: str


def _spec(fields: dict[str, str]) -> FactSpec:
    return FactSpec(name=fields["name"], title=fields["title"], type=cast(FactType, fields["type"]),
                    scope=cast(Scope, fields["scope"]), description=fields["description"],
                    body=fields["body"])


# The sample facts are data, kept next to this module (the wheel ships it as package data).
_TABLE = json.loads(resources.files("context_center").joinpath("demo_facts.json")
                    .read_text(encoding="utf-8"))
FACTS: tuple[FactSpec, ...] = tuple(_spec(f) for f in _TABLE["facts"])
STALE = _spec(_TABLE["stale"])
FORGOTTEN = tuple(_spec(f) for f in _TABLE["forgotten"])

REASONIX_TURNS = (
    ("Always run make lint before committing anything in this repository.",
     "Never edit files under vendor/ by hand; regenerate them instead."),
    ("Remember that the staging deploy needs the VPN to be up first.",
     "By default use the sandbox payment provider in tests."),
)

CLAUDE_TURNS = (
    "From now on always use pnpm in the admin UI, never npm.",
    "I prefer table-driven tests for new Go code.",
)


def claude_project_dir(root: Path) -> str:
    """Claude Code's sanitized project directory name for ``root``."""
    return re.sub(r"[^a-zA-Z0-9]", "-", str(root))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


PERSON = Person("app")  # the sample data is written as a person's own edits


def _instructions(home: Path, root: Path) -> None:
    _write(home / "AGENTS.md", USER_AGENTS)
    _write(root / "AGENTS.md", PROJECT_AGENTS)
    _write(root / "docs" / "conventions.md", CONVENTIONS)
    _write(root / "docs" / "style.md", STYLE)
    _write(root / "REASONIX.local.md", LOCAL)
    _write(root / "admin" / "CLAUDE.md", "# Admin UI\n\n- Components live in `src/components`.\n")


def _save(catalog: LocalCatalog, spec: FactSpec) -> WriteOutcome:
    """Save ``spec`` named by reference, so a same-named fact in the other scope is kept."""
    save = Save(name=f"{spec.scope}/{spec.name}.md", title=spec.title, description=spec.description,
                body=spec.body, type=spec.type, scope=spec.scope)
    return catalog.apply(save, PERSON)


def _fixed(moment: datetime) -> Callable[[], datetime]:
    """A clock stuck at ``moment`` (sample facts get different ages)."""
    return lambda: moment


def _facts(paths: EnginePaths) -> None:
    past = NOW - timedelta(days=400)
    _save(LocalCatalog(paths, clock=lambda: past), STALE)
    for number, spec in enumerate(FACTS):
        moment = NOW - timedelta(days=3 * number, hours=number)
        _save(LocalCatalog(paths, clock=_fixed(moment)), spec)
    catalog = LocalCatalog(paths)
    fact = catalog.read("project/release-target.md").fact
    catalog.apply(Save(id=fact.id, body="Release artifacts are published from `main-v2`.\n\n"
                       "Tag with `vX.Y.Z` first and push the tag.",
                       expected_revision=fact.revision), PERSON)
    fact = catalog.read("project/release-target.md").fact
    catalog.apply(Save(id=fact.id, description="Release branch and tagging for this project",
                       body="Release artifacts are published from `release/2.x`.\n\n"
                       "Tag with `vX.Y.Z` first, push the tag, then open the release PR.",
                       expected_revision=fact.revision), PERSON)
    for spec in FORGOTTEN:
        saved = _save(catalog, spec)
        if saved.fact is not None:
            catalog.apply(Forget(saved.fact.id), Person("cli"))  # the demo forgets, nobody asks


def _sessions(paths: EnginePaths, claude_root: Path) -> None:
    base = datetime(2026, 8, 1, 9, 30, tzinfo=UTC)
    for number, turns in enumerate(REASONIX_TURNS):
        stamp = base + timedelta(days=number)
        name = stamp.strftime("%Y%m%d-%H%M%S") + f".{number:09d}-deepseek-v4-flash.jsonl"
        lines: list[dict[str, object]] = [{"schema_version": 1}]
        for offset, text in enumerate(turns):
            ms = int((stamp + timedelta(minutes=offset)).timestamp() * 1000)
            lines.append({"role": "user", "content": text, "raw_content": text, "createdAt": ms})
            lines.append({"role": "assistant", "content": "Understood.", "createdAt": ms + 500})
        _write(paths.sessions_dir / name, "".join(json.dumps(x) + "\n" for x in lines))
    session = "3f2a9c1e-0000-4000-8000-000000000001"
    lines = []
    for offset, text in enumerate(CLAUDE_TURNS):
        when = (base + timedelta(days=3, minutes=offset)).isoformat().replace("+00:00", ".000Z")
        lines.append({
            "parentUuid": None if offset == 0 else f"u{offset}", "isSidechain": False,
            "userType": "external", "cwd": str(paths.root), "sessionId": session,
            "version": "2.1.200", "gitBranch": "main", "type": "user",
            "message": {"role": "user", "content": text}, "uuid": f"u{offset + 1}",
            "timestamp": when,
        })
    folder = claude_root / "projects" / claude_project_dir(paths.root)
    _write(folder / f"{session}.jsonl", "".join(json.dumps(x) + "\n" for x in lines))


def build_demo(target: Path) -> Demo:
    """Create the sample workspace and home under ``target`` (an empty directory)."""
    target = target.resolve()
    workspace = target / "payments"
    home = target / "reasonix-home"
    claude = target / "claude-config"
    (workspace / ".git").mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    paths = EnginePaths.resolve(home=home, workspace=workspace)
    _instructions(home, paths.root)
    _facts(paths)
    _sessions(paths, claude)
    demo = Demo(target, workspace, home, paths, {"CLAUDE_CONFIG_DIR": str(claude)})
    _record_trace(paths)
    return demo


def _record_trace(paths: EnginePaths) -> None:
    """Run recall once so the Recall tab has a last trace to show."""
    from context_engine.engine import ContextEngine

    engine = ContextEngine(paths)
    engine.recall("which release branch do we publish from?", engine.active_facts())
