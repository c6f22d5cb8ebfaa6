"""Turn-tail notes (S7.3): what changed since the prefix was built, told once on the next user turn.

The session keeps a *baseline* — what the provider has already been told about each fact and
instruction document. Each turn compares the stores and instructions against it; every
difference becomes one ``- `` line and the baseline moves forward, so a change rides exactly one
turn. Comparing states (rather than listening for our own writes) also catches writes made by
other processes: the CLI, the app, an MCP server, a text editor.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, cast

from ..digests import sha256
from ..facts.model import Fact, one_line
from ..records import field, record, replace
from .prefix import masked_global_ids

NOTES_OPEN = "<memory-update>"
NOTES_CLOSE = "</memory-update>"
NOTES_LEAD = "The following project-memory changes were just made and apply from now on:"


class FactMark(NamedTuple):
    """What the provider was last told about one fact (a tuple: a hook rebuilds 10^4 a turn)."""

    id: str
    revision: int
    reference: str


@record
class Baseline:
    """Facts (by id) and instruction documents (label → digest) the provider knows about."""

    facts: Mapping[str, FactMark] = field(default_factory=dict)
    instructions: Mapping[str, str] = field(default_factory=dict)
    masked: frozenset[str] = frozenset()
    # The saved recall state's digest of ``facts`` when they came from it (recall/quiet.py):
    # a cold turn with the same digest knows nothing moved without comparing 10^4 marks.
    digest: str | None = None

    @classmethod
    def capture(
        cls,
        facts: Iterable[Fact],
        instructions: Mapping[str, str],
        masked: frozenset[str] | None = None,
    ) -> Baseline:
        """The state right after building a prefix from ``facts`` and ``instructions``."""
        saved = _saved_view(facts)
        if saved is not None:  # the recall state's marks: no fact is built (recall/quiet.py)
            return cls(
                facts=dict(saved.marks()),
                instructions={label: digest(body) for label, body in instructions.items()},
                masked=saved.masked() if masked is None else masked,
                digest=saved.digest(),
            )
        facts = list(facts)
        return cls(
            facts={fact.id: FactMark(fact.id, fact.revision, fact.reference) for fact in facts},
            instructions={label: digest(body) for label, body in instructions.items()},
            masked=masked_global_ids(facts) if masked is None else masked,
        )

    def to_json(self) -> dict[str, object]:
        """A JSON-ready form (hooks keep the baseline between processes)."""
        raw = self.facts.raw() if isinstance(self.facts, _MarkTable) else None
        document: dict[str, object] = {
            "facts": raw if raw is not None else [
                [m.id, m.revision, m.reference] for m in self.facts.values()
            ],
            "instructions": dict(self.instructions),
            "masked": sorted(self.masked),
        }
        if self.digest is not None:
            document["digest"] = self.digest
        return document

    def layered_json(self, marks_file: str) -> dict[str, object]:
        """The hook's document when ``facts`` lie on the marks file ``marks_file`` (see
        ``saved_layers``; hooks/state.py): that file's name and the overlay on it, never the
        marks themselves (a turn after one change writes one mark, not 10^5)."""
        source, changed, gone = saved_layers(self.facts)
        if source != marks_file:
            changed, gone = {}, frozenset()  # the marks were just written whole to that file
        document: dict[str, object] = {
            "marks_file": marks_file,
            "set": [[m.id, m.revision, m.reference] for m in changed.values()],
            "gone": sorted(gone),
            "instructions": dict(self.instructions),
            "masked": sorted(self.masked),
        }
        if self.digest is not None:
            document["digest"] = self.digest
        return document

    @classmethod
    def from_json(
        cls,
        data: Mapping[str, object],
        marks_file: Callable[[str], Callable[[], bytes]] | None = None,
    ) -> Baseline:
        """Inverse of :meth:`to_json` (and of :meth:`layered_json`, given ``marks_file``: a
        marks file's name → what reads its bytes, raising ``OSError`` when it cannot be
        opened); raises ``ValueError`` on a malformed document."""
        try:
            raw_instructions = data["instructions"]
            raw_masked = data["masked"]
            assert isinstance(raw_instructions, dict)
            assert isinstance(raw_masked, list)
            raw_digest = data.get("digest")
            instructions = {str(k): str(v) for k, v in raw_instructions.items()}
            masked = frozenset(str(m) for m in raw_masked)
            digest = raw_digest if isinstance(raw_digest, str) else None
            source = data.get("marks_file")
            if source is not None:
                assert isinstance(source, str) and marks_file is not None
                changed, gone = data["set"], data["gone"]
                assert isinstance(changed, list) and isinstance(gone, list)
                table = _MarkTable(marks_file(source), source)
                return cls(layered_marks(table, changed, gone), instructions, masked, digest)
            raw_facts = data["facts"]
            assert isinstance(raw_facts, list | bytes)  # bytes: still encoded (hooks/state.py)
            if isinstance(raw_facts, bytes) and digest is None:
                import marshal

                raw_facts = marshal.loads(raw_facts)  # no digest: compared entry by entry
                assert isinstance(raw_facts, list)
            if digest is not None:
                # Decoded on first use: a quiet cold turn with the same digest never looks.
                return cls(_MarkTable(raw_facts), instructions, masked, digest)
            assert isinstance(raw_facts, list)
            facts = {str(i): FactMark(str(i), int(r), str(ref)) for i, r, ref in raw_facts}
            return cls(facts, instructions, masked)
        except (KeyError, TypeError, ValueError, EOFError, AssertionError) as exc:
            raise ValueError("malformed session baseline") from exc


# A saved baseline's table answers this many lookups by scanning its ids, then builds a dict.
_SCANS = 16


class _MarkTable(Mapping[str, FactMark]):
    """A saved baseline's marks, decoded (and checked) when first looked at.

    Looking a few ids up finds them through an id → position table built at C speed. A turn
    after a change moves the baseline as an overlay on this table (``_moved``): the table
    itself is never copied nor encoded again, and a hook saves the overlay beside the name of
    the file the table came from (``source``, hooks/state.py).
    """

    def __init__(
        self, raw: list[Any] | bytes | Callable[[], bytes], source: str | None = None
    ) -> None:
        # ``bytes``: the entries still ``marshal``-encoded as the hook's file keeps them
        # (hooks/state.py): a quiet turn whose digest matches never decodes 10^5 of them. A
        # callable: those bytes, read from their file only when first needed.
        self._read = raw if callable(raw) else None
        self._packed = raw if isinstance(raw, bytes) else None
        self._list = raw if isinstance(raw, list) else None
        self.source = source  # the marks file these entries were read from (hooks/state.py)
        self._table: dict[str, FactMark] | None = None
        self._checked: list[Any] | None = None  # the ids, once checked ([]: malformed)
        self._where: dict[Any, int] | None = None
        self._scans = 0

    @property
    def _raw(self) -> list[Any]:
        """The entries (decoded from their saved bytes on first use; malformed: none)."""
        if self._list is None:
            import marshal

            if self._packed is None and self._read is not None:
                try:
                    self._packed = self._read()
                except OSError:
                    self._packed = b""
                self._read = None
            try:
                value = marshal.loads(self._packed or b"")
            except (EOFError, ValueError, TypeError):
                value = []
            self._list = value if isinstance(value, list) else []
            self._packed = None
        return self._list

    def packed(self) -> bytes | None:
        """The entries' saved bytes, when they were never decoded (saved again as they are)."""
        if self._packed is None and self._list is None and self._read is not None:
            try:
                self._packed = self._read()  # read, not decoded
            except OSError:
                self._packed = b""
            self._read = None
        return self._packed

    def _decoded(self) -> dict[str, FactMark]:
        if self._table is None:
            try:
                self._table = {
                    str(i): FactMark(str(i), int(r), str(ref)) for i, r, ref in self._raw
                }
            except (TypeError, ValueError):
                self._table = {}  # a malformed saved baseline: every fact reads as new
        return self._table

    def _ids(self) -> list[Any] | None:
        """The entries' ids in order when every entry is a well-formed (id, revision,
        reference); ``None``: decoded whole, then (a malformed one reads as nothing)."""
        if self._checked is None and self._table is None:
            from operator import itemgetter

            raw = self._raw  # every check below at C speed: no Python loop over 10^5 entries
            self._checked = []
            if raw and not set(map(type, raw)) - {list, tuple} and set(map(len, raw)) == {3}:
                ids = list(map(itemgetter(0), raw))
                if (
                    set(map(type, ids)) == {str}
                    and set(map(type, map(itemgetter(1), raw))) == {int}
                    and set(map(type, map(itemgetter(2), raw))) == {str}
                ):
                    self._checked = ids
        return self._checked or None

    def _position(self, key: str) -> int | None:
        """Where ``key``'s entry is (the last one, as in ``_decoded``), ``None``: not there.

        A few lookups scan the ids (C speed, ~1 ms each at 10^5); past ``_SCANS`` of them an
        id → position table is built once (hashing every id costs ~40 ms at 10^5)."""
        ids = self._ids()
        assert ids is not None
        if self._where is None:
            self._scans += 1
            if self._scans <= _SCANS:
                try:
                    at = ids.index(key)
                except ValueError:
                    return None
                while True:  # the last of equal ids wins, as in a dict built from the list
                    try:
                        at = ids.index(key, at + 1)
                    except ValueError:
                        return at
            self._where = dict(zip(ids, range(len(ids)), strict=True))
        return self._where.get(key)

    def __getitem__(self, key: str) -> FactMark:
        if self._ids() is None:
            return self._decoded()[key]
        at = self._position(key)
        if at is None:
            raise KeyError(key)
        return FactMark(*self._raw[at])

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def raw(self) -> list[Any] | None:
        """The saved entries as they are, when every one is well formed (else ``None``)."""
        return self._raw if self._ids() is not None else None

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())


