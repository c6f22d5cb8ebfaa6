"""The one ref resolver: what an id, a reference or a bare name names (S1, S4.1, S4.7).

Every surface resolves through here — the store's ``load``/``resolve``, the agent's ``memory``
tool, ``forget`` targets, the CLI and the app — so ``project/x``, ``project/x.md``, ids and bare
names behave the same everywhere. A fact is named by its frontmatter ``name``, as Reasonix
does: a hand-renamed ``bom-crlf.md`` holding ``name: bomcrlf`` is ``project/bomcrlf.md`` and
``bomcrlf``, never ``bom-crlf`` (checked against the Reasonix oracle).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from ..errors import ContextEngineError, FactNotFound
from ..paths import slugify
from ..records import record
from .ids import is_valid_id
from .model import SCOPES, Fact, Scope

REFERENCE = re.compile(r"^(project|global)/(.+?)(?:\.md)?$")
_ID_PREFIXES = ("mem-", "legacy-")


@record
class Ref:
    """A parsed ref: the text, a possible id, the scope a reference names, the names to try."""

    text: str
    id: str | None
    scope: Scope | None
    names: tuple[str, ...]

    @property
    def scopes(self) -> tuple[Scope, ...]:
        """The stores to look in, project first."""
        return (self.scope,) if self.scope is not None else SCOPES

    def not_found(self) -> FactNotFound:
        """The S4.1 error for this ref."""
        if self.id is not None:
            return FactNotFound(f'memory id "{self.text}" not found')
        return FactNotFound(f'memory "{self.text}" not found')


def looks_like_id(ref: str) -> bool:
    """True when ``ref`` has the shape of a new or legacy id."""
    return ref.startswith(_ID_PREFIXES) and is_valid_id(ref)


def parse_reference(ref: str) -> tuple[Scope, str] | None:
    """``project/x.md`` or ``project/x`` → (``project``, ``x``); ``None`` for anything else."""
    match = REFERENCE.match(ref.strip())
    if match is None:
        return None
    scope: Scope = "global" if match.group(1) == "global" else "project"
    return scope, match.group(2)


PATH_REF_ERROR = (
    "name must be a memory name or reference such as project/<name>.md, not a file path"
)
_PATH_LIKE = re.compile(r"^\s*(?:/|~|\\|[A-Za-z]:(?:[\\/]|$))")


def looks_like_path(ref: str) -> bool:
    """Whether a typed name is a file path (``/etc/passwd``, ``C:\\x``, ``~/x``), not a ref."""
    return _PATH_LIKE.match(ref) is not None


def parse_ref(ref: str) -> Ref:
    """Split a ref into what to look for: an id, a scope, and the name as typed and slugged."""
    text = ref.strip()
    reference = parse_reference(text)
    scope, raw = reference if reference is not None else (None, text.removesuffix(".md"))
    composed = unicodedata.normalize("NFC", raw)  # names are slugged composed, as the store does
    try:
        slug = slugify(composed)
    except ContextEngineError:  # a name of punctuation only: match it as typed, if at all
        slug = composed
    names = tuple(dict.fromkeys(n for n in (raw, composed, slug) if n))
    return Ref(text, text if looks_like_id(text) else None, scope, names)


def matching(facts: Iterable[Fact], ref: str | Ref) -> list[Fact]:
    """Every active fact ``ref`` names, project first: an id → that identity; a reference →
    that scope's fact; a bare name → that name in every store (what ``forget`` archives)."""
    parsed = ref if isinstance(ref, Ref) else parse_ref(ref)
    pool = list(facts)
    by_id = [f for f in pool if f.id == parsed.text]  # any exact id, shaped like one or not
    if by_id:
        return by_id
    found: list[Fact] = []
    for scope in parsed.scopes:
        in_scope = [f for f in pool if f.scope == scope]
        found.extend([f for f in in_scope if f.name in parsed.names][:1])
    return found


def find_fact(facts: Iterable[Fact], ref: str) -> Fact:
    """The one active fact ``ref`` names (project first); ``FactNotFound`` when none."""
    parsed = parse_ref(ref)
    found = matching(facts, parsed)
    if not found:
        raise parsed.not_found()
    return found[0]
