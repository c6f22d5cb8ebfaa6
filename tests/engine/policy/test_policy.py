"""Write policy, permission and confirmation front ends (S10.1, S10.3, S10.4, S10.6, S7.4)."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner
from context_engine.errors import InvalidName, PolicyRefused
from context_engine.facts.model import Fact, normalize_key
from context_engine.paths import slugify
from context_engine.policy import write_policy
from context_engine.policy.confirmation import (
    ApprovedOnce,
    ConfirmationRequest,
    FailClosedConfirmation,
    TerminalConfirmation,
)
from context_engine.policy.notify import approval_notification
from context_engine.policy.permission import Permission, argument_digest
from context_engine.policy.write_policy import (
    Controller,
    ToolArgumentError,
    evaluate_forget,
    evaluate_remember,
    parse_remember_args,
)
from hypothesis import given
from hypothesis import strategies as st
from support import RELEASE, release_with
from support.secrets import POSITIVES

HEADLESS = Controller("headless")
INTERACTIVE = Controller("interactive")
SUBAGENT = Controller("subagent")

EXISTING = Fact(id="mem-" + "a" * 32, revision=2, name="deploy-notes", title="Deploy checklist",
                description="How deploys are run", type="project", scope="project",
                body="Run make deploy.", updated_at=datetime(2026, 7, 1, tzinfo=UTC))


def decide(args: dict[str, object], controller: Controller = HEADLESS, **kw: object):  # type: ignore[no-untyped-def]
    return evaluate_remember(parse_remember_args(args), [EXISTING], controller, **kw)  # type: ignore[arg-type]


with_ = release_with


def test_low_risk_project_fact_is_automatic() -> None:
    """The issue's example from a headless owner needs no person."""
    decision = decide(RELEASE)
    assert decision.kind == "auto"
    assert decide(RELEASE, INTERACTIVE).kind == "auto"
    assert decide(with_(type="reference")).kind == "auto"
    assert decide(with_(scope="project")).kind == "auto"


# Exact S10.1 texts, written out here so a wording change fails.
CONFIRM_CASES = [
    ("type omitted", with_(type=None),
     "only explicitly classified project/reference facts are low-risk"),
    ("type user", with_(type="user"),
     "only explicitly classified project/reference facts are low-risk"),
    ("type feedback", with_(type="feedback"),
     "only explicitly classified project/reference facts are low-risk"),
    ("scope global", with_(scope="global"), "global memory requires confirmation"),
    ("global reference", with_(name="global/release-target.md"),
     "global memory requires confirmation"),
    ("id", with_(id=EXISTING.id), "memory updates require confirmation"),
    ("expected_revision", with_(expected_revision=2), "memory updates require confirmation"),
    ("id and revision", with_(id=EXISTING.id, expected_revision=2),
     "memory updates require confirmation"),
    ("api key", with_(body="Set OPENAI_" + "API_KEY=" + "q7Zr2Kp9Lx4Vb8Nw3Mt6"),
     "memory may contain sensitive information"),
    ("e-mail", with_(body="Ask alice" + "@" + "example.com for access."),
     "memory may contain sensitive information"),
    ("same name", with_(name="Deploy Notes"), "an existing memory may already cover this fact"),
    ("same title", with_(title="deploy  CHECKLIST!"),
     "an existing memory may already cover this fact"),
    ("same description", with_(description="How deploys are run."),
     "an existing memory may already cover this fact"),
    ("no description", with_(description=None), "description and body are required"),
    ("blank body", with_(body="   "), "description and body are required"),
    ("over budget", with_(body="x" * 6001), "memory body exceeds the automatic-write budget"),
    ("no name", {"name": "!!!", "description": "???", "type": "project", "body": "b"},
     "memory name needs at least one letter or digit"),
]


@pytest.mark.parametrize(
    ("label", "args", "reason"), CONFIRM_CASES, ids=[c[0] for c in CONFIRM_CASES]
)
def test_needs_confirmation_with_exact_reason(
    label: str, args: dict[str, object], reason: str
) -> None:
    """S10.1: each failing check asks a person and names itself verbatim."""
    decision = decide(args)
    assert (decision.kind, decision.reason) == ("confirm", reason)


