"""Immutable values of one instruction resolution (S6): documents, imports, diagnostics."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, NamedTuple

from ..records import record

InstructionScope = Literal["user", "workspace"]

NORMAL_NAMES: tuple[str, ...] = ("REASONIX.md", "AGENTS.md", "CLAUDE.md")
LOCAL_NAMES: tuple[str, ...] = ("REASONIX.local.md", "AGENTS.local.md", "CLAUDE.local.md")

MAX_IMPORT_DEPTH = 5
# Above this many characters of instruction text a person should know what every request
# carries (Claude Code warns about a CLAUDE.md past 40k characters too).
LARGE_BLOCK_CHARS = 40_000

# Diagnostic codes. The S6.5 set first, then our own extras (docs/decisions.md).
TARGET_OUTSIDE_WORKSPACE = "target_outside_workspace"
IMPORT_OUTSIDE_SOURCE = "import_outside_source"
IMPORT_SYMLINK_ESCAPE = "import_symlink_escape"
IMPORT_UNREADABLE = "import_unreadable"
IMPORT_CYCLE = "import_cycle"
IMPORT_DEPTH_EXCEEDED = "import_depth_exceeded"
DOCUMENT_SYMLINK_ESCAPE = "document_symlink_escape"
IMPORT_INVALID_PATH = "import_invalid_path"
DOCUMENT_UNREADABLE = "document_unreadable"
DOCUMENT_DUPLICATE = "document_duplicate"
# Informational (local only): an import of a document loaded on its own (S6.3), an inline
# ``@path`` that names an existing file (S6.4), a large instruction block, an ``@`` line that
# looks like a mention and names no file.
IMPORT_ALREADY_LOADED = "import_already_loaded"
IMPORT_NOT_OWN_LINE = "import_not_own_line"
INSTRUCTIONS_LARGE = "instructions_large"
IMPORT_MENTION = "import_not_a_file"
# Codes that report, rather than refuse: nothing was lost.
INFO_CODES: frozenset[str] = frozenset(
    {
        DOCUMENT_DUPLICATE,
        IMPORT_ALREADY_LOADED,
        IMPORT_NOT_OWN_LINE,
        INSTRUCTIONS_LARGE,
        IMPORT_MENTION,
    }
)
WORKSPACE_UNREADABLE = "workspace_unreadable"
RESOLVER_ERROR = "resolver_error"


class WatchStamp(NamedTuple):
    """An instruction file as read: its identity, when it was read, and a digest of its bytes.

    ``ctime_ns`` is in the identity because an in-place same-size edit with the mtime put back
    (editors, ``touch -r``) changes nothing else; ``read_ns`` and ``digest`` apply git's racy
    rule, as the fact listings do (``facts/stat_listing.RACY_NS``).
    """

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int
    read_ns: int  # taken before the ``fstat``: a later change is never older than this
    digest: bytes


@record
class ImportRecord:
    """One expanded import: the file it loaded, the file and 1-based line that asked for it."""

    path: Path
    source: Path
    line: int


@record
class InstructionDiagnostic:
    """A local-only problem report (S6.6); ``path`` is the import text as written or a file."""

    code: str
    source: Path | None
    line: int | None
    path: str
    message: str


@record
class InstructionDocument:
    """One loaded top-level instruction file with its imports expanded."""

    order: int
    scope: InstructionScope
    label: str
    path: Path
    directory: Path
    dir_label: str
    local: bool
    body: str
    raw: str
    imports: tuple[ImportRecord, ...]


@record
class Resolution:
    """Documents in precedence order (low → high), diagnostics, and every file probed.

    ``watched`` pairs each path read with the stamp of the opened file, and each candidate
    instruction file that was absent with ``None``: enough to notice an edit later
    (:func:`context_engine.instructions.changed_paths`).
    """

    root: Path
    target: Path
    documents: tuple[InstructionDocument, ...]
    diagnostics: tuple[InstructionDiagnostic, ...]
    watched: tuple[tuple[Path, WatchStamp | None], ...] = ()
    home: Path | None = None
