"""MEMORY.md as derived data (S4.9): managed lines rewritten, hand-written lines kept verbatim.

The engine never reads facts from MEMORY.md (S5.2); it only rewrites the managed lines here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from .fs import FS, atomic_write, read_file
from .model import Fact, one_line
from .store import INDEX_NAME

HEADER = "# Memory"
# A managed line as we write it: `- [title](name.md) — [scope/type] description`.
_MANAGED = re.compile(
    r"^- \[.*\]\([^()\s]+\.md\) — \[(?:project|global)/(?:user|feedback|project|reference)\]"
)


def managed_line(fact: Fact) -> str:
    """`- [<display title>](<name>.md) — [<scope>/<type>] <one-line description>`."""
    return line_of(fact.name, fact.title, fact.description, fact.scope, fact.type)


def line_of(name: str, title: str, description: str, scope: str, fact_type: str) -> str:
    """``managed_line`` of a fact with these fields (the display title as ``Fact``'s: S3.8)."""
    shown, about = _single(title or name.replace("-", " ")), _single(description)
    return f"- [{shown}]({name}.md) — [{scope}/{fact_type}] {about}".rstrip()


def _single(text: str) -> str:
    """``one_line`` only when needed: the codec already collapses titles and descriptions."""
    if "\n" in text or "\r" in text or "  " in text or "\t" in text:
        return one_line(text)
    return text.strip()


def is_managed(line: str) -> bool:
    """True for a line the engine owns (it is regenerated on every write)."""
    return _MANAGED.match(line.rstrip("\r\n")) is not None


def render_index(existing: str, facts: Iterable[Fact]) -> str:
    """The new MEMORY.md text: hand-written lines in place, managed lines regenerated.

    The managed block goes where the first managed line was; with none yet it is appended
    after the hand-written text. ``# Memory`` is written only into an otherwise empty file.
    """
    ordered = sorted(facts, key=lambda f: (f.name, f.id))
    return "".join(render_parts(existing, [managed_line(f) + "\n" for f in ordered]))


def render_parts(existing: str, managed: list[str]) -> tuple[str, str, str]:
    """``render_index`` as (text before the managed block, the block, text after it).

    ``managed`` are the managed lines in order, each ending in ``\n``. The block is empty
    exactly when ``managed`` is; the three parts joined are the new MEMORY.md text.
    """
    lines = existing.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    kept: list[str] = []
    insert_at: int | None = None
    # Blank lines between two managed lines separate entries (Reasonix writes one between
    # every pair): they belong to the managed block and go with it.
    blanks: list[str] = []
    after_managed = False
    for line in lines:
        if is_managed(line):
            if insert_at is None:
                insert_at = len(kept)
            blanks.clear()
            after_managed = True
            continue
        if after_managed and not line.strip():
            blanks.append(line)
            continue
        kept.extend(blanks)
        blanks.clear()
        after_managed = False
        kept.append(line)
    kept.extend(blanks)
    block = "".join(managed)
    if insert_at is not None:
        return "".join(kept[:insert_at]), block, "".join(kept[insert_at:])
    if not any(line.strip() for line in kept):
        if not managed:
            return "".join(kept), "", ""
        return f"{HEADER}\n\n", block, ""
    tail = kept if kept[-1].strip() == "" else [*kept, "\n"]
    return "".join(tail), block, ""


def read_index(fs: FS, store_root: Path) -> bytes:
    """The bytes of ``<store>/MEMORY.md``; ``b""`` when missing, unreadable or a symlink."""
    try:
        raw, _ = read_file(fs, store_root / INDEX_NAME)
    except OSError:
        return b""
    return raw


def write_index(fs: FS, store_root: Path, raw: bytes, data: bytes) -> bool:
    """Replace MEMORY.md (read as ``raw``) by ``data`` unless nothing changes; True if written."""
    path = store_root / INDEX_NAME
    if data == raw and path.exists():
        return False
    if not data and not path.exists():
        return False
    atomic_write(fs, path, data)
    return True


def update_index(fs: FS, store_root: Path, facts: Iterable[Fact]) -> bool:
    """Rewrite the managed lines of ``<store>/MEMORY.md`` (under the store lock); True if changed.

    Undecodable bytes survive through ``surrogateescape``; a symlinked MEMORY.md is never read
    through (it is replaced by a regular file).
    """
    raw = read_index(fs, store_root)
    existing = raw.decode("utf-8", errors="surrogateescape")
    text = render_index(existing, facts)
    return write_index(fs, store_root, raw, text.encode("utf-8", errors="surrogateescape"))
