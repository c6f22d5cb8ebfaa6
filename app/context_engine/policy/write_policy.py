"""The write policy: may an agent's remember/forget run without a person? (S10.1, S10.4).

``evaluate_remember`` runs the S10.1 checks in their fixed order; the first failure gives the
exact reason. A failure means a person must confirm (``confirm``); when no person can ever be
asked for this controller (a subagent, or a headless controller that does not own the project
store) the answer is ``denied`` instead. Approval modes never change the outcome (S10.4).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from ..errors import ContextEngineError, InvalidName
from ..facts.model import FACT_TYPES, SCOPES, Fact, FactFields, Scope
from ..paths import slugify
from ..tools.spec import REMEMBER_ARGUMENTS
from .sensitive import Finding, rule_ids, scan_fields

DecisionKind = Literal["auto", "confirm", "denied"]
ControllerKind = Literal["interactive", "headless", "subagent"]
Mode = Literal["ask", "auto", "yolo"]

CONTROLLER_KINDS: tuple[ControllerKind, ...] = ("interactive", "headless", "subagent")
MODES: tuple[Mode, ...] = ("ask", "auto", "yolo")

AUTO_WRITE_BODY_BUDGET = 6000

# S10.1 reasons, verbatim; the order of the checks is the order of this block.
REASON_REQUIRED = "description and body are required"
REASON_NO_PROJECT_STORE = "no project store is available for this workspace"
REASON_TYPE = "only explicitly classified project/reference facts are low-risk"
REASON_GLOBAL = "global memory requires confirmation"
REASON_UPDATE = "memory updates require confirmation"
REASON_NAME = "memory name needs at least one letter or digit"
REASON_BUDGET = "memory body exceeds the automatic-write budget"
REASON_SENSITIVE = "memory may contain sensitive information"
REASON_DUPLICATE = "an existing memory may already cover this fact"
REASON_NOT_OWNER = "this controller does not own the project store"
REASON_SUBAGENT = "subagents cannot change memory"
# Outside S10.1: every forget needs a person (S10.4), and the auto path's own reason.
REASON_FORGET = "forgetting memory requires confirmation"
REASON_LOW_RISK = "new explicitly classified project/reference fact"

FORGET_ARGUMENTS = ("name",)

REFERENCE_PATTERN = re.compile(r"^(project|global)/(.+?)(?:\.md)?$")


class ToolArgumentError(ContextEngineError):
    """A tool call whose arguments do not fit the tool's schema."""

    code = "invalid_arguments"


@dataclass(frozen=True, slots=True)
class Controller:
    """Who is acting (S1) and whether it owns the workspace's project store."""

    kind: ControllerKind
    owns_project_store: bool = True

    @property
    def can_ask_person(self) -> bool:
        """False when no confirmation could ever reach a person: fail closed (S10.4)."""
        if self.kind == "subagent":
            return False
        return self.kind == "interactive" or self.owns_project_store

    @property
    def refusal(self) -> str:
        """Why this controller cannot obtain a confirmation."""
        return REASON_SUBAGENT if self.kind == "subagent" else REASON_NOT_OWNER


@dataclass(frozen=True, slots=True)
class Decision:
    """The policy's answer: ``auto`` (write now), ``confirm`` (ask a person) or ``denied``."""

    kind: DecisionKind
    reason: str
    findings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RememberArgs(FactFields):
    """Validated ``remember`` arguments (S9.2); None means not given."""

    id: str | None = None
    expected_revision: int | None = None

    def as_fields(self) -> dict[str, str]:
        """The string fields that will be written (what the sensitive scan reads)."""
        values = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "body": self.body,
            "id": self.id,
        }
        return {key: value for key, value in values.items() if value is not None}


def optional_text(args: Mapping[str, object], key: str) -> str | None:
    """A string argument; empty or missing is None."""
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolArgumentError(f"{key} must be a string")
    return value if value.strip() else None


def reject_unknown(args: Mapping[str, object], allowed: Iterable[str]) -> None:
    """Unknown keys are errors: the schemas say ``additionalProperties: false``."""
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise ToolArgumentError(f"unknown argument: {unknown[0]}")


