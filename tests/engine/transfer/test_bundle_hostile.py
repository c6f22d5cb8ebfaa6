"""Hostile bundles are refused with nothing written anywhere (S15.3; PEP 706 ``data`` filter)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import stat
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from context_engine.cli.main import cli
from context_engine.errors import ContextEngineError
from context_engine.transfer.bundle_format import FORMAT, Limits
from context_engine.transfer.bundle_read import BundleRefused
from context_engine.transfer.restore import restore_bundle
from support.bundles import paths_for, workspace

FACT = b"---\nname: a\ndescription: d\nmetadata:\n  type: project\n  scope: project\n---\n\nbody\n"
Entry = tuple[str, str, bytes]  # name, kind (file|symlink|hardlink|chr|blk|fifo|dir), data


def manifest(files: list[tuple[str, bytes]], **override: object) -> bytes:
    """A manifest listing ``files`` as they are (the case then breaks something else)."""
    data: dict[str, object] = {
        "format": FORMAT, "format_version": 1, "scopes": ["project"],
        "files": [{"path": n, "size": len(d), "sha256": hashlib.sha256(d).hexdigest(),
                   "mtime_ns": None} for n, d in files],
    }
    data.update(override)
    return json.dumps(data).encode()


def write_tar(path: Path, entries: list[Entry]) -> None:
    """A tar.gz with exactly ``entries``, in order."""
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, data in entries:
            info = tarfile.TarInfo(name)
            info.mode = 0o600
            if kind == "file":
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
                continue
            info.type = {"symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
                         "chr": tarfile.CHRTYPE, "blk": tarfile.BLKTYPE,
                         "fifo": tarfile.FIFOTYPE, "dir": tarfile.DIRTYPE}[kind]
            info.linkname = data.decode()
            tar.addfile(info)


def write_zip(path: Path, entries: list[Entry]) -> None:
    """A zip with ``entries``; ``symlink`` entries carry S_IFLNK in their external attributes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, kind, data in entries:
            info = zipfile.ZipInfo(name)
            mode = stat.S_IFLNK | 0o777 if kind == "symlink" else stat.S_IFREG | 0o600
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)


def with_manifest(files: list[tuple[str, bytes]], extra: list[Entry] | None = None,
                  **override: object) -> list[Entry]:
    """The manifest for ``files``, the files, then ``extra`` entries."""
    return [("manifest.json", "file", manifest(files, **override)),
            *[(n, "file", d) for n, d in files], *(extra or [])]


def big_manifest() -> list[Entry]:
    return [("manifest.json", "file", b" " * 4096 + manifest([("project/a.md", FACT)])),
            ("project/a.md", "file", FACT)]


def duplicate_zip(path: Path) -> None:
    entries = with_manifest([("project/a.md", FACT)])
    with zipfile.ZipFile(path, "w") as archive:
        for name, _kind, data in entries:
            archive.writestr(name, data)
        with pytest.warns(UserWarning):
            archive.writestr("project/a.md", FACT)


def gzip_bomb(path: Path) -> None:
    zeros = b"\0" * (5 * 1024 * 1024)  # 5 MiB unpacked, ~5 KiB packed: over the 4 MiB cap
    write_tar(path, with_manifest([("project/a.md", FACT)], [("project/b.md", "file", zeros)]))


Build = Callable[[Path], None]
ONE = [("project/a.md", FACT)]


def _extra(name: str, kind: str, data: bytes) -> Build:
    """A tar bundle: one good fact with its manifest, then one extra member."""
    return lambda p: write_tar(p, with_manifest(ONE, [(name, kind, data)]))