def test_budget_is_inclusive() -> None:
    """6,000 characters is still automatic; 6,001 is not."""
    assert decide(with_(body="x" * 6000)).kind == "auto"


def test_no_project_store() -> None:
    decision = decide(RELEASE, has_project_store=False)
    assert (decision.kind, decision.reason) == (
        "confirm",
        "no project store is available for this workspace",
    )


def test_checks_run_in_order() -> None:
    """The first failing check wins: type before scope before update before sensitive."""
    secret = "Set OPENAI_" + "API_KEY=" + "q7Zr2Kp9Lx4Vb8Nw3Mt6"
    assert decide(with_(type="user", scope="global", body=secret)).reason.startswith(
        "only explicitly"
    )
    assert (
        decide(with_(scope="global", id=EXISTING.id)).reason
        == "global memory requires confirmation"
    )
    assert (
        decide(with_(id=EXISTING.id, body=secret)).reason == "memory updates require confirmation"
    )
    assert decide(with_(name="deploy-notes", body=secret)).reason == (
        "memory may contain sensitive information"
    )


@pytest.mark.parametrize("field", ["name", "title", "description", "body"])
@pytest.mark.parametrize("rule", sorted(POSITIVES))
def test_sensitive_in_any_field_needs_confirmation(field: str, rule: str) -> None:
    """D3 through the policy: the finding names the rule, never the text."""
    sample = POSITIVES[rule][0]
    args = with_(**{field: f"x {sample} y" if field != "name" else f"rt {sample}"})
    decision = decide(args)
    assert decision.kind == "confirm"
    assert decision.reason == "memory may contain sensitive information"
    assert rule in decision.findings
    assert sample not in repr(decision)


@pytest.mark.parametrize("mode_args", [RELEASE, with_(type=None), with_(scope="global")])
def test_subagent_is_always_denied(mode_args: dict[str, object]) -> None:
    """S10.4: a subagent never writes, even a low-risk fact, and is never offered a prompt."""
    decision = decide(mode_args, SUBAGENT)
    assert (decision.kind, decision.reason) == ("denied", "subagents cannot change memory")


def test_headless_without_the_store_fails_closed() -> None:
    not_owner = Controller("headless", owns_project_store=False)
    for args in (RELEASE, with_(type="user")):
        decision = decide(args, not_owner)
        assert (decision.kind, decision.reason) == (
            "denied",
            "this controller does not own the project store",
        )


def test_interactive_without_the_store_must_confirm() -> None:
    decision = decide(RELEASE, Controller("interactive", owns_project_store=False))
    assert (decision.kind, decision.reason) == (
        "confirm",
        "this controller does not own the project store",
    )


def test_every_forget_needs_a_person() -> None:
    assert evaluate_forget(INTERACTIVE).kind == "confirm"
    assert evaluate_forget(HEADLESS).reason == "forgetting memory requires confirmation"
    assert evaluate_forget(SUBAGENT).kind == "denied"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"type": "note"}, "type must be one of user, feedback, project, reference"),
        ({"scope": "team"}, "scope must be one of project, global"),
        ({"expected_revision": "3"}, "expected_revision must be an integer"),
        ({"expected_revision": True}, "expected_revision must be an integer"),
        ({"body": 5}, "body must be a string"),
        ({"path": "/etc/passwd"}, "unknown argument: path"),
        ({"name": "global/x.md", "scope": "project"},
         'memory reference "global/x.md" does not match scope "project"'),
    ],
)
def test_invalid_arguments(args: dict[str, object], message: str) -> None:
    with pytest.raises(ToolArgumentError) as info:
        parse_remember_args(args)
    assert info.value.message == message


# -- permission (S10.3) ------------------------------------------------------------------------


def test_permission_is_consumed_once() -> None:
    permission = Permission("remember", RELEASE)
    permission.consume("remember", dict(reversed(list(RELEASE.items()))))  # key order is irrelevant
    assert permission.used
    with pytest.raises(PolicyRefused):
        permission.consume("remember", RELEASE)


