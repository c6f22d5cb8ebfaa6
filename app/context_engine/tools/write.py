"""The agent's ``remember`` and ``forget`` tools behind the write policy (S9.2, S10).

``run_write_tool`` evaluates the policy, asks the confirmation service when a person must
decide, and writes only with a one-time permission for exactly these arguments. Automatic
writes are create-only, so a fact created by anyone between the check and the write is never
overwritten; a confirmed update carries the revision and digest the person reviewed. Results
name facts by reference only: no path, no store location (S7.4).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import (
    ContextEngineError,
    FactFormatError,
    FactNotFound,
    LockTimeout,
    RevisionConflict,
    StoreIOError,
)
from ..facts.changes import Changes
from ..facts.model import Fact
from ..paths import slugify
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
    REFERENCE_PATTERN,
    Controller,
    Decision,
    DecisionKind,
    RememberArgs,
    ToolArgumentError,
    derive_name,
    evaluate_forget,
    evaluate_remember,
    parse_forget_args,
    parse_remember_args,
)
from .spec import (
    FORGET_DESCRIPTION,
    FORGET_SCHEMA,
    FORGET_TOOL,
    MEMORY_TOOL,
    REMEMBER_DESCRIPTION,
    REMEMBER_SCHEMA,
    REMEMBER_TOOL,
)

__all__ = [
    "FORGET_DESCRIPTION",
    "FORGET_SCHEMA",
    "REMEMBER_DESCRIPTION",
    "REMEMBER_SCHEMA",
    "ToolOutcome",
    "run_agent_tool",
    "run_write_tool",
]

_ID_SHAPE = re.compile(r"^(?:mem-[0-9a-f]{32}|legacy-[0-9a-f]{24})$")
_ABSOLUTE_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:[\\/]|/)[^\s\"'()]+")

PATH_REF_ERROR = (
    "name must be a memory name or reference such as project/<name>.md, not a file path"
)
_PATH_LIKE = re.compile(r"^\s*(?:/|~|\\|[A-Za-z]:(?:[\\/]|$))")


def looks_like_path(ref: str) -> bool:
    """Whether a typed name is a file path (``/etc/passwd``, ``C:\\x``, ``~/x``), not a ref."""
    return _PATH_LIKE.match(ref) is not None


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call did; ``as_json()`` is the S12 decision object.

    ``ran`` is True when the tool did its job (CLI exit 0): a write happened, a forget found
    nothing to archive, or a read-only call answered. ``changes`` feeds turn-tail notes.
    """

    decision: DecisionKind
    reason: str
    written: bool
    result: str
    ran: bool
    findings: tuple[str, ...] = ()
    changes: Changes | None = None

    def as_json(self) -> dict[str, Any]:
        """``{"decision", "reason", "written", "result"}`` (S12)."""
        return {
            "decision": self.decision,
            "reason": self.reason,
            "written": self.written,
            "result": self.result,
        }


class _Snapshot(Protocol):
    @property
    def facts(self) -> tuple[Fact, ...]: ...


class _Loaded(Protocol):
    @property
    def fact(self) -> Fact: ...

    @property
    def digest(self) -> str: ...


class WritableMemory(Protocol):
    """The part of ``facts.memory.Memory`` the write tools use."""

    def snapshot(self) -> _Snapshot:
        """Active facts of both stores."""
        ...

    def load(self, ref: str) -> _Loaded:
        """The active file a ref names, with its digest."""
        ...

    def save(
        self,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        body: str | None = None,
        type: Any = None,
        scope: Any = None,
        id: str | None = None,
        expected_revision: int | None = None,
        expected_digest: str | None = None,
        create_only: bool = False,
    ) -> Changes:
        """Create or update one fact."""
        ...

    def forget(self, ref: str) -> Changes:
        """Archive what ``ref`` names."""
        ...


def run_write_tool(
    memory: WritableMemory,
    tool: str,
    args: Mapping[str, object],
    controller: Controller,
    mode: str,
    confirmation: ConfirmationService,
    *,
    has_project_store: bool = True,
    before_write: Callable[[], None] | None = None,
) -> ToolOutcome:
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
        return ToolOutcome("denied", exc.message, False, f"Error: {exc.message}", False)


READ_ONLY_REASON = "read-only tool"


def run_agent_tool(
    memory: WritableMemory,
    tool: str,
    args: Mapping[str, object],
    controller: Controller,
    mode: str,
    confirmation: ConfirmationService,
    *,
    has_project_store: bool = True,
    clean: Callable[[str], str] | None = None,
) -> ToolOutcome:
    """Run any of the three agent tools: ``memory`` is read-only, the others go through S10.

    ``clean`` scrubs local paths from search snippets before they are cut (S7.4).
    """
    if tool != MEMORY_TOOL:
        return run_write_tool(
            memory,
            tool,
            args,
            controller,
            mode,
            confirmation,
            has_project_store=has_project_store,
        )
    # Imported here: recall is the heavier half and write-only hosts never need it.
    from .memory import run_memory_tool

    try:
        answer = run_memory_tool(memory.snapshot().facts, dict(args), clean=clean)
    except ContextEngineError as exc:
        return ToolOutcome("auto", READ_ONLY_REASON, False, f"Error: {public_message(exc)}", False)
    return ToolOutcome("auto", READ_ONLY_REASON, False, answer, True)


def _refused(decision: Decision) -> ToolOutcome:
    return ToolOutcome(
        decision.kind,
        decision.reason,
        False,
        f"Refused: {decision.reason}. Nothing was written.",
        False,
        decision.findings,
    )


