"""``apply(op, actor)``: the only code that writes a workspace's context (S4, S10, S11.5).

policy decision → confirmation when asked → store → ``Changes`` → one ``WriteOutcome``.

* An ``Agent``'s ``Save``/``Forget`` is its ``remember``/``forget`` tool call: the S10 policy
  decides (``policy_writes``); restore, recover and accept are a person's actions only.
* A ``Person``'s own action is the confirmation (S10.5): saved, restored, recovered or accepted
  as asked, with no second prompt, whichever surface and whether the catalog is local or
  served. Failures raise the store's errors (a conflict opens the app's conflict dialog).
  A forget from the app asks once through the confirmation service: that dialog is where the
  person forgets (S10.4); the CLI's ``forget REF`` is typed by the person and is the action.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import ContextEngineError
from ..facts.changes import Changes
from ..facts.model import FACT_TYPES, SCOPES, Fact
from ..paths import EnginePaths, slugify
from ..records import replace
from .ops import Accept, Actor, Agent, Forget, Op, Recover, Restore, Save, WriteOutcome

# The S10 policy (``policy_writes``, ``policy.write_policy``: the sensitive-content rules,
# the confirmation service) loads only for an agent's write or a forget: a person's save,
# the common CLI write, never consults it (issue 14: a cold ``remember``).
if TYPE_CHECKING:
    from ..facts.memory import Memory
    from ..policy.confirmation import ConfirmationService
    from ..suggestions.accept import Edits
    from ..suggestions.model import MemoryCandidate

EXPLICIT_REASON = "a person's own action is the confirmation (S10.5)"
REASON_PERSON_ONLY = "only a person can restore, recover or accept"


def apply(
    memory: Memory,
    paths: EnginePaths,
    op: Op,
    actor: Actor,
    confirmation: Callable[[], ConfirmationService],
    *,
    has_project_store: bool = True,
) -> WriteOutcome:
    """Run ``op`` for ``actor`` through the policy, the confirmation service and the store.

    ``confirmation`` gives the service; it is called only when the policy may ask (an
    agent's write, the app's forget).
    """
    if isinstance(actor, Agent):
        return _for_agent(memory, op, actor, confirmation(), has_project_store)
    if isinstance(op, Forget) and actor.surface == "app":
        from ..policy.write_policy import Controller
        from .policy_writes import policy_write

        # The app's one forget dialog: the same path as every forget that asks a person.
        who = Controller("interactive")
        return policy_write(memory, "forget", {"name": op.ref}, who, "ask", confirmation())
    return _for_person(memory, paths, op)


def _for_agent(
    memory: Memory,
    op: Op,
    actor: Agent,
    confirmation: ConfirmationService,
    has_project_store: bool,
) -> WriteOutcome:
    from ..policy.write_policy import Controller
    from .policy_writes import policy_write

    who = Controller(actor.controller, owns_project_store=actor.owns_store)
    if isinstance(op, Save):
        args, tool = op.args(), "remember"
    elif isinstance(op, Forget):
        args, tool = {"name": op.ref}, "forget"
    else:
        result = f"Refused: {REASON_PERSON_ONLY}. Nothing was written."
        return WriteOutcome("denied", REASON_PERSON_ONLY, False, result, ran=False)
    return policy_write(
        memory, tool, args, who, actor.mode, confirmation, has_project_store=has_project_store
    )


def _for_person(memory: Memory, paths: EnginePaths, op: Op) -> WriteOutcome:
    if isinstance(op, Save):
        changes = _save(memory, op)
        updated = op.id is not None
        return explicit(changes, "Updated" if updated else "Saved")
    if isinstance(op, Forget):
        from .policy_writes import archive, forget_targets

        targets = forget_targets(memory.snapshot().facts, op.ref)
        # No readable fact by that ref: the store's own lookup still archives an unreadable file.
        changes = archive(memory, targets) if targets else memory.forget(op.ref)
        if not changes.archived:
            return explicit(changes, f'Nothing matched "{op.ref}"; nothing was archived')
        return explicit(changes, "Archived")
    if isinstance(op, Restore):
        changes = memory.restore(op.ref, op.revision, expected_revision=op.expected_revision)
        return explicit(changes, "Restored" if changes.changed else "Already at")
    if isinstance(op, Recover):
        return explicit(memory.recover(op.archive_path), "Recovered")
    return _accept(memory, paths, op)


def _save(memory: Memory, op: Save) -> Changes:
    """The person's save as given: checked revision and digest, create-only when asked."""
    fact_type = next((t for t in FACT_TYPES if t == op.type), None)
    scope = next((s for s in SCOPES if s == op.scope), None)
    if (op.type is not None and fact_type is None) or (op.scope is not None and scope is None):
        from ..policy.write_policy import ToolArgumentError

        if op.type is not None and fact_type is None:
            raise ToolArgumentError("type must be one of user, feedback, project, reference")
        raise ToolArgumentError("scope must be one of project, global")
    return memory.save(name=op.name, title=op.title, description=op.description, body=op.body,
                       type=fact_type, scope=scope, id=op.id,
                       expected_revision=op.expected_revision, expected_digest=op.expected_digest,
                       create_only=op.create_only)


def _accept(memory: Memory, paths: EnginePaths, op: Accept) -> WriteOutcome:
    """A candidate of a fresh scan: saved as a new fact, or written as a SKILL.md (S11.5)."""
    from ..suggestions.accept import Edits, accept_skill, find_candidate
    from ..suggestions.model import MemoryCandidate
    from ..suggestions.scanner import scan

    candidate = op.candidate or find_candidate(scan(paths), op.candidate_id)
    edits = op.edits or Edits()
    if isinstance(candidate, MemoryCandidate):
        fact = accept_memory(memory, candidate, edits)
        return replace(explicit(Changes(fact=fact), "Saved"), written=True)
    path = str(accept_skill(paths, candidate, edits))
    return WriteOutcome("explicit", EXPLICIT_REASON, True, f"Wrote {path}.", path=path)


def accept_memory(
    memory: Memory, candidate: MemoryCandidate, edits: Edits | None = None
) -> Fact:
    """Save the (edited) candidate as a new fact; never updates an existing one (S11.5)."""
    from ..suggestions.accept import Edits

    edits = edits or Edits()
    name = slugify(edits.name) if edits.name is not None else candidate.name
    title, description, body = (
        candidate.title if edits.title is None else edits.title,
        candidate.description if edits.description is None else edits.description,
        candidate.body if edits.body is None else edits.body,
    )
    changes = memory.save(name=name, title=title, description=description, body=body,
                          type=edits.type or candidate.type, scope=edits.scope or candidate.scope,
                          create_only=True)
    if changes.fact is None:
        raise ContextEngineError("the store did not return the saved fact")
    return changes.fact


def explicit(changes: Changes, verb: str) -> WriteOutcome:
    """The outcome of a person's own write: what changed, by reference."""
    fact = changes.fact
    what = f" {fact.reference} (revision {fact.revision})" if fact is not None else ""
    return WriteOutcome(decision="explicit", reason=EXPLICIT_REASON, written=changes.changed,
                        result=f"{verb}{what}.", fact=fact,
                        archived=tuple(str(p) for p in changes.archived),
                        warnings=tuple(changes.warnings), changes=changes)
