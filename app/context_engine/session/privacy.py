"""Provider-visible text hygiene (S7.4): no store, workspace or home path ever leaves the engine.

``Scrubber.__call__`` is the one scrub every provider-visible string goes through, on the raw
text and before any HTML escaping (an escaped path no longer matches its raw spelling, and the
``/home/<user>`` fallback would then cut a home like ``/home/al ice`` at the space). Known
directories are matched first in every spelling they may take: as given, resolved through
symlinks, with a trailing separator dropped, with either separator, and in NFC and NFD; the
OS user's home is taken from ``$HOME`` and the password database. The generic home patterns
come last, for homes the engine does not know.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path

from ..paths import EnginePaths, redact_home

WORKSPACE_TOKEN = "<workspace>"
HOME_TOKEN = "<local-home>"

Clean = Callable[[str], str]

_HTML = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("'", "&#39;"), ('"', "&#34;"))


def _escaped_forms(text: str) -> set[str]:
    """``text`` as our two HTML escapes write it (S8.9 with quotes, notes without)."""
    full = quoteless = text
    for raw, entity in _HTML:
        full = full.replace(raw, entity)
        if raw not in "'\"":
            quoteless = quoteless.replace(raw, entity)
    return {full, quoteless} - {text}


def _spellings(path: str | Path) -> list[str]:
    """Every way a directory may be spelled in text (longest first)."""
    out: set[str] = set()
    raw = os.fspath(path)
    candidates = {raw}
    with contextlib.suppress(OSError, ValueError):
        candidates.add(os.path.realpath(raw))
    for candidate in candidates:
        cleaned = candidate.rstrip("/\\")
        if len(cleaned) <= 1:
            continue
        # Titles and descriptions are stored with whitespace runs collapsed: that spelling too.
        collapsed = re.sub(r"\s+", " ", cleaned)
        for form in (cleaned, cleaned.replace("\\", "/"), collapsed, collapsed.replace("\\", "/")):
            out.update(
                (form, unicodedata.normalize("NFC", form), unicodedata.normalize("NFD", form))
            )
    # Longest first so a nested directory is replaced before its parent.
    return sorted(out, key=len, reverse=True)


@functools.lru_cache(maxsize=4)
def _passwd_home(uid: int) -> str | None:
    """The home the password database gives ``uid`` (read once per process and uid: the
    lookup reads the database, ~0.1 ms, and every recall without an engine asked for it)."""
    try:
        import pwd

        return pwd.getpwuid(uid).pw_dir
    except (ImportError, KeyError, OSError):
        return None


def os_homes() -> list[str]:
    """The OS user's home as ``$HOME`` says (raw, trailing slash kept) and as passwd says."""
    homes = []
    env = os.environ.get("HOME")
    if env:
        homes.append(env)
    passwd = _passwd_home(os.getuid())
    if passwd is not None:
        homes.append(passwd)
    with contextlib.suppress(RuntimeError):
        homes.append(str(Path.home()))
    return homes


class Scrubber:
    """Replaces the absolute directories of one engine with neutral tokens in outgoing text."""

    def __init__(self, replacements: Iterable[tuple[str, str]]) -> None:
        pairs = set(replacements)
        # The escaped spellings too (a last line of defence for text escaped elsewhere): the
        # token is escaped the same way so the surrounding escaped text stays well-formed.
        for needle, token in list(pairs):
            for form in _escaped_forms(needle):
                pairs.add((form, token.replace("<", "&lt;").replace(">", "&gt;")))
        ordered = sorted(pairs, key=lambda pair: len(pair[0]), reverse=True)
        self._tokens = dict(ordered)
        alternation = "|".join(re.escape(needle) for needle, _ in ordered)
        # Not followed by a word character: "/h" never eats into "/home", while "/tmp/ws.",
        # "/tmp/ws-old" and "/tmp/ws/x" are all caught (over-replacing is the safe side).
        self._pattern = re.compile(f"(?:{alternation})(?!\\w)") if ordered else None

    @classmethod
    def for_paths(cls, paths: EnginePaths) -> Scrubber:
        """Scrub the workspace, its root, the state root, the home and the OS user's home."""
        pairs: list[tuple[str, str]] = []
        for directory in (paths.workspace, paths.root):
            pairs += [(text, WORKSPACE_TOKEN) for text in _spellings(directory)]
        homes: list[str | Path] = [paths.state, paths.home, *os_homes()]
        for home in homes:
            pairs += [(text, HOME_TOKEN) for text in _spellings(home)]
        return cls(pairs)

    @classmethod
    def for_os_home(cls) -> Scrubber:
        """Scrub only the OS user's home (for text cut before an engine is known)."""
        return _os_home_scrubber(tuple(os_homes()))

    def __call__(self, text: str) -> str:
        """The text with every known absolute directory, then any home prefix, replaced."""
        if self._pattern is not None:
            text = self._pattern.sub(lambda match: self._tokens[match.group(0)], text)
        return redact_home(text)


@functools.lru_cache(maxsize=8)
def _os_home_scrubber(homes: tuple[str, ...]) -> Scrubber:
    return Scrubber((text, HOME_TOKEN) for home in homes for text in _spellings(home))


def default_clean(text: str) -> str:
    """The scrub to use when no engine's scrubber was handed in: the OS home, then patterns."""
    return Scrubber.for_os_home()(text)
