"""Markdown → HTML for QTextBrowser, with Pygments highlighting of fenced code."""

from __future__ import annotations

import html
from functools import cache
from typing import TYPE_CHECKING

# markdown-it and Pygments are imported on first use (a worker), not before the first paint.
if TYPE_CHECKING:
    from markdown_it import MarkdownIt


def _highlight(code: str, lang: str, attrs: str) -> str:
    """Inline-styled HTML for a fenced block (QTextBrowser has no external CSS classes)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(lang) if lang else None
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return f"<pre>{html.escape(code)}</pre>"
    formatter = HtmlFormatter(noclasses=True, nowrap=True, style=_style_name())
    return f"<pre>{highlight(code, lexer, formatter)}</pre>"


_dark = False


def set_dark(dark: bool) -> None:
    """Pick the Pygments style matching the palette (called on the GUI thread at start)."""
    global _dark
    _dark = dark


def _style_name() -> str:
    return "monokai" if _dark else "friendly"


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # html=False: fact bodies are untrusted text; raw HTML is shown escaped, not rendered.
    return MarkdownIt("commonmark", {"html": False, "highlight": _highlight}).enable("table")


def render_markdown(text: str) -> str:
    """HTML for ``text`` (CommonMark + tables, highlighted code, raw HTML escaped)."""
    return str(_parser().render(text))


def plain_block(text: str) -> str:
    """HTML showing ``text`` verbatim in a monospace block (provider blocks, raw bodies)."""
    return f"<pre style='white-space: pre-wrap'>{html.escape(text)}</pre>"
