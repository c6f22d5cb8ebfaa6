"""The write policy path of the one door: an agent's ``remember``/``forget`` (S9.2, S10).

``policy_write`` evaluates the policy, asks the confirmation service when a person must
decide, and writes only with a one-time permission for exactly these arguments. Automatic
writes are create-only, so a fact created by anyone between the check and the write is never
overwritten; a confirmed update carries the revision and digest the person reviewed. Results
name facts by reference only: no path, no store location (S7.4). Only ``catalog.door`` calls
it (and the policy tests).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import (
    ContextEngineError,
    FactNotFound,
    RevisionConflict,
    public_message,
)
from ..facts.changes import Changes
from ..facts.model import Fact
from ..facts.refs import PATH_REF_ERROR, looks_like_path, matching
from ..policy.confirmation import (
    ConfirmationRequest,
    ConfirmationService,
    render_existing,
    render_fact,
    unified_diff,
)
from ..policy.permission import Permission, argument_digest
from ..policy.write_policy import (
    MODES,
    Controller,
    Decision,
    RememberArgs,
    ToolArgumentError,
    derive_name,
    evaluate_forget,
    evaluate_remember,
    parse_forget_args,
    parse_remember_args,
)
from ..tools.spec import FORGET_TOOL, REMEMBER_TOOL
from .ops import WriteOutcome

if TYPE_CHECKING:
    from ..facts.memory import Memory
    from ..facts.store import LoadedFile

_ID_SHAPE = re.compile(r"^(?:mem-[0-9a-f]{32}|legacy-[0-9a-f]{24})$")
_ABSOLUTE_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:[\\/]|/)[^\s\"'()]+")


def policy_write(
    memory: Memory,
    tool: str,
    args: Mapping[str, object],
    controller: Controller,
    mode: str,
    confirmation: ConfirmationService,
    *,
    has_project_store: bool = True,
    before_write: Callable[[], None] | None = None,
) -> WriteOutcome:
    """Run ``remember`` or ``forget`` for ``controller``; ``mode`` never bypasses the policy.

    ``before_write`` runs between the decision and the write (a seam for race tests).
    """
    try:
        if mode not in MODES:
            raise ToolArgumentError("mode must be one of ask, auto, yolo")
        if tool == REMEMBER_TOOL:
            return _remember(
                memory, args, controller, confirmation, has_project_store, before_write
            )
        if tool == FORGET_TOOL:
            return _forget(memory, args, controller, confirmation, before_write)
        raise ToolArgumentError(f"unknown write tool: {tool}")
    except ToolArgumentError as exc:
        return WriteOutcome("denied", exc.message, False, f"Error: {exc.message}", False)


def _written(decision: Decision, written: bool, result: str, changes: Changes) -> WriteOutcome:
    """A policy write that ran: what it wrote, by reference, and the ``Changes`` for notes."""
    return WriteOutcome(
        decision.kind,
        decision.reason,
        written,
        result,
        True,
        decision.findings,
        fact=changes.fact,
        archived=tuple(str(p) for p in changes.archived),
        warnings=tuple(changes.warnings),
        changes=changes,
    )


def _refused(decision: Decision) -> WriteOutcome:
    return WriteOutcome(
        decision.kind,
        decision.reason,
        False,
        f"Refused: {decision.reason}. Nothing was written.",
        False,
        decision.findings,
    )


def _failed(decision: Decision, exc: ContextEngineError) -> WriteOutcome:
    return WriteOutcome(
        decision.kind,
        decision.reason,
        False,
        f"Not written: {public_message(exc)}.",
        False,
        decision.findings,
    )


# -- remember ----------------------------------------------------------------------------------


def _remember(
    memory: Memory,
    args: Mapping[str, object],
    controller: Controller,
    confirmation: ConfirmationService,
    has_project_store: bool,
    before_write: Callable[[], None] | None,
) -> WriteOutcome:
    parsed = parse_remember_args(args)
    facts = memory.snapshot().facts
    decision = evaluate_remember(parsed, facts, controller, has_project_store=has_project_store)
    if decision.kind == "denied":
        return _refused(decision)
    # Bound to the arguments as they were decided on; spent by the one write below.
    permission = Permission(REMEMBER_TOOL, args)
    try:
        name = _write_name(parsed)
        target = _update_target(memory, parsed, name)
        if decision.kind == "confirm":
            _precheck_revision(parsed, target)
            request = _remember_request(args, parsed, name, target, decision)
            if not confirmation.confirm(request):
                return _refused(decision)
        if before_write is not None:
            before_write()
        permission.consume(REMEMBER_TOOL, args)
        changes = _save(memory, parsed, name, None if decision.kind == "auto" else target)
    except ContextEngineError as exc:
        return _failed(decision, exc)
    return _written(decision, True, _saved_text(changes, target, facts), changes)


def _write_name(parsed: RememberArgs) -> str | None:
    """The slug to write; None on an id update that keeps the old name."""
    if parsed.id is not None and parsed.name is None:
        return None
    return derive_name(parsed)


def _update_target(
    memory: Memory, parsed: RememberArgs, name: str | None
) -> LoadedFile | None:
    """The active fact this save would replace, looked up as the store will (S4.1)."""
    if parsed.id is not None:
        return memory.load(parsed.id)
    assert name is not None
    ref = f"{parsed.scope}/{name}.md" if parsed.scope else name
    try:
        return memory.load(ref)
    except FactNotFound:
        return None


def _precheck_revision(parsed: RememberArgs, target: LoadedFile | None) -> None:
    """Do not ask a person about a save that must fail its revision check (S4.2)."""
    if parsed.expected_revision is None:
        return
    found = target.fact.revision if target is not None else 0
    if found != parsed.expected_revision:
        raise RevisionConflict(parsed.expected_revision, found)


def _merged(parsed: RememberArgs, name: str | None, target: LoadedFile | None) -> Fact:
    """The fact as it will be written: given fields, else the old ones, else defaults."""
    old = target.fact if target is not None else None
    return Fact(
        id=old.id if old else "",
        revision=old.revision + 1 if old else 1,
        name=name or (old.name if old else ""),
        title=parsed.title if parsed.title is not None else (old.title if old else ""),
        description=parsed.description
        if parsed.description is not None
        else (old.description if old else ""),
        type=parsed.type or (old.type if old else "project"),
        scope=parsed.scope or (old.scope if old else "project"),
        body=parsed.body if parsed.body is not None else (old.body if old else ""),
    )


def _remember_request(
    args: Mapping[str, object],
    parsed: RememberArgs,
    name: str | None,
    target: LoadedFile | None,
    decision: Decision,
) -> ConfirmationRequest:
    new = _merged(parsed, name, target)
    content = render_fact(new.name, new.title, new.description, new.type, new.scope, new.body)
    diff = ""
    revision_from = None
    if target is not None:
        revision_from = target.fact.revision
        diff = unified_diff(
            render_existing(target.fact),
            content,
            target.fact.reference,
            revision_from,
            revision_from + 1,
        )
    return ConfirmationRequest(tool=REMEMBER_TOOL, reason=decision.reason,
                               findings=decision.findings, reference=new.reference, scope=new.scope,
                               type=new.type, content=content, diff=diff,
                               revision_from=revision_from, revision_to=(revision_from or 0) + 1,
                               digest=argument_digest(REMEMBER_TOOL, args))


def _save(
    memory: Memory, parsed: RememberArgs, name: str | None, target: LoadedFile | None
) -> Changes:
    """Create-only unless a person confirmed replacing exactly the revision they saw."""
    fields: dict[str, Any] = {
        "name": name,
        "title": parsed.title,
        "description": parsed.description,
        "body": parsed.body,
        "type": parsed.type,
        "scope": parsed.scope,
        "id": parsed.id,
    }
    if target is None:
        return memory.save(**fields, expected_revision=parsed.expected_revision, create_only=True)
    revision = parsed.expected_revision
    return memory.save(
        **fields,
        expected_revision=target.fact.revision if revision is None else revision,
        expected_digest=target.digest,
    )


def _references_of(paths: Sequence[object], facts: Sequence[Fact]) -> list[str]:
    by_path = {fact.path: fact.reference for fact in facts if fact.path is not None}
    return [by_path[p] for p in paths if p in by_path]


def _saved_text(changes: Changes, target: LoadedFile | None, facts: Sequence[Fact]) -> str:
    fact = changes.fact
    if fact is None:
        return "Nothing changed."
    if target is not None and target.fact.id == fact.id:
        text = f"Updated {fact.reference} (revision {target.fact.revision} → {fact.revision})."
    else:
        text = f"Saved {fact.reference} (revision {fact.revision})."
    removed = [ref for ref in _references_of(changes.removed, facts) if ref != fact.reference]
    if removed:
        text += f" Archived {', '.join(removed)} (one active copy per name)."
    return text


# -- forget ------------------------------------------------------------------------------------


def archive(memory: Memory, targets: Sequence[Fact]) -> Changes:
    """Archive exactly ``targets``, by id: the identities reviewed, not whatever holds the name
    now (a hand-edited file without a well-formed id is archived by its reference instead)."""
    refs = dict.fromkeys(f.id if _ID_SHAPE.match(f.id) else f.reference for f in targets)
    changes = [memory.forget(ref) for ref in refs]
    return Changes(removed=tuple(p for c in changes for p in c.removed),
                   archived=tuple(p for c in changes for p in c.archived),
                   ids=tuple(i for c in changes for i in c.ids),
                   warnings=tuple(w for c in changes for w in c.warnings))


def forget_targets(facts: Sequence[Fact], ref: str) -> list[Fact]:
    """The facts ``forget(ref)`` archives (``facts/refs.py``): an id, a reference's scope, or a
    name in every store."""
    return matching(facts, ref)


def _forget(
    memory: Memory,
    args: Mapping[str, object],
    controller: Controller,
    confirmation: ConfirmationService,
    before_write: Callable[[], None] | None,
) -> WriteOutcome:
    ref = parse_forget_args(args)
    if looks_like_path(ref):
        return WriteOutcome("denied", PATH_REF_ERROR, False, f"Error: {PATH_REF_ERROR}", False)
    decision = evaluate_forget(controller)
    if decision.kind == "denied":
        return _refused(decision)
    permission = Permission(FORGET_TOOL, args)
    targets = forget_targets(memory.snapshot().facts, ref)
    if not targets:
        return WriteOutcome(
            decision.kind,
            decision.reason,
            False,
            f'No active memory matched "{ref}"; nothing was archived.',
            True,
        )
    first = targets[0]
    request = ConfirmationRequest(tool=FORGET_TOOL, reason=decision.reason, findings=(),
                                  reference=", ".join(f.reference for f in targets),
                                  scope=first.scope, type=first.type,
                                  content="\n".join(render_existing(f) for f in targets), diff="",
                                  revision_from=first.revision, revision_to=None,
                                  digest=argument_digest(FORGET_TOOL, args))
    if not confirmation.confirm(request):
        return _refused(decision)
    try:
        if before_write is not None:
            before_write()
        permission.consume(FORGET_TOOL, args)
        merged = archive(memory, targets)
    except ContextEngineError as exc:
        return _failed(decision, exc)
    archived = [f.reference for f in targets]
    written = bool(merged.archived)
    result = f"Archived {', '.join(archived)}." if written else "Nothing was archived."
    return _written(Decision(decision.kind, decision.reason), written, result, merged)
