"""The read-only ``memory`` agent tool: search, read, list (S9.1).

Results name facts by reference (``project/<name>.md``), never by path; archived facts never
appear. Invalid arguments raise :class:`MemoryToolError` with the exact S9.1 messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime

from ..errors import ContextEngineError
from ..facts.freshness import freshness
from ..facts.model import FACT_TYPES, SCOPES, Fact
from ..facts.refs import PATH_REF_ERROR, find_fact, looks_like_path
from ..recall.engine import Recaller
from ..recall.snippet import make_snippet
from ..recall.tokenize import tokens

OPERATIONS = ("search", "read", "list")
DEFAULT_LIMIT = 8
MAX_LIMIT = 20
SEARCH_FLOOR = 0.15
TOOL_SNIPPET = 260

TYPE_ERROR = "type must be one of user, feedback, project, reference"
SCOPE_ERROR = "scope must be one of project, global"

ZERO_GUIDANCE = (
    "0 results does not prove the fact was never recorded.\n"
    "1. Retry with 1-3 distinctive terms (a name, identifier, error code or ticket number).\n"
    "2. For a punctuated literal such as a URL, port, path or flag, search one distinctive "
    "token of it (for example 8443 rather than https://host:8443/api).\n"
    "3. Use the history tool when you need the verbatim wording of an earlier turn or tool "
    "output."
)


class MemoryToolError(ContextEngineError, ValueError):
    """Bad arguments to the memory tool."""

    code = "invalid_argument"


def check_not_a_path(ref: str) -> None:
    """Refuse a name typed as a file path (``/etc/passwd``, ``C:\\x``, ``~/x``), saying so."""
    if looks_like_path(ref):
        raise MemoryToolError(PATH_REF_ERROR)


def _text(args: Mapping[str, object], key: str) -> str:
    """A string argument, trimmed; absent or null is empty."""
    value = args.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MemoryToolError(f"{key} must be a string")
    return value.strip()


def _filters(args: Mapping[str, object]) -> tuple[str | None, str | None]:
    """Validated ``type`` and ``scope`` filters."""
    fact_type = _text(args, "type") or None
    scope = _text(args, "scope") or None
    if fact_type is not None and fact_type not in FACT_TYPES:
        raise MemoryToolError(TYPE_ERROR)
    if scope is not None and scope not in SCOPES:
        raise MemoryToolError(SCOPE_ERROR)
    return fact_type, scope


def _limit(args: Mapping[str, object]) -> int:
    """``limit``: default 8, at most 20."""
    value = args.get("limit")
    if value is None or value == "":
        return DEFAULT_LIMIT
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise MemoryToolError("limit must be a positive integer")
    try:
        number = int(value)
    except ValueError as exc:
        raise MemoryToolError("limit must be a positive integer") from exc
    if number < 1:
        raise MemoryToolError("limit must be a positive integer")
    return min(number, MAX_LIMIT)


def _required(args: Mapping[str, object], key: str) -> str:
    """A required non-empty string argument."""
    value = _text(args, key)
    if not value:
        raise MemoryToolError(f"missing required argument: {key}")
    return value


def _header(fact: Fact, now: datetime) -> str:
    """``project/x.md — Title (type=…, scope=…, freshness=…, revision=n)``."""
    return (
        f"{fact.reference} — {fact.display_title} (type={fact.type}, scope={fact.scope}, "
        f"freshness={freshness(fact, now)}, revision={fact.revision}, id={fact.id})"
    )


def search_hits(
    recaller: Recaller,
    query: str,
    *,
    fact_type: str | None = None,
    scope: str | None = None,
    limit: int = DEFAULT_LIMIT,
    floor: float = SEARCH_FLOOR,
    clean: Callable[[str], str] | None = None,
) -> list[tuple[Fact, float, str]]:
    """BM25 hits with the tool's 260-character snippets: (fact, score, snippet), best first."""
    bounded = max(1, min(limit, MAX_LIMIT))
    hits = recaller.search(query, fact_type=fact_type, scope=scope, limit=bounded, floor=floor)
    terms = list(dict.fromkeys(tokens(query)))
    found = []
    for hit in hits:
        source = "\n".join(p for p in (hit.fact.description, hit.fact.body) if p.strip())
        snippet = make_snippet(source, query, terms, TOOL_SNIPPET, clean=clean)
        found.append((hit.fact, hit.score, snippet))
    return found


def _search(
    recaller: Recaller,
    args: Mapping[str, object],
    now: datetime,
    clean: Callable[[str], str] | None = None,
) -> str:
    """BM25 search with a 0.15 relative floor and 260-character snippets."""
    query = _required(args, "query")
    fact_type, scope = _filters(args)
    limit = _limit(args)
    hits = search_hits(recaller, query, fact_type=fact_type, scope=scope, limit=limit, clean=clean)
    return search_text(query, hits, now)


def search_text(
    query: str, hits: Sequence[tuple[Fact, float, str]], now: datetime | None = None
) -> str:
    """The tool's text for search hits (S9.1): numbered, by reference; guidance for none."""
    now = now or datetime.now(UTC)
    if not hits:
        return f'No saved memories matched "{query}".\n{ZERO_GUIDANCE}'
    lines = [f'{len(hits)} saved memor{"y" if len(hits) == 1 else "ies"} matched "{query}":']
    for number, (fact, score, snippet) in enumerate(hits, 1):
        lines.append(f"{number}. {_header(fact, now)} score={score:.3f}")
        lines.append(f"   {snippet}")
    return "\n".join(lines)


def _read(facts: list[Fact], args: Mapping[str, object], now: datetime) -> str:
    """One fact in full, named by reference."""
    ref = _required(args, "name")
    check_not_a_path(ref)
    fact = find_fact(facts, ref)
    updated = fact.updated_at.isoformat() if fact.updated_at else "unknown"
    return (
        f"{_header(fact, now)}\n"
        f"description: {fact.description}\n"
        f"updated: {updated}\n\n"
        f"{fact.body.rstrip()}\n"
    )


def _list(facts: list[Fact], args: Mapping[str, object], now: datetime) -> str:
    """Every active fact matching the filters, one line each."""
    fact_type, scope = _filters(args)
    chosen = [
        f
        for f in facts
        if (fact_type is None or f.type == fact_type) and (scope is None or f.scope == scope)
    ]
    if not chosen:
        return "No saved memories."
    noun = "memory" if len(chosen) == 1 else "memories"
    lines = [f"{len(chosen)} saved {noun}:"]
    lines += [f"- {_header(f, now)}: {f.description}" for f in chosen]
    return "\n".join(lines)


def run_memory_tool(
    source: Recaller | Iterable[Fact],
    args: Mapping[str, object],
    *,
    now: datetime | None = None,
    clean: Callable[[str], str] | None = None,
) -> str:
    """Run one ``memory`` tool call over active facts (or a live ``Recaller``) and return text.

    ``clean`` is the caller's path scrubber, applied to snippets before they are cut (S7.4).
    """
    if not isinstance(args, Mapping):
        raise MemoryToolError("arguments must be a JSON object")
    operation = _text(args, "operation")
    if not operation:
        raise MemoryToolError("missing required argument: operation")
    if operation not in OPERATIONS:
        raise MemoryToolError("operation must be one of search, read, list")
    moment = now or datetime.now(UTC)
    recaller = source if isinstance(source, Recaller) else Recaller(source)
    if operation == "search":
        return _search(recaller, args, moment, clean)
    if operation == "read":
        return _read(recaller.facts(), args, moment)
    return _list(recaller.facts(), args, moment)
