"""``echo_bytes`` writes what ``click.echo`` writes for the decoded text, on any stream."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# Run in a child: the test process has click loaded, and then echo_bytes always defers to it.
CHILD = r"""
import io, sys
text = sys.stdin.buffer.read().decode("utf-8")
encoding, how = sys.argv[1], sys.argv[2]
raw = io.BytesIO()
sys.stdout = io.TextIOWrapper(raw, encoding=encoding, errors="replace", newline="\n")
if how == "bytes":
    from context_engine.cli.context import echo_bytes
    echo_bytes(text.encode("utf-8"))
    assert ("click" in sys.modules) == ("\x1b" in text or encoding != "utf-8")
else:
    import click
    click.echo(text)
sys.stdout.flush()
sys.__stdout__.buffer.write(raw.getvalue())
"""


def _run(text: str, encoding: str, how: str) -> bytes:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, encoding, how], input=text.encode("utf-8"),
        capture_output=True, check=True, timeout=60,
    )
    return out.stdout


@pytest.mark.slow  # a child per example
@settings(max_examples=12, deadline=None)
@given(
    text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
    | st.sampled_from(["\x1b[31mred\x1b[0m", "a — 日本", "line\nline", ""]),
    encoding=st.sampled_from(["utf-8", "latin-1"]),
)
def test_echo_bytes_is_click_echo_of_the_text(text: str, encoding: str) -> None:
    assert _run(text, encoding, "bytes") == _run(text, encoding, "click")


def test_plain_utf8_text_is_written_without_click() -> None:
    assert _run("facts — 数据", "utf-8", "bytes") == "facts — 数据\n".encode()
