"""Syscall failures injected with strace (RELIABILITY C11): pre-commit errors change nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from context_engine.facts.memory import Memory
from support.store import make_paths, temp_files, tree

SCRIPT = """
import json, sys
sys.path[:0] = {paths!r}
from support.store import make_paths
from pathlib import Path
from context_engine.errors import ContextEngineError
from context_engine.facts.memory import Memory
memory = Memory(make_paths(Path({tmp!r})))
try:
    if {op!r} == "update":
        memory.save(id={fact_id!r}, body="v2")
    else:
        memory.save(name="new", description="d", body="n")
    print(json.dumps({{"ok": True}}))
except ContextEngineError as exc:
    print(json.dumps({{"code": exc.code, "errno": getattr(exc, "errno", None)}}))
"""


def _strace_works() -> bool:
    if shutil.which("strace") is None:
        return False
    probe = subprocess.run(["strace", "-o", "/dev/null", "true"], capture_output=True)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _strace_works(), reason="strace/ptrace not available")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("op", "inject", "errno_name"),
    [
        ("update", "rename,renameat,renameat2:error=EXDEV", "EXDEV"),
        ("create", "link,linkat:error=ENOSPC", "ENOSPC"),
        ("update", "fsync:error=EIO:when=1", "EIO"),
    ],
)
def test_injected_syscall_error_leaves_store_identical(
    tmp_path: Path, op: str, inject: str, errno_name: str
) -> None:
    import errno

    memory = Memory(make_paths(tmp_path))
    fact = memory.save(name="x", description="d", body="v1").fact
    assert fact is not None
    before = tree(memory.paths.state)
    here = str(Path(__file__).resolve().parents[2])
    code = SCRIPT.format(paths=[here, *sys.path], tmp=str(tmp_path), op=op, fact_id=fact.id)
    run = subprocess.run(
        ["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"inject={inject}", sys.executable],
        input=code,
        capture_output=True,
        text=True,
        timeout=60,
    )
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result == {"code": "io_error", "errno": getattr(errno, errno_name)}, run.stderr
    assert tree(memory.paths.state) == before
    assert temp_files(memory.paths.state) == []
    assert Memory(make_paths(tmp_path)).save(id=fact.id, body="v2").fact.revision == 2  # type: ignore[union-attr]