def saved_layers(
    marks: Mapping[str, FactMark],
) -> tuple[str | None, Mapping[str, FactMark], frozenset[str]]:
    """``marks`` as (the marks file they lie on, the marks set over it, the ids taken out of
    it) when they are a saved table or an overlay on one (hooks/state.py saves only the two
    last); ``(None, marks, ∅)`` when they lie on no file."""
    if isinstance(marks, _MarkTable) and marks.source is not None:
        return marks.source, {}, frozenset()
    if isinstance(marks, _Overlay):
        base = marks._base
        if isinstance(base, _MarkTable) and base.source is not None:
            return base.source, marks._set, marks._gone
    return None, marks, frozenset()


def packed_marks(marks: Mapping[str, FactMark]) -> bytes:
    """Every mark as the ``marshal`` bytes of an [id, revision, reference] list (a saved
    table never decoded: its very bytes)."""
    import marshal

    if isinstance(marks, _MarkTable):
        packed = marks.packed()
        if packed is not None:
            return packed
        raw = marks.raw()
        if raw is not None:
            return marshal.dumps(raw)
    return marshal.dumps([[m.id, m.revision, m.reference] for m in marks.values()])


def layered_marks(
    base: _MarkTable, changed: Iterable[Sequence[Any]], gone: Iterable[str]
) -> Mapping[str, FactMark]:
    """A saved table with the saved overlay on it (``saved_layers``' inverse); raises
    ``ValueError`` on a malformed overlay."""
    try:
        now = {str(i): FactMark(str(i), int(r), str(ref)) for i, r, ref in changed}
        out = frozenset(str(key) for key in gone) - now.keys()
    except (TypeError, ValueError) as exc:
        raise ValueError("malformed session baseline overlay") from exc
    return _Overlay(base, now, out) if now or out else base


