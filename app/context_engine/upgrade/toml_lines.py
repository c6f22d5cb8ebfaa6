"""A line-level TOML scanner: statements (with their exact line span) and table headers.

Only what S5.4 needs to delete one key without touching anything else: it knows where each
``key = value`` statement starts and ends (multi-line strings and arrays included) and which
table it belongs to. It never rewrites text; ``TomlScanError`` means "leave the file alone".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_WS = " \t"
# Numbers, booleans and dates; a date-time may use a space between date and time.
_SCALAR = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}[^\s,\]\}#]*|[^\s,\]\}#]+")


class TomlScanError(ValueError):
    """The text is not TOML this scanner understands; callers must not edit it."""


@dataclass(frozen=True, slots=True)
class Statement:
    """One key/value statement: its dotted key parts, table, and [start, end) offsets."""

    table: tuple[str, ...]
    key: tuple[str, ...]
    start: int
    end: int


class _Cursor:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self, count: int = 1) -> str:
        return self.text[self.pos : self.pos + count]

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _WS:
            self.pos += 1

    def skip_to_line_end(self) -> None:
        """Skip whitespace and an optional comment, then the line break (or end of text)."""
        self.skip_ws()
        if self.peek() == "#":
            end = self.text.find("\n", self.pos)
            self.pos = len(self.text) if end < 0 else end
        if self.peek(2) == "\r\n":
            self.pos += 2
        elif self.peek() == "\n":
            self.pos += 1
        elif self.pos < len(self.text):
            raise TomlScanError(f"unexpected text at offset {self.pos}")

    def skip_blank_and_comments(self) -> None:
        """Skip whitespace, comments and line breaks (inside arrays)."""
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch in " \t\r\n":
                self.pos += 1
            elif ch == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                return


def _string(cur: _Cursor) -> str:
    """Consume one TOML string of any of the four kinds; returns its raw inner text."""
    text = cur.text
    for quote in ('"""', "'''"):
        if cur.peek(3) == quote:
            start = cur.pos + 3
            pos = start
            while True:
                end = text.find(quote, pos)
                if end < 0:
                    raise TomlScanError("unterminated multi-line string")
                if quote == '"""' and _escaped(text, end, start):
                    pos = end + 1
                    continue
                # A run of up to five quotes closes the string; the extra ones are content.
                run = 3
                while run < 5 and text[end + run : end + run + 1] == quote[0]:
                    run += 1
                cur.pos = end + run
                return text[start : end + run - 3]
    quote = cur.peek()
    if quote not in ('"', "'"):
        raise TomlScanError("expected a string")
    start = cur.pos + 1
    pos = start
    while True:
        if pos >= len(text) or text[pos] in "\r\n":
            raise TomlScanError("unterminated string")
        if text[pos] == quote and not (quote == '"' and _escaped(text, pos, start)):
            cur.pos = pos + 1
            return text[start:pos]
        pos += 1


def _escaped(text: str, pos: int, start: int) -> bool:
    """True when the character at ``pos`` follows an odd run of backslashes."""
    count = 0
    while pos - 1 - count >= start and text[pos - 1 - count] == "\\":
        count += 1
    return count % 2 == 1


def _key(cur: _Cursor) -> tuple[str, ...]:
    """A dotted key: bare or quoted parts separated by dots (raw quoted text)."""
    parts: list[str] = []
    while True:
        cur.skip_ws()
        if cur.peek() in ('"', "'"):
            parts.append(_string(cur))
        else:
            match = _BARE_KEY.match(cur.text, cur.pos)
            if match is None:
                raise TomlScanError(f"expected a key at offset {cur.pos}")
            parts.append(match.group())
            cur.pos = match.end()
        cur.skip_ws()
        if cur.peek() != ".":
            return tuple(parts)
        cur.pos += 1


def _items(cur: _Cursor, close: str, skip: Callable[[], None], item: Callable[[_Cursor], None],
           unterminated: str, stop: str = "") -> None:
    """Consume comma-separated ``item``s after the opener up to ``close``; ``stop`` ends early."""
    cur.pos += 1
    while True:
        skip()
        if cur.peek() == close:
            cur.pos += 1
            return
        if not cur.peek() or cur.peek() in stop:
            raise TomlScanError(unterminated)
        item(cur)
        skip()
        if cur.peek() == ",":
            cur.pos += 1


def _table_entry(cur: _Cursor) -> None:
    _key(cur)
    cur.skip_ws()
    if cur.peek() != "=":
        raise TomlScanError("expected '=' in inline table")
    cur.pos += 1
    cur.skip_ws()
    _value(cur)


def _value(cur: _Cursor) -> None:
    """Consume one value: strings, arrays and inline tables may hold anything."""
    ch = cur.peek()
    if ch in ('"', "'"):
        _string(cur)
    elif ch == "[":
        _items(cur, "]", cur.skip_blank_and_comments, _value, "unterminated array")
    elif ch == "{":
        _items(cur, "}", cur.skip_ws, _table_entry, "unterminated inline table", stop="\r\n")
    else:
        # Numbers, booleans, dates: everything up to a delimiter.
        match = _SCALAR.match(cur.text, cur.pos)
        if match is None:
            raise TomlScanError(f"expected a value at offset {cur.pos}")
        cur.pos = match.end()


def scan_statements(text: str) -> list[Statement]:
    """Every key/value statement of a TOML document, with its table and exact span.

    A statement's span runs from the start of its first line to after its last line break,
    so deleting the span removes exactly the lines of that key.
    """
    cur = _Cursor(text)
    table: tuple[str, ...] = ()
    statements: list[Statement] = []
    while cur.pos < len(text):
        line_start = cur.pos
        cur.skip_ws()
        ch = cur.peek()
        if ch in ("", "#", "\n") or cur.peek(2) == "\r\n":
            cur.skip_to_line_end()
            continue
        if ch == "[":
            array = cur.peek(2) == "[["
            cur.pos += 2 if array else 1
            header = _key(cur)
            closing = "]]" if array else "]"
            if cur.peek(len(closing)) != closing:
                raise TomlScanError(f"bad table header at offset {line_start}")
            cur.pos += len(closing)
            cur.skip_to_line_end()
            # An array of tables ([[agent]]) is not the table [agent]: mark it apart.
            table = ("[[", *header) if array else header
            continue
        key = _key(cur)
        if cur.peek() != "=":
            raise TomlScanError(f"expected '=' at offset {cur.pos}")
        cur.pos += 1
        cur.skip_ws()
        _value(cur)
        cur.skip_to_line_end()
        statements.append(Statement(table=table, key=key, start=line_start, end=cur.pos))
    return statements
