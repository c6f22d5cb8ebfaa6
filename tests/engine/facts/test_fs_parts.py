"""``fs.write_parts``: old byte ranges and new bytes written in order, whatever the kernel does."""

from __future__ import annotations

import errno
import mmap
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from context_engine.errors import StoreIOError
from context_engine.facts import fs as fs_module
from context_engine.facts.fs import FS, Part, atomic_write, write_parts
from hypothesis import given, settings
from hypothesis import strategies as st


class _Stingy(FS):
    """Writes at most ``limit`` bytes per call; ``mappable=False`` refuses every mapping."""

    def __init__(self, limit: int, *, mappable: bool = True) -> None:
        self.limit = limit
        self.mappable = mappable
        self.vector_writes = 0

    def map(self, fd: int, size: int) -> mmap.mmap:
        if not self.mappable:
            raise OSError(errno.ENODEV, "no mmap here")
        return super().map(fd, size)

    def writev(self, fd: int, buffers: list[memoryview]) -> int:
        self.vector_writes += 1
        budget, taken = self.limit, []
        for buffer in buffers:
            if budget <= 0:
                break
            taken.append(buffer[:budget])
            budget -= taken[-1].nbytes
        return super().writev(fd, taken)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        return super().write(fd, data[: self.limit])


def _expected(source: bytes, parts: list[Part]) -> bytes:
    return b"".join(source[p[0]:p[1]] if isinstance(p, tuple) else p for p in parts)


def _written(tmp_path: Path, source: bytes, parts: list[Part], fs: FS) -> bytes:
    src_path, dst_path = tmp_path / "src", tmp_path / "dst"
    src_path.write_bytes(source)
    dst_path.unlink(missing_ok=True)
    src = os.open(src_path, os.O_RDONLY)
    dst = os.open(dst_path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        write_parts(fs, src, dst, parts)
    finally:
        os.close(src)
        os.close(dst)
    return dst_path.read_bytes()


@st.composite
def _sources_and_parts(draw: st.DrawFn) -> tuple[bytes, list[Part]]:
    source = draw(st.binary(min_size=1, max_size=3000))
    parts: list[Part] = []
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.booleans()):
            start = draw(st.integers(0, len(source)))
            parts.append((start, draw(st.integers(start, len(source)))))
        else:
            parts.append(draw(st.binary(max_size=200)))
    return source, parts


@settings(max_examples=60, deadline=None)
@given(case=_sources_and_parts(), limit=st.integers(1, 4096), mappable=st.booleans())
def test_the_bytes_written_are_the_parts_in_order(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[bytes, list[Part]], limit: int,
    mappable: bool,
) -> None:
    """Short writes, empty parts and ranges that overlap or repeat: the same bytes, mapped or
    copied."""
    source, parts = case
    fs = _Stingy(limit, mappable=mappable)
    assert _written(tmp_path_factory.mktemp("parts"), source, parts, fs) == _expected(source, parts)


def test_a_file_of_many_edits_takes_more_than_one_vector_write(tmp_path: Path) -> None:
    """More parts than one ``writev`` may carry (``_IOV_MAX``) still arrive, all in order."""
    source = bytes(range(256)) * 40
    parts: list[Part] = []
    for i in range(fs_module._IOV_MAX * 2 + 7):
        parts += [(i % 5000, i % 5000 + 3), f"<{i}>".encode()]
    fs = _Stingy(1 << 30)
    assert _written(tmp_path, source, parts, fs) == _expected(source, parts)
    assert fs.vector_writes >= 3


def test_the_old_bytes_come_from_one_mapping_in_one_write(tmp_path: Path) -> None:
    """The fast path: mapped, then one ``writev`` for a splice of a large file."""
    source = b"- [x](x.md) \xe2\x80\x94 [project/project] d\n" * 20_000
    parts: list[Part] = [(0, 400_000), b"- [new](new.md) \xe2\x80\x94 [project/project] n\n",
                         (400_000, len(source))]
    fs = _Stingy(1 << 30)
    assert _written(tmp_path, source, parts, fs) == _expected(source, parts)
    assert fs.vector_writes == 1


def test_a_source_shorter_than_its_ranges_fails_and_the_target_is_kept(tmp_path: Path) -> None:
    """A MEMORY.md cut short since it was checked: the write fails, nothing is replaced."""
    target = tmp_path / "MEMORY.md"
    target.write_bytes(b"old bytes\n")
    src_path = tmp_path / "src"
    src_path.write_bytes(b"0123456789")
    src = os.open(src_path, os.O_RDONLY)
    try:
        with pytest.raises(StoreIOError, match="ended before the range"):
            atomic_write(FS(), target,
                         lambda dst: write_parts(FS(), src, dst, [(0, 4), b"new", (4, 64)]))
    finally:
        os.close(src)
    assert target.read_bytes() == b"old bytes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md", "src"]


def test_a_source_cut_while_it_is_mapped_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """Truncated by another program between the mapping and the write: the kernel's copy
    faults (EFAULT, or a short write), the process is not killed by SIGBUS."""
    script = textwrap.dedent(f"""
        import os
        from context_engine.facts.fs import FS, write_parts

        class Cutting(FS):
            def map(self, fd, size):
                mapped = super().map(fd, size)
                os.truncate({str(tmp_path / "src")!r}, 4096)
                return mapped

            def fstat(self, fd):  # the size check sees the size from before the cut
                return os.stat_result((0o100600, 0, 0, 1, 0, 0, 1 << 22, 0, 0, 0))

        with open({str(tmp_path / "src")!r}, "wb") as f:
            f.write(b"x" * (1 << 22))
        src = os.open({str(tmp_path / "src")!r}, os.O_RDONLY)
        dst = os.open({str(tmp_path / "dst")!r}, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            write_parts(Cutting(), src, dst, [(0, 1 << 21), b"new", (1 << 21, 1 << 22)])
        except OSError as exc:
            print("refused", exc.errno)
        else:
            print("written")
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["refused", str(errno.EFAULT)]