class SavedFacts(Protocol):
    """Facts known by their saved marks (``recall/quiet.QuietFacts``): built only on demand."""

    def marks(self) -> Mapping[str, FactMark]:
        """id → what the provider would be told of each fact."""
        ...

    def masked(self) -> frozenset[str]:
        """Ids of global facts an equivalent project fact overrides."""
        ...

    def fact(self, fact_id: str) -> Fact:
        """One fact by id."""
        ...

    def digest(self) -> str:
        """A digest of ``marks()``."""
        ...


def _saved_view(facts: object) -> SavedFacts | None:
    """``facts`` as saved marks when it offers them (duck-typed: no recall import here)."""
    if all(callable(getattr(facts, n, None)) for n in ("marks", "masked", "fact", "digest")):
        return cast(SavedFacts, facts)
    return None


def digest(text: str) -> str:
    """A short content digest of an instruction document."""
    return sha256(text.encode("utf-8")).hexdigest()[:32]


def _same(text: str) -> str:
    return text


def _text(value: str, clean: Callable[[str], str] = _same) -> str:
    """One line, scrubbed of local paths, then HTML-escaped so no body can close the wrapper
    (as S8.9 does for recall). Scrubbing first: an escaped path no longer matches (S7.4)."""
    # ``html.escape(text, quote=False)`` exactly (its own replace chain), without importing
    # ``html`` (and its entity table) on every hook turn.
    text = one_line(clean(value))  # scrub first: one_line would respell a path with spaces
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _fact_line(verb: str, fact: Fact, extra: str, clean: Callable[[str], str]) -> str:
    head = f"- {verb} {fact.reference}{extra} ({fact.scope}/{fact.type}, revision {fact.revision})"
    title = _text(fact.display_title, clean)
    body = _text(fact.body, clean)
    return f"{head}: {title}" + (f" — {body}" if body else "")


