"""A short command's NumPy starts no BLAS threads; nothing else sees the setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from context_engine import short_process
from context_engine.cli import entry, fast

pytest.importorskip("numpy")

PROBE = r"""
import json, os, sys
from context_engine import short_process
if sys.argv[1] == "short":
    short_process.mark_short()
short_process.import_numpy()
print(json.dumps({"threads": len(os.listdir("/proc/self/task")),
                  "env": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""


def _probe(kind: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != short_process.BLAS_THREADS}
    out = subprocess.run([sys.executable, "-c", PROBE, kind], capture_output=True, check=True,
                         env=env, timeout=120)
    return dict(json.loads(out.stdout))


@pytest.mark.slow  # two processes importing NumPy
@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
                    reason="needs /proc and two CPUs (OpenBLAS starts one thread per CPU)")
def test_a_short_process_imports_numpy_without_blas_threads_and_leaves_no_setting() -> None:
    short = _probe("short")
    assert short == {"threads": 1, "env": None}  # no BLAS thread; children inherit nothing
    assert int(str(_probe("long")["threads"])) > 1  # a host keeps NumPy's default


def test_the_plain_commands_mark_their_process_short(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    monkeypatch.setattr(short_process, "_SHORT", [False])
    monkeypatch.setattr(fast, "run", lambda plain: seen.append(short_process._SHORT[0]) or 0)
    monkeypatch.setattr(sys, "argv", ["context-engine", "recall", "docker"])
    from context_engine.facts import build_progress

    monkeypatch.setattr(build_progress, "enable", lambda: None)  # this test's process only

    def leave(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(os, "_exit", leave)
    with pytest.raises(SystemExit):
        entry.main()
    assert seen == [True]
