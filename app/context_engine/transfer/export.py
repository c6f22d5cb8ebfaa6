"""``context-engine export``: both stores (facts, revisions, archive) as one tar.gz bundle.

The stores are read under their locks, so no write of ours lands halfway through. Each file is
read once: its bytes are hashed as they go into the tar, and ``manifest.json`` (sizes, sha256,
mtimes, counts) is the last member. The bundle is written to a temp file beside ``out`` and
renamed at the end: a cancelled or failed export leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import secrets
import tarfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..facts.fs import FS, read_file, store_lock
from ..facts.store_files import KINDS, StoreFile, store_files
from ..paths import EnginePaths
from .bundle_format import FORMAT, FORMAT_VERSION, MANIFEST, STORE_FORMAT, classify
from .progress import ProgressFn, no_progress


@dataclass(frozen=True, slots=True)
class ExportReport:
    """Where the bundle went and what it holds (the manifest's counts)."""

    path: Path
    counts: dict[str, dict[str, int]]
    files: int
    bytes: int
    skipped: tuple[str, ...] = ()  # store files a bundle cannot name (the reader refuses them)


def engine_version() -> str:
    """This package's version, for the manifest."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("context-center")
    except PackageNotFoundError:
        return "0+unknown"


@contextmanager
def locked_stores(fs: FS, roots: Sequence[Path]) -> Iterator[None]:
    """The locks of the stores that exist (project first); a missing store is not created."""
    with ExitStack() as stack:
        for root in roots:
            if root.is_dir() and not root.is_symlink():
                stack.enter_context(store_lock(fs, root))
        yield


def _manifest(entries: list[dict[str, object]], files: list[StoreFile],
              scopes: Sequence[str]) -> tuple[bytes, dict[str, dict[str, int]]]:
    counts = {scope: dict.fromkeys(KINDS, 0) for scope in scopes}
    for item in files:
        counts[item.scope][item.kind] += 1
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "store_format": STORE_FORMAT,
        "engine": {"name": "context-center", "version": engine_version()},
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "scopes": list(scopes),
        "counts": counts,
        "files": entries,
    }
    return json.dumps(manifest, ensure_ascii=False, indent=1).encode("utf-8") + b"\n", counts


def _info(name: str, size: int, mtime: float) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = int(mtime)
    info.mode = 0o600
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def export_bundle(
    paths: EnginePaths,
    out: Path,
    *,
    scopes: Sequence[str] = ("project", "global"),
    progress: ProgressFn = no_progress,
    check: Callable[[], None] = lambda: None,
) -> ExportReport:
    """Write the bundle of ``scopes`` to ``out`` (replacing it only once complete)."""
    fs = FS()
    roots = [paths.store_dir(scope) for scope in scopes]
    out = out.absolute()
    temp = out.parent / f".{out.name}.{secrets.token_hex(4)}.partial"
    try:
        with locked_stores(fs, roots):
            found = [f for scope, root in zip(scopes, roots, strict=True)
                     for f in store_files(root, scope)]
            files: list[StoreFile] = []
            names_refused: list[str] = []
            for item in found:
                name = f"{item.scope}/{item.relative}"
                if classify(name) is None:
                    names_refused.append(name)
                else:
                    files.append(item)
            skipped = tuple(names_refused)
            entries: list[dict[str, object]] = []
            total = len(files)
            size = 0
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as raw, tarfile.open(
                fileobj=raw, mode="w:gz", format=tarfile.PAX_FORMAT, compresslevel=6
            ) as tar:
                for number, item in enumerate(files):
                    check()
                    data, st = read_file(fs, item.path)
                    name = f"{item.scope}/{item.relative}"
                    entries.append({"path": name, "size": len(data),
                                    "sha256": hashlib.sha256(data).hexdigest(),
                                    "mtime_ns": st.st_mtime_ns})
                    tar.addfile(_info(name, len(data), st.st_mtime), io.BytesIO(data))
                    size += len(data)
                    progress(number, total, item.relative)
                check()
                manifest, counts = _manifest(entries, files, scopes)
                # Last, so each file is read once; a reader checks every file against it.
                tar.addfile(_info(MANIFEST, len(manifest), datetime.now(UTC).timestamp()),
                            io.BytesIO(manifest))
                tar.close()
                raw.flush()
                os.fsync(raw.fileno())
            os.replace(temp, out)
    except BaseException:
        with suppress(OSError):
            os.unlink(temp)
        raise
    progress(total, total, "")
    return ExportReport(out, counts, len(files), size, skipped)
