"""Resolve the instruction documents for a target: load, expand imports, dedupe (S6.2–S6.5).

Imports expand depth-first in document order. Cycles and repeated imports are recognised by
the ``(st_dev, st_ino)`` of the file actually opened, never by path strings, so symlink and
hard-link aliases and case or normalisation twins are all caught. The resolver never raises.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ..paths import EnginePaths
from .discovery import ChainDir, candidate_names, open_chain, target_parts
from .import_lines import (
    FenceTracker,
    LexicalError,
    check_import_path,
    import_target,
    inline_mentions,
    is_mention,
)
from .model import (
    DOCUMENT_DUPLICATE,
    DOCUMENT_SYMLINK_ESCAPE,
    DOCUMENT_UNREADABLE,
    IMPORT_ALREADY_LOADED,
    IMPORT_CYCLE,
    IMPORT_DEPTH_EXCEEDED,
    IMPORT_MENTION,
    IMPORT_NOT_OWN_LINE,
    IMPORT_SYMLINK_ESCAPE,
    IMPORT_UNREADABLE,
    INSTRUCTIONS_LARGE,
    LARGE_BLOCK_CHARS,
    MAX_IMPORT_DEPTH,
    RESOLVER_ERROR,
    WORKSPACE_UNREADABLE,
    ImportRecord,
    InstructionDiagnostic,
    InstructionDocument,
    InstructionScope,
    Resolution,
    WatchStamp,
)
from .opener import FileSystem, Opened, Opener

Identity = tuple[int, int]
DUPLICATE_NOTE = "<!-- skipped: duplicate import -->"
CYCLE_NOTE = "<!-- skipped: import cycle -->"


def already_loaded_note(label: str) -> str:
    """The note that replaces an import of a document loaded on its own (S6.3)."""
    return f"<!-- skipped: already loaded as {label} -->"


def rejected_note(code: str) -> str:
    """The note appended to a rejected import line (S6.5)."""
    return f"<!-- rejected: {code} -->"


class _Boundary(NamedTuple):
    """The directory that owns a top-level document: imports stay inside it (S6.4)."""

    path: Path
    fd: int
    real: str | None


class _Expansion:
    """Per-document state of one expansion.

    A plain class, as ``_Loader``: every hook process resolves instructions, and defining a
    dataclass costs it ~0.5 ms.
    """

    __slots__ = ("boundary", "diagnostics", "expanded", "imports", "loaded", "opener", "stack",
                 "watched")

    def __init__(
        self,
        boundary: _Boundary,
        opener: Opener,
        diagnostics: list[InstructionDiagnostic],
        watched: list[tuple[Path, WatchStamp | None]],
        loaded: dict[Identity, str] | None = None,
    ) -> None:
        self.boundary = boundary
        self.opener = opener
        self.diagnostics = diagnostics
        self.watched = watched
        self.imports: list[ImportRecord] = []
        self.expanded: set[Identity] = set()
        self.stack: list[Identity] = []
        self.loaded: dict[Identity, str] = {} if loaded is None else loaded  # documents: label

    def diagnose(self, code: str, source: Path, line: int, path: str, message: str) -> None:
        self.diagnostics.append(InstructionDiagnostic(code, source, line, path, message))

    def expand(self, text: str, base: tuple[str, ...], depth: int, source: Path) -> str:
        """Expand every import line of ``text`` (a file at ``depth`` whose directory is
        ``base`` below the boundary)."""
        pieces = text.split("\n")
        fence = FenceTracker()
        for index, piece in enumerate(pieces):
            if fence.feed(piece):
                continue
            written = import_target(piece)
            if written is not None:
                pieces[index] = self._expand_line(piece, written, base, depth, source, index + 1)
            elif "@" in piece:
                self._note_inline(piece, base, source, index + 1)
        return "\n".join(pieces)

    def _note_inline(self, piece: str, base: tuple[str, ...], source: Path, line: int) -> None:
        """S6.4: an ``@path`` inside a sentence or list item is text; say so when it names a
        file, since the writer probably meant an import (Claude Code's inline style)."""
        for written in inline_mentions(piece):
            parts = check_import_path(written, base)
            if isinstance(parts, LexicalError) or not parts:
                continue
            if self.opener.is_file(self.boundary.fd, self.boundary.real, parts):
                message = (
                    f"@{written} is not alone on its line, so it is text, not an import; "
                    "put it on a line of its own to import the file"
                )
                self.diagnose(IMPORT_NOT_OWN_LINE, source, line, written, message)

    def _expand_line(
        self, piece: str, written: str, base: tuple[str, ...], depth: int, source: Path, line: int
    ) -> str:
        cr = "\r" if piece.endswith("\r") else ""
        kept = piece[:-1] if cr else piece
        if depth >= MAX_IMPORT_DEPTH:
            message = f"import is more than {MAX_IMPORT_DEPTH} levels below the top-level document"
            self.diagnose(IMPORT_DEPTH_EXCEEDED, source, line, written, message)
            return f"{kept} {rejected_note(IMPORT_DEPTH_EXCEEDED)}{cr}"
        parts = check_import_path(written, base)
        if isinstance(parts, LexicalError):
            self.diagnose(parts.code, source, line, written, parts.message)
            return f"{kept} {rejected_note(parts.code)}{cr}"
        opened = self.opener.read_file(self.boundary.fd, self.boundary.real, parts)
        if not isinstance(opened, Opened):
            # Watched as absent: the import expands once the file appears (an engine keeps a
            # resolution while nothing it looked at changed, ``engine.instructions``).
            self.watched.append((self.boundary.path.joinpath(*parts), None))
        if not isinstance(opened, Opened) and opened.kind == "missing" and is_mention(written):
            message = f"@{written} names no file and looks like a mention; kept as text"
            self.diagnose(IMPORT_MENTION, source, line, written, message)
            return piece
        if not isinstance(opened, Opened):
            code = IMPORT_SYMLINK_ESCAPE if opened.kind == "escape" else IMPORT_UNREADABLE
            self.diagnose(code, source, line, written, opened.message.replace("target", "import"))
            return f"{kept} {rejected_note(code)}{cr}"
        identity = (opened.stamp.device, opened.stamp.inode)
        if identity in self.stack:
            self.diagnose(IMPORT_CYCLE, source, line, written, "import cycle: file is already open")
            return f"{kept} {CYCLE_NOTE}{cr}"
        if identity in self.expanded:
            return f"{DUPLICATE_NOTE}{cr}"
        label = self.loaded.get(identity)
        if label is not None:
            # S6.3: an instruction document of this resolution keeps its own place and is
            # sent once (the common CLAUDE.md = "@AGENTS.md").
            message = f"import is the instruction document {label}, already loaded; not repeated"
            self.diagnose(IMPORT_ALREADY_LOADED, source, line, written, message)
            return f"{already_loaded_note(label)}{cr}"
        target = self.boundary.path.joinpath(*parts)
        self.watched.append((target, opened.stamp))
        self.expanded.add(identity)
        self.imports.append(ImportRecord(target, source, line))
        self.stack.append(identity)
        inner = self.expand(opened.text, parts[:-1], depth + 1, target)
        self.stack.pop()
        if not inner.endswith("\n"):
            inner += "\n"
        import html  # only documents with imports need it; not every hook turn's import path

        rel = html.escape("/".join(parts), quote=True)
        return f'<instruction-import path="{rel}">\n{inner}</instruction-import>{cr}'


class _Pending(NamedTuple):
    """A top-level document read in phase one, expanded in phase two."""

    scope: InstructionScope
    boundary: _Boundary
    name: str
    local: bool
    label: str
    dir_label: str
    opened: Opened


class _Loader:
    """Loads top-level documents for one resolution.

    Phase one reads every instruction file of the chain; phase two expands imports, so an
    import of any document of this resolution — earlier or later in the order — is known to
    be one (S6.3). Every directory fd stays open until phase two is done.
    """

    __slots__ = ("diagnostics", "documents", "opener", "pending", "watched")

    def __init__(self, opener: Opener) -> None:
        self.opener = opener
        self.diagnostics: list[InstructionDiagnostic] = []
        self.watched: list[tuple[Path, WatchStamp | None]] = []
        self.documents: list[InstructionDocument] = []
        # Phase one's documents and diagnostics in reading order, so phase two reports every
        # diagnostic in the order the files come (as a one-pass walk would).
        self.pending: list[_Pending | InstructionDiagnostic] = []

    def load_dir(
        self,
        scope: InstructionScope,
        boundary: _Boundary,
        confine_real: str | None,
        label_prefix: str,
        dir_label: str,
        include_local: bool,
    ) -> None:
        """Read each instruction file of one directory, in S6.1 order (phase one)."""
        for name, local in candidate_names(include_local=include_local):
            path = boundary.path / name
            opened = self.opener.read_file(boundary.fd, confine_real, (name,))
            if not isinstance(opened, Opened):
                self.watched.append((path, None))
                if opened.kind == "escape":
                    self._diagnose(DOCUMENT_SYMLINK_ESCAPE, path, _escape_message(scope))
                elif opened.kind == "unreadable":
                    message = opened.message.replace("target", "instruction file")
                    self._diagnose(DOCUMENT_UNREADABLE, path, message)
                continue
            self.watched.append((path, opened.stamp))
            label = f"{label_prefix}/{name}"
            self.pending.append(_Pending(scope, boundary, name, local, label, dir_label, opened))

    def defer(self, diagnostics: list[InstructionDiagnostic]) -> None:
        """Queue diagnostics found while reading, to be reported in order in phase two."""
        self.pending.extend(diagnostics)
        diagnostics.clear()

    def expand_all(self) -> None:
        """Expand the imports of every document read (phase two)."""
        loaded: dict[Identity, str] = {}
        for item in self.pending:
            if isinstance(item, _Pending):
                stamp = item.opened.stamp
                loaded.setdefault((stamp.device, stamp.inode), item.label)
        for item in self.pending:
            if isinstance(item, InstructionDiagnostic):
                self.diagnostics.append(item)
                continue
            boundary, opened = item.boundary, item.opened
            path = boundary.path / item.name
            expansion = _Expansion(
                boundary, self.opener, self.diagnostics, self.watched, loaded=loaded
            )
            identity = (opened.stamp.device, opened.stamp.inode)
            expansion.stack.append(identity)
            expansion.expanded.add(identity)
            body = expansion.expand(opened.text, (), 0, path)
            self.documents.append(
                InstructionDocument(
                    order=0,
                    scope=item.scope,
                    label=item.label,
                    path=path,
                    directory=boundary.path,
                    dir_label=item.dir_label,
                    local=item.local,
                    body=body,
                    raw=opened.text,
                    imports=tuple(expansion.imports),
                )
            )
        self.pending.clear()

    def _diagnose(self, code: str, path: Path, message: str) -> None:
        self.pending.append(InstructionDiagnostic(code, path, None, str(path), message))


def _escape_message(scope: InstructionScope) -> str:
    where = "the home directory" if scope == "user" else "the workspace root"
    return f"instruction file is a symlink out of {where}; not loaded"


def _dedupe(
    documents: list[InstructionDocument], diagnostics: list[InstructionDiagnostic]
) -> tuple[InstructionDocument, ...]:
    """Keep one document per byte-identical expanded body, at its most specific source (S6.3)."""
    kept: list[InstructionDocument] = []
    dropped: list[InstructionDiagnostic] = []
    seen: dict[str, InstructionDocument] = {}
    for doc in reversed(documents):
        winner = seen.get(doc.body)
        if winner is not None:
            dropped.append(
                InstructionDiagnostic(
                    DOCUMENT_DUPLICATE,
                    doc.path,
                    None,
                    str(doc.path),
                    f"same expanded body as {winner.label}; shown once, at the more specific "
                    "source",
                )
            )
            continue
        seen[doc.body] = doc
        kept.append(doc)
    kept.reverse()
    diagnostics.extend(reversed(dropped))
    return tuple(
        InstructionDocument(
            order=index,
            scope=doc.scope,
            label=doc.label,
            path=doc.path,
            directory=doc.directory,
            dir_label=doc.dir_label,
            local=doc.local,
            body=doc.body,
            raw=doc.raw,
            imports=doc.imports,
        )
        for index, doc in enumerate(kept, start=1)
    )


def _load_user(loader: _Loader, home: Path, held: list[int]) -> None:
    fd = loader.opener.open_root(str(home))
    if not isinstance(fd, int):
        names = candidate_names(include_local=False)
        loader.watched.extend((home / name, None) for name, _ in names)
        return
    held.append(fd)
    real = loader.opener.real_path(fd)
    boundary = _Boundary(home, fd, real)
    loader.load_dir("user", boundary, real, "user", "user", include_local=False)


def _load_workspace(
    loader: _Loader, root: Path, parts: tuple[str, ...], held: list[int]
) -> None:
    root_fd = loader.opener.open_root(str(root))
    if not isinstance(root_fd, int):
        loader.diagnostics.append(
            InstructionDiagnostic(
                WORKSPACE_UNREADABLE,
                None,
                None,
                str(root),
                root_fd.message.replace("directory", "workspace root"),
            )
        )
        return
    held.append(root_fd)
    root_real = loader.opener.real_path(root_fd)
    found: list[InstructionDiagnostic] = []
    chain: list[ChainDir] = open_chain(loader.opener, root, root_fd, root_real, parts, found)
    if len(chain) <= len(parts):  # the walk stopped: where it stopped is watched as absent
        loader.watched.append((root.joinpath(*parts[: len(chain)]), None))
    held.extend(directory.fd for directory in chain[1:])
    loader.defer(found)
    for directory in chain:
        boundary = _Boundary(directory.path, directory.fd, directory.real)
        prefix = "/".join(("workspace", *directory.rel))
        loader.load_dir(
            "workspace", boundary, root_real, prefix, directory.label, include_local=True
        )


def resolve_instructions(
    paths: EnginePaths, target: Path | None = None, *, fs: FileSystem | None = None
) -> Resolution:
    """Resolve the standing instructions that govern ``target`` (default: the workspace)."""
    try:
        return _resolve(paths, target, fs)
    except Exception as exc:  # the resolver never raises (S14.1): report, load nothing
        diagnostic = InstructionDiagnostic(
            RESOLVER_ERROR, None, None, str(paths.root), f"instructions not resolved: {exc!r}"
        )
        return Resolution(paths.root, paths.root, (), (diagnostic,), ())


def _resolve(paths: EnginePaths, target: Path | None, fs: FileSystem | None) -> Resolution:
    opener = Opener(fs)
    loader = _Loader(opener)
    root = paths.root
    wanted = target if target is not None else paths.workspace
    parts, used = target_parts(root, wanted, loader.diagnostics)
    held: list[int] = []
    try:
        _load_user(loader, paths.home, held)
        _load_workspace(loader, root, parts, held)
        loader.expand_all()
    finally:
        for fd in reversed(held):
            opener.fs.close(fd)
    documents = _dedupe(loader.documents, loader.diagnostics)
    _warn_if_large(documents, loader.diagnostics, root)
    return Resolution(
        root=root,
        target=used,
        documents=documents,
        diagnostics=tuple(loader.diagnostics),
        watched=tuple(loader.watched),
        home=paths.home,
    )


def _warn_if_large(
    documents: tuple[InstructionDocument, ...],
    diagnostics: list[InstructionDiagnostic],
    root: Path,
) -> None:
    """A local note when the instructions sent with every request pass LARGE_BLOCK_CHARS."""
    total = sum(len(doc.body) for doc in documents)
    if total <= LARGE_BLOCK_CHARS:
        return
    biggest = max(documents, key=lambda doc: len(doc.body))
    message = (
        f"the instruction block is about {total:,} characters (~{total // 4:,} tokens), sent "
        f"with every request; the largest document is {biggest.label} ({len(biggest.body):,} "
        "characters with its imports)"
    )
    diagnostics.append(
        InstructionDiagnostic(INSTRUCTIONS_LARGE, biggest.path, None, str(root), message)
    )
