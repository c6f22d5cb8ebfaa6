"""Read a bundle safely: validate every member before anything reaches a store.

The model is PEP 706's ``data`` filter, made stricter for a format we define ourselves: only
regular files on the bundle layout (``bundle_format.classify``), each name once; no links,
devices, FIFOs, sparse or encrypted members, no absolute or ``..`` paths; every size bounded
(``Limits``: per file, in total as actually decompressed, member count, manifest), so a bomb
is cut off by what is read, not by what a header claims. File data goes to a private staging
folder (0700, files 0600, ``O_EXCL|O_NOFOLLOW``) inside the state root, or only through a
hash when nothing is to be written; the manifest must then list exactly the files read, with
matching sizes and sha256.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import ContextEngineError
from ..filemodes import fix_new_file_mode
from .bundle_format import (
    DEFAULT_LIMITS,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    Limits,
    MemberPath,
    classify,
    is_directory_path,
)

CHUNK = 64 * 1024


class BundleRefused(ContextEngineError):
    """The bundle is not one we can restore safely; nothing was written to any store."""

    code = "bundle_refused"


@dataclass(slots=True)
class BundleFile:
    """One validated file of the bundle."""

    name: str
    where: MemberPath
    size: int
    sha256: str
    mtime_ns: int | None = None
    staged: Path | None = None
    data: bytes | None = None  # kept for active facts, which a merge parses and compares


@dataclass(slots=True)
class Bundle:
    """A bundle that passed every check: its manifest and its files by name."""

    manifest: dict[str, Any]
    files: dict[str, BundleFile] = field(default_factory=dict)

    def of_scope(self, scope: str) -> list[BundleFile]:
        """This scope's files, sorted by name."""
        return sorted((f for f in self.files.values() if f.where.scope == scope),
                      key=lambda f: f.name)


@dataclass(frozen=True, slots=True)
class _Member:
    name: str
    kind: str  # file | dir | refused: <why>
    open: Callable[[], IO[bytes]]


def _tar_members(path: Path, limits: Limits) -> Iterator[_Member]:
    try:
        tar = tarfile.open(path, mode="r:*")  # noqa: SIM115 - closed by the ``with`` below
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BundleRefused(f"not a bundle (neither tar nor zip): {exc}") from None
    with tar:
        count = 0
        while True:
            try:
                info = tar.next()
            except (tarfile.TarError, EOFError, OSError) as exc:
                raise BundleRefused(f"damaged bundle: {exc}") from None
            if info is None:
                return
            count += 1
            if count > limits.max_members + 1:
                raise BundleRefused(f"bundle has more than {limits.max_members} members")
            if info.issym() or info.islnk():
                kind = "refused: links are not allowed"
            elif info.ischr() or info.isblk():
                kind = "refused: device files are not allowed"
            elif info.isfifo():
                kind = "refused: FIFOs are not allowed"
            elif info.issparse():
                kind = "refused: sparse files are not allowed"
            elif info.isdir():
                kind = "dir" if info.size == 0 else "refused: a directory with data"
            elif info.isreg():
                kind = "file"
            else:
                kind = "refused: unsupported member type"
            member = info

            def opener(member: tarfile.TarInfo = member) -> IO[bytes]:
                handle = tar.extractfile(member)
                if handle is None:
                    raise BundleRefused(f"{member.name}: not a regular file")
                return handle

            yield _Member(info.name, kind, opener)


def _zip_members(path: Path, limits: Limits) -> Iterator[_Member]:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleRefused(f"damaged zip bundle: {exc}") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.max_members + 1:
            raise BundleRefused(f"bundle has more than {limits.max_members} members")
        for info in infos:
            mode = info.external_attr >> 16
            if info.flag_bits & 0x1:
                kind = "refused: encrypted members are not allowed"
            elif info.is_dir():
                kind = "dir"
            elif stat.S_ISLNK(mode):
                kind = "refused: links are not allowed"
            elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: a zip without Unix modes
                kind = "refused: only regular files are allowed"
            else:
                kind = "file"
            def opener(info: zipfile.ZipInfo = info) -> IO[bytes]:
                return archive.open(info)

            yield _Member(info.filename.rstrip("/") if info.is_dir() else info.filename, kind,
                          opener)


def _members(path: Path, limits: Limits) -> Iterator[_Member]:
    try:
        is_zip = zipfile.is_zipfile(path)
    except OSError as exc:
        raise BundleRefused(f"cannot read bundle: {exc.strerror or exc}") from None
    return _zip_members(path, limits) if is_zip else _tar_members(path, limits)


