"""The README's host-API example runs as written (issue 5)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"
MARKER = "<!-- host-api-example:"


def example() -> str:
    text = README.read_text("utf-8")
    after = text[text.index(MARKER) :]
    match = re.search(r"```python\n(.*?)```", after, re.S)
    assert match is not None
    return match.group(1)


def test_readme_host_api_example_runs() -> None:
    out = io.StringIO()
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(out):
        exec(compile(example(), "README.md", "exec"), namespace)
    printed = out.getvalue()
    assert "auto Saved project/release-target.md" in printed
    assert "<memory-recall>" in printed and "<memory-update>" in printed
    assert "False only explicitly classified project/reference facts are low-risk" in printed
    base = namespace["base"]
    assert str(base) not in printed  # nothing provider-visible names a local path