OFF_LAYOUT = "not a path of the bundle layout"
LINKS = "links are not allowed"
CASES: dict[str, tuple[Build, str, Limits]] = {
    "path traversal": (_extra("project/../../escape.md", "file", FACT), OFF_LAYOUT, Limits()),
    "absolute path": (lambda p: write_tar(p, with_manifest(ONE, [(
        str(p.parent / "abs.md"), "file", FACT)])), OFF_LAYOUT, Limits()),
    "backslash traversal": (_extra("project\\..\\..\\x.md", "file", FACT), OFF_LAYOUT, Limits()),
    "symlink": (_extra("project/link.md", "symlink", b"/etc/passwd"), LINKS, Limits()),
    "hard link": (_extra("project/hard.md", "hardlink", b"project/a.md"), LINKS, Limits()),
    "character device": (_extra("project/tty.md", "chr", b""), "device files", Limits()),
    "block device": (_extra("project/sda.md", "blk", b""), "device files", Limits()),
    "fifo": (_extra("project/pipe.md", "fifo", b""), "FIFOs", Limits()),
    "duplicate names": (_extra("project/a.md", "file", b"---\nname: a\n---\n\nother\n"),
                        "appears twice", Limits()),
    "gzip bomb (one member)": (gzip_bomb, "larger than", Limits()),
    "bomb (total size)": (lambda p: write_tar(p, with_manifest(
        [(f"project/f{i}.md", FACT * 20) for i in range(30)])), "unpacks to more than",
        Limits(max_total_bytes=20_000)),
    "too many members": (lambda p: write_tar(p, with_manifest(
        [(f"project/f{i}.md", FACT) for i in range(30)])), "more than 10 members",
        Limits(max_members=10)),
    "huge manifest": (lambda p: write_tar(p, big_manifest()), "manifest.json: larger than",
                      Limits(max_manifest_bytes=2048)),
    "outside the layout": (_extra("project/sub/x.md", "file", FACT), OFF_LAYOUT, Limits()),
    "a script": (_extra("run.sh", "file", b"rm -rf /"), OFF_LAYOUT, Limits()),
    "unknown directory": (_extra("project/sub", "dir", b""), OFF_LAYOUT, Limits()),
    "tampered file": (lambda p: write_tar(p, [("manifest.json", "file", manifest(ONE)),
                                              ("project/a.md", "file", FACT + b"x")]),
                      "does not match manifest.json", Limits()),
    "file missing from manifest": (lambda p: write_tar(p, [
        ("manifest.json", "file", manifest(ONE)), ("project/a.md", "file", FACT),
        ("project/b.md", "file", FACT)]), "not in manifest.json", Limits()),
    "no manifest": (lambda p: write_tar(p, [("project/a.md", "file", FACT)]),
                    "no manifest.json", Limits()),
    "newer format": (lambda p: write_tar(p, with_manifest(ONE, format_version=99)),
                     "newer than this version", Limits()),
    "not a bundle": (lambda p: p.write_bytes(gzip.compress(b"just text")),
                     "not a bundle", Limits()),
    "zip symlink": (lambda p: write_zip(p, with_manifest(ONE, [(
        "project/link.md", "symlink", b"/etc/passwd")])), LINKS, Limits()),
    "zip traversal": (lambda p: write_zip(p, with_manifest(ONE, [(
        "../../zip-escape.md", "file", FACT)])), OFF_LAYOUT, Limits()),
    "zip absolute path": (lambda p: write_zip(p, with_manifest(ONE, [(
        "/tmp/zip-abs.md", "file", FACT)])), OFF_LAYOUT, Limits()),
    "zip duplicate names": (duplicate_zip, "appears twice", Limits()),
}


def snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry under ``root``: relative path → (mode, bytes or link target)."""
    found: dict[str, tuple[int, bytes]] = {}
    for dirpath, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = Path(dirpath) / name
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                value = os.readlink(path).encode()
            elif stat.S_ISREG(st.st_mode):
                value = path.read_bytes()
            else:
                value = b""
            found[str(path.relative_to(root))] = (st.st_mode, value)
    return found


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 12


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_bundle_is_refused_and_nothing_is_written(tmp_path: Path, case: str) -> None:
    build, message, limits = CASES[case]
    ws = workspace(tmp_path)
    home = tmp_path / "home"
    (home / "memory" / "global").mkdir(parents=True)  # an existing state root
    bundle = tmp_path / "in" / "hostile.bundle"
    bundle.parent.mkdir()
    build(bundle)
    before = snapshot(tmp_path)
    with pytest.raises(BundleRefused, match=message):
        restore_bundle(paths_for(home, ws), bundle, write=True, limits=limits)
    assert snapshot(tmp_path) == before
    with pytest.raises(BundleRefused, match=message):
        restore_bundle(paths_for(home, ws), bundle, write=False, limits=limits)
    assert snapshot(tmp_path) == before


def test_the_cli_refuses_a_hostile_bundle_with_exit_1(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    bundle = tmp_path / "hostile.tar.gz"
    CASES["symlink"][0](bundle)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "--workspace", str(ws),
                                      "import", "bundle", str(bundle), "--yes"])
    assert result.exit_code == 1
    assert LINKS in result.stderr
    assert not (tmp_path / "home").exists()


def test_a_symlinked_staging_folder_is_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "context-center").symlink_to(elsewhere, target_is_directory=True)
    bundle = tmp_path / "ok.tar.gz"
    write_tar(bundle, with_manifest(ONE))
    with pytest.raises(ContextEngineError, match="symbolic link"):
        restore_bundle(paths_for(home, ws), bundle, write=True)
    assert list(elsewhere.iterdir()) == []
