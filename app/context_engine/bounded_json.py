"""JSON with limits: every frame and payload we read is bounded in size and nesting depth.

``json.loads`` recurses once per nesting level, so one deeply nested frame would raise
``RecursionError`` deep inside a server loop. ``loads`` checks the size and the depth first (a
linear scan of brackets outside strings, skipped when the text has too few brackets to be deep)
and always fails with ``FrameError``, whose message says which limit was hit.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False  # not ``typing``'s: a hook relay process does without importing typing
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 64  # no frame, hook payload or transcript line of ours nests deeper than ~10
MAX_FRAME_BYTES = 64 * 1024 * 1024

TOO_LARGE = "too_large"
TOO_DEEP = "too_deep"
INVALID_JSON = "invalid_json"

# A string (skipped whole, escapes included) or one bracket.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


class FrameError(ValueError):
    """A frame or payload refused before or while parsing; ``code`` names the limit."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def exceeds_depth(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether brackets outside strings nest deeper than ``limit``."""
    if text.count("[") + text.count("{") <= limit:
        return False  # too few brackets to be that deep: the common case costs two counts
    depth = 0
    for match in _TOKENS.finditer(text):
        char = text[match.start()]
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def loads(
    data: str | bytes,
    *,
    max_bytes: int = MAX_FRAME_BYTES,
    max_depth: int = MAX_DEPTH,
    what: str = "frame",
) -> Any:
    """Parse ``data`` as JSON within the limits, else raise ``FrameError``."""
    if len(data) > max_bytes:
        raise FrameError(TOO_LARGE, f"{what} is larger than {max_bytes} bytes")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FrameError(INVALID_JSON, f"{what} is not UTF-8 (byte {exc.start})") from None
    else:
        text = data
    if exceeds_depth(text, max_depth):
        raise FrameError(TOO_DEEP, f"{what} nests deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except RecursionError:  # a limit above the interpreter's own: still a clear error
        raise FrameError(TOO_DEEP, f"{what} nests too deeply") from None
    except ValueError as exc:
        raise FrameError(INVALID_JSON, f"{what} is not valid JSON: {exc}") from None
