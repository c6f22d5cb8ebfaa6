"""Import lines (S6.4) and their lexical checks, done before any disk access (RELIABILITY §2).

A line is an import when, trimmed of spaces and tabs, it is ``@<path>`` with no whitespace and
the path holds a ``/``, ``\\`` or ``.`` (or a look-alike of one, so a mistyped separator gets a
diagnostic instead of silently staying text). Lines inside fenced code blocks are text.
Paths are never URL-decoded and never NFKC-normalised.
"""

from __future__ import annotations

import re
import unicodedata

from ..records import record
from .model import IMPORT_INVALID_PATH, IMPORT_OUTSIDE_SOURCE

MAX_PATH_BYTES = 1024
MAX_COMPONENT_BYTES = 255

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_WHITESPACE = frozenset(" \t\n\r\x0b\x0c\x85")
_SEPARATORS = frozenset("/\\.")
# Characters that look like "." or "/" or "\" (fullwidth, ideographic, one-dot leader …).
_DOT_LOOKALIKES = frozenset("．。｡․‥…﹒")
_SLASH_LOOKALIKES = frozenset("／＼∕⁄⧸⧹﹨")
_LOOKALIKES = _DOT_LOOKALIKES | _SLASH_LOOKALIKES
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_DRIVE = re.compile(r"^[A-Za-z]:")
_WINDOWS_RESERVED_CHARS = frozenset('<>:"|?*')
_DEVICE_NAMES = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$", "clock$"}
    | {f"{base}{n}" for base in ("com", "lpt") for n in (*"0123456789", "¹", "²", "³")}
)
_GIT_SHORT_NAME = re.compile(r"^git~\d+$")


@record
class LexicalError:
    """Why an import path was refused without touching the disk."""

    code: str
    message: str


class FenceTracker:
    """CommonMark-style fenced code block state, fed one line at a time."""

    def __init__(self) -> None:
        self._char = ""
        self._length = 0

    def feed(self, line: str) -> bool:
        """Update the state with ``line``; return True when the line is code or a fence."""
        match = _FENCE.match(line)
        if self._char:
            if (
                match
                and match.group(1)[0] == self._char
                and len(match.group(1)) >= self._length
                and not match.group(2).strip()
            ):
                self._char, self._length = "", 0
            return True
        if match:
            fence, info = match.group(1), match.group(2)
            if fence[0] == "`" and "`" in info:
                return False
            self._char, self._length = fence[0], len(fence)
            return True
        return False


def _is_whitespace(ch: str) -> bool:
    return ch in _WHITESPACE or unicodedata.category(ch) in ("Zs", "Zl", "Zp")


def import_target(line: str) -> str | None:
    """The path text of an import line (without ``@``), or None when the line is text."""
    if "@" not in line:  # fast path: most lines of a document
        return None
    if line.endswith("\r"):
        line = line[:-1]
    stripped = line.strip(" \t")
    if len(stripped) < 2 or stripped[0] != "@":
        return None
    path = stripped[1:]
    if any(_is_whitespace(ch) for ch in path):
        return None
    if not any(ch in _SEPARATORS or ch in _LOOKALIKES for ch in path):
        return None
    return path


def _char_error(path: str) -> LexicalError | None:
    for ch in path:
        if ch == "\x00":
            return LexicalError(IMPORT_INVALID_PATH, "import path contains a NUL byte")
        category = unicodedata.category(ch)
        if category == "Cc":
            return LexicalError(
                IMPORT_INVALID_PATH, f"import path contains control character U+{ord(ch):04X}"
            )
        if category in ("Cf", "Cn", "Co", "Cs"):
            return LexicalError(
                IMPORT_INVALID_PATH,
                f"import path contains invisible or unassigned character U+{ord(ch):04X}",
            )
    return None