def test_permission_is_bound_to_the_exact_arguments() -> None:
    permission = Permission("remember", RELEASE)
    with pytest.raises(PolicyRefused):
        permission.consume("remember", with_(body="Release artifacts are published from main-v3."))
    with pytest.raises(PolicyRefused):
        permission.consume("forget", RELEASE)
    assert not permission.used
    assert argument_digest("remember", RELEASE) != argument_digest(
        "remember", with_(type="reference")
    )


# -- confirmation front ends (S10.6) -----------------------------------------------------------


def request(**changes: object) -> ConfirmationRequest:
    fields: dict[str, object] = {
        "tool": "remember",
        "reason": "memory updates require confirmation",
        "findings": ("email",),
        "reference": "project/deploy-notes.md",
        "scope": "project",
        "type": "project",
        "content": "name: deploy-notes\n\nRun make deploy-v2.\n",
        "diff": "--- a\n+++ b\n-Run make deploy.\n+Run make deploy-v2.\n",
        "revision_from": 2,
        "revision_to": 3,
        "digest": "d1",
    }
    fields.update(changes)
    return ConfirmationRequest(**fields)  # type: ignore[arg-type]


def test_fail_closed_always_refuses() -> None:
    assert FailClosedConfirmation().confirm(request()) is False


def test_approved_once_answers_one_matching_request() -> None:
    approval = ApprovedOnce("d1")
    assert approval.confirm(request(digest="other")) is False
    assert approval.confirm(request()) is True
    assert approval.confirm(request()) is False


@pytest.mark.parametrize(("answer", "expected"), [("y\n", True), ("n\n", False), ("\n", False)])
def test_terminal_prompt_shows_tool_reason_and_diff(answer: str, expected: bool) -> None:
    """Default No; the prompt and the diff go to stderr so stdout stays machine-readable."""
    with CliRunner().isolation(input=answer) as (out, err, *_):
        assert TerminalConfirmation().confirm(request()) is expected
        shown = err.getvalue().decode() if isinstance(err, io.BytesIO) else ""
        printed = out.getvalue().decode()
    text = shown or printed
    assert "`remember`" in text
    assert "memory updates require confirmation" in text
    assert "+Run make deploy-v2." in text
    assert "revision 2 → 3" in text
    assert "email" in text
    assert "[y/N]" in text


def test_terminal_prompt_shows_content_without_diff() -> None:
    with CliRunner().isolation(input="n\n") as (out, err, *_):
        TerminalConfirmation().confirm(request(diff="", revision_from=None, revision_to=1))
        text = err.getvalue().decode() + out.getvalue().decode()
    assert "Run make deploy-v2." in text
    assert "new (revision 1)" in text


def test_notification_carries_the_tool_name_only() -> None:
    """S7.4: nothing of the fact leaves the process in a notification."""
    text = approval_notification(request())
    assert "remember" in text
    for private in ("deploy", "Run make", "memory updates", "email", "project/"):
        assert private not in text


# -- fast duplicate keys agree with the model's definitions ------------------------------------


NAMES = st.text(alphabet=st.sampled_from("aZ09-_ .\n\té记ǅİⅣ①٣ß"), max_size=24) | st.text(
    max_size=12
)


@pytest.mark.slow
@given(NAMES)
def test_fast_keys_match_normalize_key_and_slugify(text: str) -> None:
    """The duplicate check's C-level keys equal ``normalize_key`` and ``slugify`` (S3.7, S7.2)."""
    assert write_policy._key(text) == normalize_key(text)
    try:
        expected = slugify(text)
    except InvalidName:
        expected = ""
    assert write_policy._name_slug(text) == expected


def test_findings_are_reported_whatever_the_reason() -> None:
    """A person approving an update still sees which rules matched."""
    body = "Owner: carol" + "@" + "example.com"
    decision = decide(with_(id=EXISTING.id, body=body))
    assert decision.reason == "memory updates require confirmation"
    assert decision.findings == ("email",)
    assert decide(with_(type="user", body=body), SUBAGENT).findings == ("email",)
