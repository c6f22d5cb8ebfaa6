"""The transfer package's saves: every fact it creates or revises goes through here.

``write_fact`` creates an accepted candidate (create-only, S4.2: a memory created meanwhile is
never overwritten); ``save_as_revision`` keeps a bundle's differing fact as a new revision of
the fact here (expected revision checked, S4.2/S4.3). Both go through the catalog the CLI and
the app use; a person's explicit import (``--yes``, the dialog's Import button) is itself the
confirmation (S10.5). Exact-bytes placement of a restored bundle is the store's own primitive
(``facts.placement``), not a save.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from ..catalog.local import LocalCatalog
from ..catalog.ops import Person, Save, Surface
from ..errors import AlreadyExists, ContextEngineError
from ..facts.model import Fact
from .candidate import Candidate, Planned
from .plan import plan
from .progress import ProgressFn, no_progress

# An import is the person's own explicit action (S10.5), at the CLI or in the app.
CLI_PERSON = Person("cli")


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What one import run did: facts written, candidates skipped and why, failures."""

    written: tuple[Fact, ...]
    skipped: tuple[Planned, ...]
    failed: tuple[tuple[Candidate, str], ...]


def write_fact(catalog: LocalCatalog, candidate: Candidate, person: Person = CLI_PERSON
               ) -> Fact | None:
    """Create ``candidate`` as a new fact (never an update); None when its name got taken."""
    try:
        # A reference names the scope, so a same-named fact in the other store is kept.
        save = Save(name=f"{candidate.scope}/{candidate.name}", title=candidate.title or None,
                    description=candidate.description, body=candidate.body, type=candidate.type,
                    scope=candidate.scope, create_only=True)
        outcome = catalog.apply(save, person)
    except AlreadyExists:
        return None
    return outcome.fact


def save_as_revision(catalog: LocalCatalog, incoming: Fact, here: Fact,
                     person: Person = CLI_PERSON) -> Fact | None:
    """``incoming``'s content as the next revision of ``here`` (None when nothing changed)."""
    save = Save(id=here.id, expected_revision=here.revision, title=incoming.title,
                description=incoming.description, body=incoming.body, type=incoming.type)
    return catalog.apply(save, person).fact


def import_candidates(
    catalog: LocalCatalog,
    candidates: Sequence[Candidate],
    *,
    allow_flagged: Collection[int] = (),
    progress: ProgressFn = no_progress,
    check: Callable[[], None] = lambda: None,
    surface: Surface = "cli",
) -> ImportReport:
    """Plan ``candidates`` again against the stores as they are now, then write the new ones.

    A flagged candidate (secret-looking content) is written only when its index is in
    ``allow_flagged`` (the person unticked its warning). ``check`` raises to cancel: it runs
    before each write, so a cancelled import stops between whole facts.
    """
    planned = plan(candidates, catalog.list_facts().facts)
    written: list[Fact] = []
    skipped: list[Planned] = []
    failed: list[tuple[Candidate, str]] = []
    todo = [(i, p) for i, p in enumerate(planned) if p.status == "new"]
    skipped.extend(p for p in planned if p.status != "new")
    for done, (index, item) in enumerate(todo):
        check()
        progress(done, len(todo), item.candidate.name)
        if item.flagged and index not in allow_flagged:
            skipped.append(item)
            continue
        try:
            fact = write_fact(catalog, item.candidate, Person(surface))
        except ContextEngineError as exc:
            failed.append((item.candidate, exc.message))
            continue
        if fact is None:
            skipped.append(Planned(item.candidate, "exists", "created meanwhile", item.findings))
        else:
            written.append(fact)
    progress(len(todo), len(todo), "")
    return ImportReport(tuple(written), tuple(skipped), tuple(failed))
