"""Hostile import lines (RELIABILITY §2 checklist S1; SPEC S6.5, S14.1).

Every line below is an import line that must be refused with its exact code, keep the line
with a rejection note, and load nothing from outside the boundary; the resolver never raises.
"""

from __future__ import annotations

import os
import socket
import string
from pathlib import Path

import pytest
from context_engine.instructions import resolve_instructions
from context_engine.instructions.opener import READ_LIMIT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.instructions import FailingFS, RecordingFS, engine_paths

SECRET = "OUTSIDE-SECRET-7f3a"
OUT = "import_outside_source"
INVALID = "import_invalid_path"
ESCAPE = "import_symlink_escape"
UNREADABLE = "import_unreadable"

HOSTILE: list[tuple[str, str]] = [
    ("@/etc/passwd", OUT),
    ("@~/.ssh/id_rsa", OUT),
    ("@~root/.ssh/id_rsa", OUT),
    ("@../outside/secret.md", OUT),
    ("@docs/../../outside/secret.md", OUT),
    ("@./../outside/secret.md", OUT),
    ("@C:\\Windows\\win.ini", OUT),
    ("@c:secret.md", OUT),
    ("@\\\\server\\share\\secret.md", OUT),
    ("@docs\\..\\..\\outside\\secret.md", INVALID),
    ("@%2e%2e/outside/secret.md", INVALID),
    ("@docs/%2E%2E%2F%2E%2E/secret.md", INVALID),
    ("@docs/\x00secret.md", INVALID),
    ("@docs/\x07bell.md", INVALID),
    ("@docs/\x1b[31mred.md", INVALID),
    ("@docs/\x1fsep.md", INVALID),
    ("@docs/\x7fdel.md", INVALID),
    ("@docs/\u202eevil.md", INVALID),
    ("@docs/\u2066isolate.md", INVALID),
    ("@docs/\u200bzero.md", INVALID),
    ("@\ufeffdocs/bom.md", INVALID),
    ("@．．/outside/secret.md", INVALID),
    ("@docs/．．/．．/outside/secret.md", INVALID),
    ("@docs／．．／secret.md", INVALID),
    ("@docs/..\u2215..\u2215secret.md", INVALID),
    ("@CON.md", INVALID),
    ("@docs/aux.txt", INVALID),
    ("@docs/LPT1", INVALID),
    ("@docs/com\u00b9.md", INVALID),
    ("@docs/conin$.md", INVALID),
    ("@docs/trailing.md.", INVALID),
    ("@docs/dotted./x.md", INVALID),
    ("@docs/a<b>.md", INVALID),
    ("@docs/x.md::$DATA", INVALID),
    ("@https://example.com/x.md", INVALID),
    ("@docs/pipe|x.md", INVALID),
    ("@" + "a/" * 600 + "x.md", INVALID),
    ("@docs/" + "a" * 256 + ".md", INVALID),
    ("@.git/config", INVALID),
    ("@docs/../.GIT/config", INVALID),
    ("@GIT~1/config", INVALID),
    ("@docs/out.md", ESCAPE),
    ("@linkdir/secret.md", ESCAPE),
    ("@docs/zero.md", ESCAPE),
    ("@docs/hop.md", ESCAPE),
    ("@docs/loop.md", UNREADABLE),
    ("@docs/ping.md", UNREADABLE),
    ("@docs/pipe.md", UNREADABLE),
    ("@docs/sock.md", UNREADABLE),
    ("@docs/dir.md", UNREADABLE),
    ("@docs/big.md", UNREADABLE),
    ("@docs/undecodable.md", UNREADABLE),
    ("@docs/locked.md", UNREADABLE),
    ("@docs/dangling.md", UNREADABLE),
]


def _build(tmp_path: Path, line: str) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"{SECRET}\n")
    ws = tmp_path / "ws"
    docs = ws / "docs"
    docs.mkdir(parents=True)
    (docs / "locked.md").write_text(f"{SECRET} (unreadable)\n")
    (docs / "big.md").write_bytes(b"x" * (READ_LIMIT + 10))
    # Neither UTF-8 nor GB18030 (UTF-16 with a BOM is read, S6.3).
    (docs / "undecodable.md").write_bytes(b"rule \xff\xff\n")
    (docs / "dir.md").mkdir()
    os.symlink("../../outside/secret.md", docs / "out.md")
    os.symlink("../outside", ws / "linkdir")
    os.symlink("/dev/zero", docs / "zero.md")
    os.symlink("inner/../../../outside/secret.md", docs / "hop.md")
    (docs / "inner").mkdir()
    os.symlink("loop.md", docs / "loop.md")
    os.symlink("pong.md", docs / "ping.md")
    os.symlink("ping.md", docs / "pong.md")
    os.symlink("nowhere.md", docs / "dangling.md")
    os.mkfifo(docs / "pipe.md")
    (ws / "AGENTS.md").write_text(f"Rules.\n{line}\nEnd.\n", encoding="utf-8")
    return ws, outside


@pytest.mark.slow
@pytest.mark.parametrize(("line", "code"), HOSTILE, ids=[repr(line)[:40] for line, _ in HOSTILE])
def test_hostile_import_line(tmp_path: Path, line: str, code: str) -> None:
    ws, outside = _build(tmp_path, line)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(ws / "docs" / "sock.md"))
    try:
        fs = _Both()
        resolution = resolve_instructions(engine_paths(tmp_path / "home", ws), ws, fs=fs)
    finally:
        sock.close()
    assert [(d.code, d.line, d.source, d.path) for d in resolution.diagnostics] == [
        (code, 2, ws / "AGENTS.md", line[1:])
    ]
    (doc,) = resolution.documents
    assert doc.imports == ()
    assert SECRET not in doc.body
    assert doc.body.splitlines()[1].endswith(f"<!-- rejected: {code} -->")
    assert doc.body.splitlines()[1].startswith(line.strip())
    assert all(not path.startswith(str(outside)) for path in fs.read_paths)
    assert all(path.startswith(str(ws) + "/") for path in fs.read_paths)


class _Both(RecordingFS, FailingFS):
    """Records opens and reads, and refuses ``locked.md`` as if permission were denied."""

    def __init__(self) -> None:
        RecordingFS.__init__(self)
        FailingFS.__init__(self, "locked.md")


def test_at_least_25_hostile_lines_with_distinct_texts() -> None:
    assert len({line for line, _ in HOSTILE}) >= 25


_ALPHABET = st.sampled_from(
    [
        *string.ascii_letters,
        *string.digits,
        *"./\\~%:$<>|*?_- ",
        *["..", "../", "\x00", "\x1b", "\u202e", "\u200b", "．", "／", "\t", "\r", "é", "\ufeff"],
    ]
)


@pytest.mark.slow
@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(_ALPHABET, min_size=1, max_size=12).map("".join), max_size=6))
def test_random_lines_never_raise_or_leak(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str]
) -> None:
    base = tmp_path_factory.mktemp("fuzz")
    text = "\n".join("@" + line for line in lines)
    ws, outside = _build(base, text)
    fs = RecordingFS()
    resolution = resolve_instructions(engine_paths(base / "home", ws), ws / "docs", fs=fs)
    assert all(d.code != "resolver_error" for d in resolution.diagnostics)
    assert all(SECRET not in doc.body for doc in resolution.documents)
    assert all(not path.startswith(str(outside)) for path in fs.read_paths)