def diff_notes(
    baseline: Baseline,
    facts: Sequence[Fact],
    instructions: Mapping[str, str],
    clean: Callable[[str], str] = _same,
) -> tuple[list[str], Baseline]:
    """Note lines for every change since ``baseline``, and the baseline that follows.

    ``clean`` is the engine's path scrubber, applied to each text before it is escaped.
    """
    lines: list[str] = []
    known = baseline.facts
    saved = _saved_view(facts)
    current: Mapping[str, Fact | FactMark]
    if (
        saved is not None
        and baseline.digest is not None
        and baseline.digest == saved.digest()
        and _documents_same(baseline, instructions)
    ):
        return [], baseline  # the very marks the provider was told: nothing moved
    affected = _affected(facts, baseline.digest)
    gone: list[FactMark] | None = None
    told: Callable[[str], FactMark | None] = known.get
    if saved is not None and affected is not None:
        # A watched host's facts (recall/live.py) name the ids changed since the baseline's
        # generation: only those are compared.
        view = cast(_LiveView, facts)
        current = _Marks(view)
        # A cold turn's state brought up from the one whose digest the baseline carries
        # (recall/delta.py) knows those ids' marks there, the baseline's own: its saved
        # marks stay encoded (hooks/state.py).
        before = _before(facts, baseline.digest)
        if before is not None:
            told = before.get
        changed = []
        gone = []
        for fact_id in affected:
            now, old = view.mark(fact_id), told(fact_id)
            if now is None:
                if old is not None:
                    gone.append(old)
            elif now != old:
                changed.append(view.fact(fact_id))
        masked_now: Callable[[], frozenset[str]] = saved.masked
    elif saved is not None:
        # Marks against marks; only the changed facts are built from the saved records.
        current = saved.marks()
        changed = [saved.fact(i) for i, mark in current.items() if known.get(i) != mark]
        masked_now = saved.masked
    else:
        current = {fact.id: fact for fact in facts}
        # Only the few changed facts are sorted (project first, then by name): cheap turns.
        changed = [
            fact
            for fact in facts
            if (old := known.get(fact.id)) is None
            or old.revision != fact.revision
            or old.reference != fact.reference
        ]

        def masked_now() -> frozenset[str]:
            return masked_global_ids(facts)

    for fact in sorted(changed, key=lambda f: (f.scope != "project", f.name, f.id)):
        old = told(fact.id)
        if old is None:
            lines.append(_fact_line("saved", fact, "", clean))
        else:
            renamed = f" (was {old.reference})" if old.reference != fact.reference else ""
            lines.append(_fact_line("updated", fact, renamed, clean))
    if gone is None:
        gone = [mark for fact_id, mark in known.items() if fact_id not in current]
    documents_same = _documents_same(baseline, instructions)
    if not changed and not gone and documents_same:
        # Nothing moved, so nothing can have become masked either: the baseline stands as is
        # (with the saved state's digest, so the next cold turn need not compare marks).
        if saved is not None and baseline.digest != saved.digest():
            return [], replace(baseline, digest=saved.digest())
        return [], baseline
    for mark in sorted(gone, key=lambda m: m.reference):
        if mark.id not in current:
            lines.append(
                f"- forgot {mark.reference}: disregard its loaded guidance and index entry "
                "for the rest of the session."
            )
    masked = masked_now()
    for fact_id in sorted(masked - baseline.masked):
        shadowed = current.get(fact_id)
        if shadowed is not None and fact_id in baseline.facts:
            lines.append(
                f"- {shadowed.reference} is now overridden by an equivalent project fact: "
                "disregard its loaded guidance for the rest of the session and follow the "
                "project fact instead."
            )
    for label in sorted(instructions):
        if baseline.instructions.get(label) != digest(instructions[label]):
            verb = "changed" if label in baseline.instructions else "added"
            lines.append(
                f"- standing instructions {label} {verb}; their current text applies: "
                f"{_text(instructions[label], clean)}"
            )
    for label in sorted(set(baseline.instructions) - set(instructions)):
        lines.append(
            f"- standing instructions {label} removed: disregard them for the rest of the session."
        )
    # The next baseline is this one with the few changes applied.
    marks = _moved(
        known,
        {fact.id: FactMark(fact.id, fact.revision, fact.reference) for fact in changed},
        [mark.id for mark in gone],
    )
    documents = {label: digest(body) for label, body in instructions.items()}
    return lines, Baseline(marks, documents, masked, saved.digest() if saved else None)


