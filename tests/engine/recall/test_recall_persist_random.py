"""Random edits between "processes": the restored index answers as a fresh build (issue 9)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from context_engine.facts.codec import render_fact
from context_engine.facts.model import Fact
from context_engine.paths import EnginePaths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.recall import NOW
from support.store import settle_all
from test_recall_persist import answers, cold, fresh

WORDS = ["docker", "kernel", "socket", "vault", "retry", "cache", "release", "budget"]
NAMES = ["alpha", "bravo", "charlie", "delta"]

ops = st.lists(
    st.tuples(st.sampled_from(["replace", "in_place", "delete", "create", "shadow"]),
              st.sampled_from(NAMES), st.lists(st.sampled_from(WORDS), min_size=3, max_size=3)),
    min_size=1,
    max_size=6,
)


def write(store: Path, name: str, words: list[str], scope: str = "project") -> None:
    fact = Fact(
        id=f"mem-{scope}-{name}", revision=1, name=name, title="", description=f"{name} note",
        type="project" if scope == "project" else "reference", scope=scope,  # type: ignore[arg-type]
        body=" ".join(words), created_at=NOW, updated_at=NOW,
    )
    store.mkdir(parents=True, exist_ok=True)
    tmp = store / f".tmp-{name}"
    tmp.write_bytes(render_fact(fact))
    os.replace(tmp, store / f"{name}.md")  # atomic replace: a new inode


def edit_in_place(file: Path, words: list[str]) -> None:
    """Same size, same inode, mtime set back: only ctime tells."""
    before = os.stat(file)
    data = file.read_bytes()
    head, _, body = data.partition(b"---\n\n")
    new = (" ".join(words)).encode()
    new = (new + b" " * len(body))[: len(body) - 1] + b"\n" if len(body) > 1 else body
    with open(file, "r+b") as handle:
        handle.write(head + b"---\n\n" + new)
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))


@pytest.mark.slow
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops)
def test_random_changes_between_processes(
    monkeypatch: pytest.MonkeyPatch, steps: list[tuple[str, str, list[str]]]
) -> None:
    settle_all(monkeypatch)
    base = Path(tempfile.mkdtemp(prefix="recall-persist-"))
    try:
        (base / "ws" / ".git").mkdir(parents=True)
        paths = EnginePaths.resolve(home=base / "home", workspace=base / "ws")
        for i, name in enumerate(NAMES):
            write(paths.project_store, name, WORDS[i : i + 3])
        write(paths.global_store, "echo", ["docker", "release", "vault"], scope="global")
        cold(paths)
        for op, name, words in steps:
            target = paths.project_store / f"{name}.md"
            if op == "replace" or (op == "in_place" and not target.exists()):
                write(paths.project_store, name, words)
            elif op == "in_place":
                edit_in_place(target, words)
            elif op == "delete":
                target.unlink(missing_ok=True)
            elif op == "create":
                write(paths.project_store, f"{name}-new", words)
            else:  # a project fact named like the global one shadows it, then may leave
                shadow = paths.project_store / "echo.md"
                if shadow.exists():
                    shadow.unlink()
                else:
                    write(paths.project_store, "echo", words)
            restored = cold(paths)
            assert restored.stats.full_builds == 0
            assert answers(restored) == fresh(paths)
    finally:
        shutil.rmtree(base, ignore_errors=True)