def parse_remember_args(args: Mapping[str, object]) -> RememberArgs:
    """Validate ``remember`` arguments; errors use the S9.1 wording."""
    reject_unknown(args, REMEMBER_ARGUMENTS)
    fact_type = optional_text(args, "type")
    if fact_type is not None and fact_type not in FACT_TYPES:
        raise ToolArgumentError("type must be one of user, feedback, project, reference")
    scope_text = optional_text(args, "scope")
    if scope_text is not None and scope_text not in SCOPES:
        raise ToolArgumentError("scope must be one of project, global")
    scope: Scope | None = None
    if scope_text is not None:
        scope = "global" if scope_text == "global" else "project"
    name = optional_text(args, "name")
    reference = REFERENCE_PATTERN.match(name.strip()) if name else None
    if reference:  # ``project/x.md`` names the scope too
        if scope is not None and scope != reference.group(1):
            raise ToolArgumentError(f'memory reference "{name}" does not match scope "{scope}"')
        scope = "global" if reference.group(1) == "global" else "project"
        name = reference.group(2)
    revision = args.get("expected_revision")
    if revision is not None and (isinstance(revision, bool) or not isinstance(revision, int)):
        raise ToolArgumentError("expected_revision must be an integer")
    return RememberArgs(
        name=name,
        title=optional_text(args, "title"),
        description=optional_text(args, "description"),
        type=fact_type,
        scope=scope,
        body=optional_text(args, "body"),
        id=optional_text(args, "id"),
        expected_revision=revision,
    )


def parse_forget_args(args: Mapping[str, object]) -> str:
    """Validate ``forget`` arguments: the one ref to archive."""
    reject_unknown(args, FORGET_ARGUMENTS)
    ref = optional_text(args, "name")
    if ref is None:
        raise ToolArgumentError("name is required")
    return ref


def derive_name(args: RememberArgs) -> str:
    """The name, else the title, else the description, slugged (S9.2); InvalidName if none."""
    source = args.name or args.title or args.description or ""
    return slugify(source)


_NOT_ALNUM = re.compile(r"[\W_]+")
_SLUG_SHAPED = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


def _key(text: str) -> str:
    """``normalize_key`` (lowercase letters and digits) in one C-level pass: the duplicate
    check runs it over every active fact, and ``re``'s ``\\w`` is exactly ``isalnum`` + ``_``."""
    return _NOT_ALNUM.sub("", text.lower())


def _display_key(fact_title: str, name: str) -> str:
    """Normalized display title (S3.8): the title, else the name with ``-`` as spaces."""
    return _key(fact_title or name)


def _name_slug(name: str) -> str:
    """A stored name's slug; names the engine wrote are slugs already (the common, fast path)."""
    if _SLUG_SHAPED.fullmatch(name) and name == name.lower() and len(name.encode("utf-8")) <= 252:
        return name
    try:
        return slugify(name)
    except InvalidName:
        return ""


def find_duplicates(args: RememberArgs, name: str, active: Iterable[Fact]) -> tuple[Fact, ...]:
    """Active facts (either store) with the same name slug, normalized title or description."""
    title_key = _display_key(args.title or "", name)
    description_key = _key(args.description or "")
    hits = []
    for fact in active:
        same_name = _name_slug(fact.name) == name
        same_title = bool(title_key) and _display_key(fact.title, fact.name) == title_key
        same_description = bool(description_key) and _key(fact.description) == description_key
        if same_name or same_title or same_description:
            hits.append(fact)
    return tuple(hits)


def _first_failure(
    args: RememberArgs,
    active: Iterable[Fact],
    has_project_store: bool,
    findings: tuple[Finding, ...],
) -> str | None:
    """The reason of the first failing S10.1 check before the controller's (None: all pass)."""
    if args.description is None or args.body is None:
        return REASON_REQUIRED
    if not has_project_store:
        return REASON_NO_PROJECT_STORE
    if args.type not in ("project", "reference"):
        return REASON_TYPE
    if args.scope not in (None, "project"):
        return REASON_GLOBAL
    if args.id is not None or args.expected_revision is not None:
        return REASON_UPDATE
    try:
        name = derive_name(args)
    except InvalidName:
        return REASON_NAME
    if len(args.body.strip()) > AUTO_WRITE_BODY_BUDGET:
        return REASON_BUDGET
    if findings:
        return REASON_SENSITIVE
    if find_duplicates(args, name, active):
        return REASON_DUPLICATE
    return None


def evaluate_remember(
    args: RememberArgs,
    active: Iterable[Fact],
    controller: Controller,
    *,
    has_project_store: bool = True,
) -> Decision:
    """S10.1 in order; ``active`` is every active fact of both stores.

    The findings are reported whatever the reason, so a person approving an update also sees
    that it holds something secret-looking.
    """
    findings = scan_fields(args.as_fields())
    reason = _first_failure(args, active, has_project_store, findings)
    if reason is None:
        if controller.kind != "subagent" and controller.owns_project_store:
            return Decision("auto", REASON_LOW_RISK)
        reason = controller.refusal
    if not controller.can_ask_person:
        return Decision("denied", controller.refusal, rule_ids(findings))
    return Decision("confirm", reason, rule_ids(findings))


def evaluate_forget(controller: Controller) -> Decision:
    """Every forget needs a person (S10.4); controllers that cannot ask one are refused."""
    if not controller.can_ask_person:
        return Decision("denied", controller.refusal)
    return Decision("confirm", REASON_FORGET)