class _Budget:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.total = 0

    def read(self, name: str, handle: IO[bytes], cap: int, sink: Callable[[bytes], None]) -> int:
        size = 0
        while True:
            try:
                chunk = handle.read(CHUNK)
            except (OSError, EOFError, zipfile.BadZipFile, tarfile.TarError) as exc:
                raise BundleRefused(f"{name}: damaged data: {exc}") from None
            if not chunk:
                return size
            size += len(chunk)
            self.total += len(chunk)
            if size > cap:
                raise BundleRefused(f"{name}: larger than {cap} bytes")
            if self.total > self.limits.max_total_bytes:
                raise BundleRefused(
                    f"bundle unpacks to more than {self.limits.max_total_bytes} bytes"
                )
            sink(chunk)


def _stage_file(target: Path) -> IO[bytes]:
    """A new private file in the (flat) staging folder; never follows or replaces anything."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(target, flags, 0o600)
    fix_new_file_mode(fd)  # 0600 whatever the umask: it becomes a store file (S2.6)
    return os.fdopen(fd, "wb")


def _read_member(member: _Member, where: MemberPath, budget: _Budget, staged: Path | None
                 ) -> BundleFile:
    """Hash (and stage) one file; an active fact's bytes are kept for the merge."""
    digest = hashlib.sha256()
    kept: list[bytes] = []
    keep = where.kind == "fact"
    out = _stage_file(staged) if staged is not None else None

    def sink(chunk: bytes) -> None:
        digest.update(chunk)
        if keep:
            kept.append(chunk)
        if out is not None:
            out.write(chunk)

    try:
        with member.open() as handle:
            size = budget.read(member.name, handle, budget.limits.max_file_bytes, sink)
    finally:
        if out is not None:
            out.close()
    return BundleFile(member.name, where, size, digest.hexdigest(),
                      staged=staged,
                      data=b"".join(kept) if keep else None)


def read_bundle(
    path: Path,
    *,
    staging: Path | None = None,
    limits: Limits = DEFAULT_LIMITS,
    check: Callable[[], None] = lambda: None,
    progress: Callable[[int, str], None] = lambda _n, _w: None,
) -> Bundle:
    """Validate ``path``; with ``staging``, its files are written there for a restore."""
    budget = _Budget(limits)
    seen: set[str] = set()
    files: dict[str, BundleFile] = {}
    manifest_bytes: bytes | None = None
    for number, member in enumerate(_members(path, limits)):
        check()
        name = member.name
        if name in seen:
            raise BundleRefused(f"{name!r}: appears twice in the bundle")
        seen.add(name)
        if member.kind.startswith("refused"):
            raise BundleRefused(f"{name!r}: {member.kind.removeprefix('refused: ')}")
        if member.kind == "dir":
            if not is_directory_path(name):
                raise BundleRefused(f"{name!r}: not a path of the bundle layout")
            continue
        if name == MANIFEST:
            chunks: list[bytes] = []
            with member.open() as handle:
                budget.read(name, handle, limits.max_manifest_bytes, chunks.append)
            manifest_bytes = b"".join(chunks)
            continue
        where = classify(name)
        if where is None:
            raise BundleRefused(f"{name!r}: not a path of the bundle layout")
        # Staged flat, by number: no folder per fact id to create and remove again.
        staged = staging / f"{len(files):08d}.staged" if staging is not None else None
        files[name] = _read_member(member, where, budget, staged)
        progress(number + 1, name)
    if manifest_bytes is None:
        raise BundleRefused("the bundle has no manifest.json")
    manifest = _check_manifest(manifest_bytes, files, limits)
    return Bundle(manifest, files)


def _check_manifest(raw: bytes, files: dict[str, BundleFile], limits: Limits) -> dict[str, Any]:
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BundleRefused(f"manifest.json is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleRefused("manifest.json does not describe a Context Center bundle")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BundleRefused("manifest.json has no valid format_version")
    if version > FORMAT_VERSION:
        raise BundleRefused(f"bundle format {version} is newer than this version reads")
    entries = manifest.get("files")
    if not isinstance(entries, list) or len(entries) > limits.max_members:
        raise BundleRefused("manifest.json has no valid file list")
    listed: set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict):
            raise BundleRefused("manifest.json has a malformed file entry")
        name, size, sha = entry.get("path"), entry.get("size"), entry.get("sha256")
        mtime = entry.get("mtime_ns")
        if not isinstance(name, str) or not isinstance(size, int) or not isinstance(sha, str):
            raise BundleRefused("manifest.json has a malformed file entry")
        if mtime is not None and (not isinstance(mtime, int) or isinstance(mtime, bool)):
            raise BundleRefused(f"manifest.json: bad mtime_ns for {name!r}")
        if name in listed:
            raise BundleRefused(f"manifest.json lists {name!r} twice")
        listed.add(name)
        found = files.get(name)
        if found is None:
            raise BundleRefused(f"manifest.json lists {name!r}, which the bundle does not hold")
        if found.size != size or found.sha256 != sha.lower():
            raise BundleRefused(f"{name!r} does not match manifest.json (size or sha256)")
        found.mtime_ns = mtime
    extra = sorted(set(files) - listed)
    if extra:
        raise BundleRefused(f"{extra[0]!r} is in the bundle but not in manifest.json")
    return manifest
