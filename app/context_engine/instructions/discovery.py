"""Which directories and file names govern a target (S6.1, S6.2): the root → target chain."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from .model import (
    DOCUMENT_SYMLINK_ESCAPE,
    DOCUMENT_UNREADABLE,
    LOCAL_NAMES,
    NORMAL_NAMES,
    TARGET_OUTSIDE_WORKSPACE,
    InstructionDiagnostic,
)
from .opener import Failure, Opener


class ChainDir(NamedTuple):
    """One directory of the chain, held open by fd for the whole resolution."""

    rel: tuple[str, ...]
    path: Path
    fd: int
    real: str | None

    @property
    def label(self) -> str:
        """``workspace`` or ``workspace/<rel>`` (S6.7)."""
        return "/".join(("workspace", *self.rel))


def candidate_names(*, include_local: bool) -> tuple[tuple[str, bool], ...]:
    """File names to try in one directory, in load order, each with its ``local`` flag."""
    names = tuple((name, False) for name in NORMAL_NAMES)
    if include_local:
        names += tuple((name, True) for name in LOCAL_NAMES)
    return names


def target_parts(
    root: Path, target: Path | None, diagnostics: list[InstructionDiagnostic]
) -> tuple[tuple[str, ...], Path]:
    """The target's components below ``root`` (lexically, then by real path) and the target
    actually used; a target outside the root gives ``target_outside_workspace`` and the root."""
    if target is None:
        return (), root
    absolute = Path(os.path.abspath(target))
    roots = (root, Path(os.path.realpath(root)))
    for candidate in (absolute, Path(os.path.realpath(absolute))):
        for base in roots:
            try:
                rel = candidate.relative_to(base)
            except ValueError:
                continue
            return rel.parts, root.joinpath(*rel.parts)
    diagnostics.append(
        InstructionDiagnostic(
            TARGET_OUTSIDE_WORKSPACE,
            None,
            None,
            str(absolute),
            "target is outside the workspace root; the root is used instead",
        )
    )
    return (), root


def open_chain(
    opener: Opener,
    root: Path,
    root_fd: int,
    root_real: str | None,
    parts: tuple[str, ...],
    diagnostics: list[InstructionDiagnostic],
) -> list[ChainDir]:
    """Open root, then each directory down to the target, never leaving the root.

    The walk stops quietly at a component that does not exist or is a file (the target may be
    a file or not yet exist) and with a diagnostic at one that escapes or cannot be opened.
    """
    chain = [ChainDir((), root, root_fd, root_real)]
    for name in parts:
        parent = chain[-1]
        fd = opener.open_dir(parent.fd, root_real, name)
        rel = (*parent.rel, name)
        if isinstance(fd, Failure):
            if fd.kind == "escape":
                diagnostics.append(
                    InstructionDiagnostic(
                        DOCUMENT_SYMLINK_ESCAPE,
                        None,
                        None,
                        str(root.joinpath(*rel)),
                        "directory is a symlink out of the workspace root; "
                        "instructions below it are not read",
                    )
                )
            elif fd.kind != "missing":
                diagnostics.append(
                    InstructionDiagnostic(
                        DOCUMENT_UNREADABLE, None, None, str(root.joinpath(*rel)), fd.message
                    )
                )
            break
        real = opener.real_path(fd)
        chain.append(ChainDir(rel, root.joinpath(*rel), fd, real))
    return chain
