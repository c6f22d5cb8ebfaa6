"""The bundle: a tar (or zip) of both stores' files with ``manifest.json`` (SPEC S15.3).

Members, and nothing else:

* ``manifest.json`` — format, versions, per-scope counts, and every file with size, sha256 and
  mtime (``mtime_ns``), so a restore can prove it got exactly what was exported;
* ``<scope>/<name>.md`` — active facts; ``<scope>/MEMORY.md`` — the index as it was;
* ``<scope>/.archive/<entry>.md`` — archive entries;
* ``<scope>/.revisions/<id>/<revision>.md`` — revision snapshots,

where ``<scope>`` is ``project`` or ``global``. A reader accepts only that layout (plus
directory entries on its paths), only regular files, each name once, within ``Limits``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..facts.decoding import MAX_FACT_BYTES
from ..facts.ids import ID_PATTERN
from ..facts.store import ARCHIVE_DIR, INDEX_NAME, REVISIONS_DIR

FORMAT = "context-center-bundle"
FORMAT_VERSION = 1
STORE_FORMAT = "reasonix-memory-v2"
MANIFEST = "manifest.json"
SCOPE_NAMES = ("project", "global")

_NAME = r"[^/\\\x00-\x1f.][^/\\\x00-\x1f]{0,250}\.md"
_MEMBER = re.compile(
    rf"(?P<scope>project|global)/(?:"
    rf"(?P<index>{re.escape(INDEX_NAME)})"
    rf"|\{ARCHIVE_DIR}/(?P<archive>{_NAME})"
    rf"|\{REVISIONS_DIR}/(?P<rid>{ID_PATTERN.pattern})/(?P<rev>[0-9]{{1,18}})\.md"
    rf"|(?P<fact>{_NAME})"
    rf")"
)
_DIRECTORY = re.compile(
    rf"(?:project|global)(?:/\{ARCHIVE_DIR}|/\{REVISIONS_DIR}(?:/{ID_PATTERN.pattern})?)?/?"
)


@dataclass(frozen=True, slots=True)
class Limits:
    """What a bundle may hold; anything beyond is refused before it is written anywhere."""

    max_members: int = 200_000
    max_file_bytes: int = MAX_FACT_BYTES
    max_total_bytes: int = 2 * 1024**3
    max_manifest_bytes: int = 32 * 1024**2


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class MemberPath:
    """A valid member path split into scope, kind and the path inside the store."""

    scope: str
    kind: str  # fact | index | archive | revision
    relative: str  # inside the store, e.g. ``.revisions/mem-…/000000001.md``
    fact_id: str = ""


def classify(name: str) -> MemberPath | None:
    """The member a bundle path names, or None when it is not part of the layout."""
    match = _MEMBER.fullmatch(name)
    if match is None or ".." in name.split("/"):
        return None
    scope = match.group("scope")
    relative = name[len(scope) + 1 :]
    if match.group("index"):
        return MemberPath(scope, "index", relative)
    if match.group("archive"):
        return MemberPath(scope, "archive", relative)
    if match.group("rid"):
        if ".." in match.group("rid"):
            return None
        return MemberPath(scope, "revision", relative, match.group("rid"))
    return MemberPath(scope, "fact", relative)


def is_directory_path(name: str) -> bool:
    """True for the directory entries some tools add (``project/``, ``global/.archive/`` …)."""
    return _DIRECTORY.fullmatch(name) is not None and ".." not in name
