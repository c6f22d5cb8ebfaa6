"""A long listing written to a pipe widens the pipe first: fewer writer/reader round trips."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from context_engine.cli.pipe import WIDE_PIPE, widen_pipe
from context_engine.facts.memory import Memory
from support import APP_DIR
from support.store import git_paths

fcntl = pytest.importorskip("fcntl")
if not hasattr(fcntl, "F_GETPIPE_SZ"):
    pytest.skip("pipe sizes are Linux's", allow_module_level=True)


def _allowed() -> bool:
    """Whether this machine lets an unprivileged pipe reach ``WIDE_PIPE``."""
    try:
        with open("/proc/sys/fs/pipe-max-size") as limit:
            return int(limit.read()) >= WIDE_PIPE
    except OSError:
        return False


def test_a_pipe_is_widened_and_a_file_left_alone(tmp_path) -> None:  # type: ignore[no-untyped-def]
    if not _allowed():
        pytest.skip("pipe-max-size below 1 MiB here")
    read, write = os.pipe()
    try:
        with os.fdopen(write, "wb", closefd=False) as binary:
            before = fcntl.fcntl(read, fcntl.F_GETPIPE_SZ)
            widen_pipe(binary)
        assert before < WIDE_PIPE
        assert fcntl.fcntl(read, fcntl.F_GETPIPE_SZ) == WIDE_PIPE
    finally:
        os.close(read)
        os.close(write)
    with open(tmp_path / "out", "wb") as file:
        widen_pipe(file)  # not a pipe: nothing to do, and no error
        file.write(b"x")
    assert (tmp_path / "out").read_bytes() == b"x"


def test_list_json_into_a_pipe_widens_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    if not _allowed():
        pytest.skip("pipe-max-size below 1 MiB here")
    paths = git_paths(tmp_path)
    memory = Memory(paths)
    for i in range(3):
        memory.save(name=f"fact-{i}", description=f"fact {i}", body=f"body {i}", type="project")
    env = {**os.environ, "PYTHONPATH": str(APP_DIR)}
    argv = [sys.executable, "-c", "from context_engine.cli.entry import main; main()",
            "--home", str(paths.home), "--workspace", str(paths.workspace), "list", "--json"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, env=env, cwd=paths.workspace) as proc:
        assert proc.stdout is not None
        out = proc.stdout.read()
        # The pipe outlives the writer: its size is the one the listing left it with.
        size = fcntl.fcntl(proc.stdout.fileno(), fcntl.F_GETPIPE_SZ)
    assert proc.returncode == 0
    assert b'"fact-2"' in out or b"fact-2" in out
    assert size == WIDE_PIPE
