"""The confirmation service: one protocol, several front ends (S10.6).

The core builds a ``ConfirmationRequest`` and asks a ``ConfirmationService``; the terminal
front end prompts on a TTY, the fail-closed one always refuses, the one-time approval
answers a request approved earlier out of band (an MCP elicitation), and the app's Qt dialog
implements the same protocol in ``ui/``.
"""

from __future__ import annotations

import sys
from typing import Protocol

from ..facts.model import Fact
from ..records import record


@record
class ConfirmationRequest:
    """Everything a person needs to decide on one memory change."""

    tool: str
    reason: str
    findings: tuple[str, ...]
    reference: str
    scope: str
    type: str
    content: str
    diff: str
    revision_from: int | None
    revision_to: int | None
    digest: str

    @property
    def revision_label(self) -> str:
        """``new (revision 1)``, ``revision 3 → 4`` or ``revision 3 (archived)``."""
        if self.revision_from is None:
            return f"new (revision {self.revision_to or 1})"
        if self.revision_to is None:
            return f"revision {self.revision_from} (archived)"
        return f"revision {self.revision_from} → {self.revision_to}"


class ConfirmationService(Protocol):
    """Asks a person; True only for an explicit yes."""

    def confirm(self, request: ConfirmationRequest) -> bool:
        """Ask about ``request``; must return False when no person answers."""
        ...


def render_fact(
    name: str, title: str, description: str, fact_type: str, scope: str, body: str
) -> str:
    """The text a person reviews: the key fields, a blank line, the body."""
    lines = [f"name: {name}"]
    if title:
        lines.append(f"title: {title}")
    lines += [f"description: {description}", f"type: {fact_type}", f"scope: {scope}", ""]
    return "\n".join(lines) + "\n" + body.strip() + "\n"


def render_existing(fact: Fact) -> str:
    """``render_fact`` for an active fact."""
    return render_fact(fact.name, fact.title, fact.description, fact.type, fact.scope, fact.body)


def unified_diff(old: str, new: str, label: str, revision_from: int, revision_to: int) -> str:
    """A unified diff of two renderings, labelled by reference and revision."""
    import difflib  # writes only

    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"{label} (revision {revision_from})",
            tofile=f"{label} (revision {revision_to})",
        )
    )


class FailClosedConfirmation:
    """No person is available (no TTY, headless, subagent): always refuse."""

    def confirm(self, request: ConfirmationRequest) -> bool:
        """Refuse."""
        return False


class TerminalConfirmation:
    """Prompt on the terminal (stderr, so stdout stays machine-readable); default No."""

    def confirm(self, request: ConfirmationRequest) -> bool:
        """Show tool, reason, target and the content or diff; ask y/N."""
        import click  # only when a person is asked: a read command never loads it

        click.echo("", err=True)
        click.echo(f"The agent's `{request.tool}` call needs your confirmation.", err=True)
        click.echo(f"Reason: {request.reason}", err=True)
        if request.findings:
            click.echo(f"Sensitive-content rules: {', '.join(request.findings)}", err=True)
        click.echo(f"Target: {request.reference} — {request.revision_label}", err=True)
        click.echo(f"Scope/type: {request.scope}/{request.type}", err=True)
        click.echo("", err=True)
        click.echo(request.diff or request.content, err=True, nl=False)
        click.echo("", err=True)
        return click.confirm("Apply this memory change?", default=False, err=True)


class ApprovedOnce:
    """A confirmation given earlier (e.g. an MCP elicitation) for one exact argument digest.

    It answers yes at most once, and only to a request with that digest.
    """

    def __init__(self, digest: str) -> None:
        self._digest = digest
        self._spent = False

    def confirm(self, request: ConfirmationRequest) -> bool:
        """Yes once, for the approved arguments only."""
        if self._spent or request.digest != self._digest:
            return False
        self._spent = True
        return True


def person_at_terminal() -> bool:
    """Whether a person can answer a prompt here: stdin and stderr (the prompt) are TTYs."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def default_confirmation(controller: str) -> ConfirmationService:
    """A terminal prompt for a person at a TTY; fail closed for everyone else (S10.6).

    Both stdin (the answer) and stderr (where the prompt goes) must be a terminal.
    """
    if controller == "interactive" and person_at_terminal():
        return TerminalConfirmation()
    return FailClosedConfirmation()