def _failed(decision: Decision, exc: ContextEngineError) -> ToolOutcome:
    return ToolOutcome(
        decision.kind,
        decision.reason,
        False,
        f"Not written: {public_message(exc)}.",
        False,
        decision.findings,
    )


def public_message(exc: ContextEngineError) -> str:
    """An error message safe for the provider: store I/O details and paths are dropped."""
    if isinstance(exc, StoreIOError | LockTimeout):
        return "the memory store could not be written right now"
    if isinstance(exc, FactFormatError):
        return "an existing memory file could not be read"
    return _ABSOLUTE_PATH.sub("<path>", exc.message).rstrip(".")


# -- remember ----------------------------------------------------------------------------------


def _remember(
    memory: WritableMemory,
    args: Mapping[str, object],
    controller: Controller,
    confirmation: ConfirmationService,
    has_project_store: bool,
    before_write: Callable[[], None] | None,
) -> ToolOutcome:
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
    return ToolOutcome(
        decision.kind,
        decision.reason,
        True,
        _saved_text(changes, target, facts),
        True,
        decision.findings,
        changes,
    )


def _write_name(parsed: RememberArgs) -> str | None:
    """The slug to write; None on an id update that keeps the old name."""
    if parsed.id is not None and parsed.name is None:
        return None
    return derive_name(parsed)


def _update_target(
    memory: WritableMemory, parsed: RememberArgs, name: str | None
) -> _Loaded | None:
    """The active fact this save would replace, looked up as the store will (S4.1)."""
    if parsed.id is not None:
        return memory.load(parsed.id)
    assert name is not None
    ref = f"{parsed.scope}/{name}.md" if parsed.scope else name
    try:
        return memory.load(ref)
    except FactNotFound:
        return None


def _precheck_revision(parsed: RememberArgs, target: _Loaded | None) -> None:
    """Do not ask a person about a save that must fail its revision check (S4.2)."""
    if parsed.expected_revision is None:
        return
    found = target.fact.revision if target is not None else 0
    if found != parsed.expected_revision:
        raise RevisionConflict(parsed.expected_revision, found)


def _merged(parsed: RememberArgs, name: str | None, target: _Loaded | None) -> Fact:
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
    target: _Loaded | None,
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
    return ConfirmationRequest(
        tool=REMEMBER_TOOL,
        reason=decision.reason,
        findings=decision.findings,
        reference=new.reference,
        scope=new.scope,
        type=new.type,
        content=content,
        diff=diff,
        revision_from=revision_from,
        revision_to=(revision_from or 0) + 1,
        digest=argument_digest(REMEMBER_TOOL, args),
    )


def _save(
    memory: WritableMemory, parsed: RememberArgs, name: str | None, target: _Loaded | None
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


def _saved_text(changes: Changes, target: _Loaded | None, facts: Sequence[Fact]) -> str:
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


def _forget_targets(facts: Sequence[Fact], ref: str) -> list[Fact]:
    """The facts ``forget(ref)`` archives: an id, a reference's scope, or a name everywhere."""
    text = ref.strip()
    if _ID_SHAPE.match(text):
        by_id = [fact for fact in facts if fact.id == text]
        if by_id:
            return by_id
    reference = REFERENCE_PATTERN.match(text)
    try:
        name = slugify(reference.group(2) if reference else text)
    except ContextEngineError:
        return []
    scope = reference.group(1) if reference else None
    return [f for f in facts if f.name == name and (scope is None or f.scope == scope)]


def _forget(
    memory: WritableMemory,
    args: Mapping[str, object],
    controller: Controller,
    confirmation: ConfirmationService,
    before_write: Callable[[], None] | None,
) -> ToolOutcome:
    ref = parse_forget_args(args)
    if looks_like_path(ref):
        return ToolOutcome("denied", PATH_REF_ERROR, False, f"Error: {PATH_REF_ERROR}", False)
    decision = evaluate_forget(controller)
    if decision.kind == "denied":
        return _refused(decision)
    permission = Permission(FORGET_TOOL, args)
    targets = _forget_targets(memory.snapshot().facts, ref)
    if not targets:
        return ToolOutcome(
            decision.kind,
            decision.reason,
            False,
            f'No active memory matched "{ref}"; nothing was archived.',
            True,
        )
    first = targets[0]
    request = ConfirmationRequest(
        tool=FORGET_TOOL,
        reason=decision.reason,
        findings=(),
        reference=", ".join(f.reference for f in targets),
        scope=first.scope,
        type=first.type,
        content="\n".join(render_existing(f) for f in targets),
        diff="",
        revision_from=first.revision,
        revision_to=None,
        digest=argument_digest(FORGET_TOOL, args),
    )
    if not confirmation.confirm(request):
        return _refused(decision)
    try:
        if before_write is not None:
            before_write()
        permission.consume(FORGET_TOOL, args)
        # By id: exactly the identities the person reviewed, not whatever holds the name now.
        # (A hand-edited file without a well-formed id is archived by its reference instead.)
        refs = dict.fromkeys(f.id if _ID_SHAPE.match(f.id) else f.reference for f in targets)
        changes = [memory.forget(ref) for ref in refs]
    except ContextEngineError as exc:
        return _failed(decision, exc)
    archived = [f.reference for f in targets]
    merged = Changes(
        removed=tuple(p for c in changes for p in c.removed),
        archived=tuple(p for c in changes for p in c.archived),
        ids=tuple(i for c in changes for i in c.ids),
    )
    written = bool(merged.archived)
    result = f"Archived {', '.join(archived)}." if written else "Nothing was archived."
    return ToolOutcome(decision.kind, decision.reason, written, result, True, (), merged)
