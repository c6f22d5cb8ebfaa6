"""The one write door's vocabulary: ops, actors and the one outcome (``Catalog.apply``).

Every write of a workspace's context, from any surface, is ``catalog.apply(op, actor)``:
``op`` says what to change (``Save | Forget | Restore | Recover | Accept``, all frozen) and
``actor`` who asks (a ``Person`` at a surface, or an ``Agent`` with its controller and mode).
The local catalog decides with the write policy, asks for a confirmation when the policy says
so, writes through the store and answers a ``WriteOutcome``; a remote catalog sends the same op
and actor to its server, which calls the same ``apply``. This module imports nothing heavy:
the CLI loads it on every start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..records import record
from ..tools.spec import REMEMBER_ARGUMENTS

if TYPE_CHECKING:
    from ..facts.changes import Changes
    from ..facts.model import Fact
    from ..suggestions.accept import Edits
    from ..suggestions.model import MemoryCandidate, SkillCandidate

WriteDecision = Literal["auto", "confirm", "denied", "explicit"]
Surface = Literal["cli", "app"]
ControllerName = Literal["interactive", "headless", "subagent"]
ModeName = Literal["ask", "auto", "yolo"]

SURFACES: tuple[Surface, ...] = ("cli", "app")
SAVE_FIELDS = REMEMBER_ARGUMENTS  # the ``remember`` tool's arguments (S9.2)


# -- ops -----------------------------------------------------------------------------------------


@record
class Save:
    """Create or update one fact; the fields are the ``remember`` tool's (S9.2), None = not given.

    ``expected_digest`` is the sha256 of the bytes the editor read (RELIABILITY C6): a person's
    update fails when the file changed since, even at the same revision. ``create_only`` makes
    an explicit save fail when the name is already active (S4.2).
    """

    name: str | None = None
    title: str | None = None
    description: str | None = None
    type: str | None = None
    scope: str | None = None
    body: str | None = None
    id: str | None = None
    expected_revision: int | None = None
    expected_digest: str | None = None
    create_only: bool = False

    @classmethod
    def from_args(cls, args: Mapping[str, object]) -> Save:
        """The op for ``remember`` tool arguments; wrong keys or types raise the tool's error."""
        from ..policy.write_policy import ToolArgumentError, optional_text, reject_unknown

        reject_unknown(args, SAVE_FIELDS)
        revision = args.get("expected_revision")
        if revision is not None and (isinstance(revision, bool) or not isinstance(revision, int)):
            raise ToolArgumentError("expected_revision must be an integer")
        text = {key: optional_text(args, key) for key in SAVE_FIELDS[:-1]}
        return cls(
            name=text["name"],
            title=text["title"],
            description=text["description"],
            type=text["type"],
            scope=text["scope"],
            body=text["body"],
            id=text["id"],
            expected_revision=revision,
        )

    def args(self) -> dict[str, object]:
        """The given fields as ``remember`` arguments (what the policy and permission see)."""
        values: dict[str, object] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "type": self.type,
            "scope": self.scope,
            "body": self.body,
            "id": self.id,
            "expected_revision": self.expected_revision,
        }
        return {key: value for key, value in values.items() if value is not None}


@record
class Forget:
    """Archive what ``ref`` names (S4.7): an id, a reference's scope, or a name everywhere."""

    ref: str


@record
class Restore:
    """Make snapshot ``revision`` of ``ref`` the newest revision (S4.6)."""

    ref: str
    revision: int
    expected_revision: int | None = None


@record
class Recover:
    """Bring an archive entry back at a new revision (S4.8); the path is the catalog's own."""

    archive_path: str


@record
class Accept:
    """Accept one candidate of a fresh suggestion scan, maybe edited first (S11.5).

    In process the candidate the person looked at may come along (``candidate``); otherwise,
    and always over the wire, the catalog finds ``candidate_id`` in a fresh scan.
    """

    candidate_id: str
    edits: Edits | None = None
    candidate: MemoryCandidate | SkillCandidate | None = None


Op = Save | Forget | Restore | Recover | Accept


# -- actors --------------------------------------------------------------------------------------


@record
class Person:
    """A person acting at a surface: their own action is the confirmation (S10.5).

    The one exception is a forget in the app: the click opens the confirmation dialog, and the
    person's answer there is the action (S10.4), asked once — locally or remotely.
    """

    surface: Surface = "cli"


@record
class Agent:
    """An agent's tool call: the write policy decides (S10); the mode never bypasses it."""

    controller: ControllerName = "interactive"
    mode: ModeName = "ask"
    owns_store: bool = True


Actor = Person | Agent


# -- the one outcome -----------------------------------------------------------------------------


@record
class WriteOutcome:
    """What one ``apply`` (or agent tool call) did; ``as_json()`` is the S12 decision object.

    ``decision`` is the policy's (``explicit``: a person's own action). ``ran`` is False when the
    call was refused or failed (CLI exit 1). ``fact``/``archived``/``path`` say what was written
    (``path``: an accepted skill's SKILL.md). ``warnings`` (post-commit problems such as a
    MEMORY.md not rewritten) and ``changes`` (for turn-tail notes) stay in process: they are not
    sent over the wire.
    """

    decision: WriteDecision
    reason: str
    written: bool
    result: str
    ran: bool = True
    findings: tuple[str, ...] = ()
    fact: Fact | None = None
    archived: tuple[str, ...] = ()
    path: str | None = None
    warnings: tuple[str, ...] = ()
    changes: Changes | None = None

    def as_json(self) -> dict[str, Any]:
        """``{"decision", "reason", "written", "result"}`` (S12)."""
        return {
            "decision": self.decision,
            "reason": self.reason,
            "written": self.written,
            "result": self.result,
        }