class _LiveView(SavedFacts, Protocol):
    """Saved marks that also know which ids changed since an earlier digest."""

    def since(self, digest: str | None) -> frozenset[str] | None:
        """Ids whose mark may differ from the one under ``digest``; ``None``: unknown."""
        ...

    def mark(self, fact_id: str) -> FactMark | None:
        """The mark of one id, ``None`` when no fact holds it."""
        ...


def _before(facts: object, digest: str | None) -> Mapping[str, FactMark] | None:
    """The marks under ``digest`` of the ids ``since`` names, when the view knows them."""
    before = getattr(facts, "before", None)
    if digest is None or not callable(before):
        return None
    found = before(digest)
    return found if isinstance(found, Mapping) else None


def _affected(facts: object, digest: str | None) -> frozenset[str] | None:
    """The ids a live view says may have changed since ``digest`` (``None``: compare all)."""
    since = getattr(facts, "since", None)
    if digest is None or not callable(since):
        return None
    found = since(digest)
    return found if isinstance(found, frozenset) else None


class _Marks(Mapping[str, FactMark]):
    """A live view's marks looked up one id at a time (membership and ``get`` only)."""

    def __init__(self, view: _LiveView) -> None:
        self._view = view

    def __getitem__(self, key: str) -> FactMark:
        mark = self._view.mark(key)
        if mark is None:
            raise KeyError(key)
        return mark

    def __iter__(self) -> Iterator[str]:
        return iter(self._view.marks())

    def __len__(self) -> int:
        return len(self._view.marks())