def _outside_error(path: str) -> LexicalError | None:
    if path.startswith("~"):
        return LexicalError(IMPORT_OUTSIDE_SOURCE, "import path starts with ~ (home directory)")
    if path.startswith(("/", "\\")):
        return LexicalError(IMPORT_OUTSIDE_SOURCE, "import path is absolute")
    if _DRIVE.match(path):
        return LexicalError(IMPORT_OUTSIDE_SOURCE, "import path names a drive (absolute)")
    return None


def _component_error(part: str) -> LexicalError | None:
    if len(part.encode("utf-8")) > MAX_COMPONENT_BYTES:
        return LexicalError(
            IMPORT_INVALID_PATH, f"import path component longer than {MAX_COMPONENT_BYTES} bytes"
        )
    if all(ch == "." or ch in _DOT_LOOKALIKES for ch in part) and any(
        ch in _DOT_LOOKALIKES for ch in part
    ):
        return LexicalError(IMPORT_INVALID_PATH, f"import path component {part!r} imitates . or ..")
    if any(ch in _LOOKALIKES for ch in part):
        return LexicalError(
            IMPORT_INVALID_PATH, f"import path component {part!r} holds a look-alike of . or /"
        )
    bad = sorted({ch for ch in part if ch in _WINDOWS_RESERVED_CHARS})
    if bad:
        return LexicalError(
            IMPORT_INVALID_PATH, f"import path holds a character not portable to Windows: {bad[0]}"
        )
    if part.endswith((".", " ")):
        return LexicalError(IMPORT_INVALID_PATH, "import path component ends with a dot or space")
    folded = unicodedata.normalize("NFC", part).casefold()
    stem = folded.split(".", 1)[0].rstrip(" ")
    if stem in _DEVICE_NAMES:
        return LexicalError(IMPORT_INVALID_PATH, f"import path names a Windows device: {part}")
    if folded == ".git" or _GIT_SHORT_NAME.match(folded):
        return LexicalError(IMPORT_INVALID_PATH, f"import path names a reserved directory: {part}")
    return None


def check_import_path(path: str, base: tuple[str, ...]) -> tuple[str, ...] | LexicalError:
    """Fold ``path`` against ``base`` (the importing file's directory, as parts below the
    boundary) and return the target's parts, or the first lexical reason to refuse it."""
    error = _char_error(path) or _outside_error(path)
    if error is not None:
        return error
    if "\\" in path:
        return LexicalError(IMPORT_INVALID_PATH, "import path uses a backslash; use /")
    if _PERCENT_ESCAPE.search(path):
        return LexicalError(IMPORT_INVALID_PATH, "import path holds a %-escape (never decoded)")
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        return LexicalError(IMPORT_INVALID_PATH, f"import path longer than {MAX_PATH_BYTES} bytes")
    parts = list(base)
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return LexicalError(
                    IMPORT_OUTSIDE_SOURCE, "import path climbs above the source directory"
                )
            parts.pop()
            continue
        error = _component_error(part)
        if error is not None:
            return error
        parts.append(part)
    return tuple(parts)


# An ``@`` that starts a word (after the line start, a space or an opening bracket/quote),
# then a path without whitespace.
_INLINE = re.compile(r"(?:^|(?<=[\s(\[\"']))@([^\s@`]+)")
_TRAILING = ".,;:!?)]}>\"'"


def inline_mentions(line: str) -> list[str]:
    """Paths written inline as ``@path`` (``See @docs/x.md for …``, ``- @docs/style.md``),
    trailing punctuation dropped; only those that hold a ``/`` or ``.`` like an import."""
    out: list[str] = []
    for match in _INLINE.finditer(line):
        path = match.group(1).rstrip(_TRAILING)
        if path and any(ch in "/." for ch in path) and not path.startswith(("/", "~")):
            out.append(path)
    return out


def is_mention(path: str) -> bool:
    """An ``@`` line that reads as a mention, not a file: ``@org/team``, ``@scope/package``.

    No component has a dot (no file name, no ``./``), so it names a person, team or package.
    """
    return not any("." in part for part in path.split("/")) and "\\" not in path
