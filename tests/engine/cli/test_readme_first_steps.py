"""The README's first-steps commands run as written, and the example prompt recalls the example
fact (a newcomer's first recall must not come back empty)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MARKER = "<!-- first-steps-example:"


def commands() -> list[list[str]]:
    """The ``context-engine`` lines of the README's first-steps block, continuations joined."""
    text = (ROOT / "README.md").read_text("utf-8")
    block = re.search(r"```sh\n(.*?)```", text[text.index(MARKER) :], re.S)
    assert block is not None
    joined = block.group(1).replace("\\\n", " ")
    lines = [line.split("   #")[0] for line in joined.splitlines()]
    return [shlex.split(line) for line in lines if line.startswith("context-engine ")]


@pytest.mark.slow
def test_first_steps_recall_the_fact_they_saved(tmp_path: Path) -> None:
    project = tmp_path / "your-project"
    (project / ".git").mkdir(parents=True)
    env = dict(os.environ, REASONIX_HOME=str(tmp_path / "reasonix"),
               PYTHONPATH=str(ROOT / "app"))
    outputs = []
    for argv in commands():
        done = subprocess.run([sys.executable, "-m", "context_engine", *argv[1:]], cwd=project,
                              env=env, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, (argv, done.stderr)
        outputs.append(done.stdout)
    assert [argv[1] for argv in commands()] == ["remember", "recall", "list"]
    saved_id = re.search(r"\((mem-[0-9a-f]+),", outputs[0])
    assert saved_id is not None, outputs[0]
    block = outputs[1].split("</memory-recall>")[0]
    assert f"id={saved_id.group(1)}" in block
    assert [f["id"] for f in json.loads(outputs[2])["facts"]] == [saved_id.group(1)]