# Below this many marks a copy is as cheap as an overlay; past this many changes an overlay
# is flattened (each turn's overlay costs its changes, so this bounds that cost).
_COPY_BELOW = 4096
_FLATTEN_PAST = 1024


class _Overlay(Mapping[str, FactMark]):
    """Marks as a base table plus the changes made since: a turn after one change copies no
    10^5 marks (a host's baseline moves every turn something changed)."""

    __slots__ = ("_base", "_gone", "_len", "_set")

    def __init__(
        self, base: Mapping[str, FactMark], changed: dict[str, FactMark], gone: frozenset[str]
    ) -> None:
        # ``gone`` and ``changed`` hold no key in common; ``gone`` may name keys ``base`` does
        # not hold (a saved table is not looked up to move it).
        self._base, self._set, self._gone = base, changed, gone
        self._len: int | None = None

    def __getitem__(self, key: str) -> FactMark:
        mark = self._set.get(key)
        if mark is not None:
            return mark
        if key in self._gone:
            raise KeyError(key)
        return self._base[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The mark of ``key``, else ``default`` (without raising inside)."""
        mark = self._set.get(key)
        if mark is not None:
            return mark
        if key in self._gone:
            return default
        return self._base.get(key, default)

    def __iter__(self) -> Iterator[str]:
        changed, gone = self._set, self._gone
        yield from (key for key in self._base if key not in changed and key not in gone)
        yield from changed

    def __len__(self) -> int:
        if self._len is None:  # a saved table is decoded here, never to move it
            base = self._base
            added = sum(1 for key in self._set if key not in base)
            self._len = len(base) + added - sum(1 for key in self._gone if key in base)
        return self._len


def _moved(
    known: Mapping[str, FactMark], changed: dict[str, FactMark], gone: list[str]
) -> Mapping[str, FactMark]:
    """``known`` with ``changed`` set and ``gone`` removed, as a new mapping.

    A saved table (``_MarkTable``) is never decoded for this: it becomes the base of an
    overlay, saved as the table's file name and the overlay (hooks/state.py)."""
    base: Mapping[str, FactMark]
    if isinstance(known, _Overlay):
        base, now, removed = known._base, dict(known._set), set(known._gone)
    elif isinstance(known, _MarkTable) or (isinstance(known, dict) and len(known) >= _COPY_BELOW):
        base, now, removed = known, {}, set()
    else:
        marks = dict(known)  # small, or decoded from a hook's file: a C-speed copy
        marks.update(changed)
        for key in gone:
            del marks[key]
        return marks
    now.update(changed)
    removed.difference_update(changed)
    lazy = isinstance(base, _MarkTable)
    for key in gone:
        now.pop(key, None)
        if lazy or key in base:  # a saved table is not looked up: removed either way
            removed.add(key)
    if len(now) + len(removed) > _FLATTEN_PAST:
        flat = dict(base)
        flat.update(now)
        for key in removed:
            flat.pop(key, None)
        return flat
    return _Overlay(base, now, frozenset(removed))


def _documents_same(baseline: Baseline, instructions: Mapping[str, str]) -> bool:
    """Whether every instruction document is the one the provider was told."""
    return len(instructions) == len(baseline.instructions) and all(
        baseline.instructions.get(label) == digest(body) for label, body in instructions.items()
    )


def render_notes(lines: Sequence[str]) -> str:
    """The ``<memory-update>`` block for ``lines``; empty when nothing changed."""
    if not lines:
        return ""
    return "\n".join([NOTES_OPEN, NOTES_LEAD, *lines, NOTES_CLOSE])
