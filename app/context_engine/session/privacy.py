"""Provider-visible text hygiene (S7.4): no store, workspace or home path ever leaves the engine."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from ..paths import EnginePaths, redact_home

WORKSPACE_TOKEN = "<workspace>"
HOME_TOKEN = "<local-home>"


def _spellings(path: Path) -> list[str]:
    """Every way a directory may be spelled in text: as given, resolved, with either separator."""
    out: set[str] = set()
    for candidate in (str(path), os.path.realpath(path)):
        cleaned = candidate.rstrip("/\\")
        if len(cleaned) > 1:
            out.add(cleaned)
            out.add(cleaned.replace("\\", "/"))
    # Longest first so a nested directory is replaced before its parent.
    return sorted(out, key=len, reverse=True)


class Scrubber:
    """Replaces the absolute directories of one engine with neutral tokens in outgoing text."""

    def __init__(self, replacements: Iterable[tuple[str, str]]) -> None:
        pairs = sorted(set(replacements), key=lambda pair: len(pair[0]), reverse=True)
        self._tokens = dict(pairs)
        alternation = "|".join(re.escape(needle) for needle, _ in pairs)
        # Not followed by a word character: "/h" never eats into "/home", while "/tmp/ws.",
        # "/tmp/ws-old" and "/tmp/ws/x" are all caught (over-replacing is the safe side).
        self._pattern = re.compile(f"(?:{alternation})(?!\\w)") if pairs else None

    @classmethod
    def for_paths(cls, paths: EnginePaths) -> Scrubber:
        """Scrub the workspace, its root, the state root, the home and the user's home dir."""
        pairs: list[tuple[str, str]] = []
        for directory in (paths.workspace, paths.root):
            pairs += [(text, WORKSPACE_TOKEN) for text in _spellings(directory)]
        for directory in (paths.state, paths.home, Path.home()):
            pairs += [(text, HOME_TOKEN) for text in _spellings(directory)]
        return cls(pairs)

    def __call__(self, text: str) -> str:
        """The text with every known absolute directory and home prefix replaced."""
        if self._pattern is not None:
            text = self._pattern.sub(lambda match: self._tokens[match.group(0)], text)
        return redact_home(text)
