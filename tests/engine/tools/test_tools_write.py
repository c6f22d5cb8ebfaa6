"""remember/forget through the write policy against real stores (S9.2, S10, S7.4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from context_engine.catalog.policy_writes import policy_write as run_write_tool
from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.policy.confirmation import ApprovedOnce, ConfirmationRequest
from context_engine.policy.permission import argument_digest
from context_engine.policy.write_policy import (
    REASON_DUPLICATE,
    REASON_GLOBAL,
    REASON_SENSITIVE,
    REASON_TYPE,
    REASON_UPDATE,
    Controller,
)
from support import APP_DIR, RELEASE, release_with

HEADLESS = Controller("headless")
INTERACTIVE = Controller("interactive")


class Spy:
    """A confirmation front end that records each request and answers ``answer``."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.requests: list[ConfirmationRequest] = []

    def confirm(self, request: ConfirmationRequest) -> bool:
        self.requests.append(request)
        return self.answer


@pytest.fixture
def paths(tmp_path: Path) -> EnginePaths:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".git").mkdir()
    return EnginePaths.resolve(home=tmp_path / "home", workspace=workspace)


@pytest.fixture
def memory(paths: EnginePaths) -> Memory:
    return Memory(paths)


def store_bytes(paths: EnginePaths) -> dict[str, bytes]:
    """Every file under both stores (what "nothing was written" compares)."""
    found: dict[str, bytes] = {}
    for root in (paths.project_store, paths.global_store):
        if root.is_dir():
            for file in sorted(root.rglob("*")):
                if file.is_file() and file.name != ".lock":
                    found[str(file)] = file.read_bytes()
    return found


def seed(memory: Memory) -> None:
    memory.save(name="deploy-notes", title="Deploy checklist", description="How deploys are run",
                type="project", body="Run make deploy.")


def test_low_risk_fact_from_headless_owner_is_written_without_asking(
    memory: Memory, paths: EnginePaths
) -> None:
    spy = Spy(answer=False)
    outcome = run_write_tool(memory, "remember", RELEASE, HEADLESS, "ask", spy)
    assert outcome.as_json() == {
        "decision": "auto",
        "reason": "new explicitly classified project/reference fact",
        "written": True,
        "result": "Saved project/release-target.md (revision 1).",
    }
    assert spy.requests == []
    fact = memory.resolve("project/release-target.md")
    assert fact.body.strip() == "Release artifacts are published from main-v2."
    assert (fact.type, fact.scope, fact.revision) == ("project", "project", 1)
    assert str(paths.home) not in json.dumps(outcome.as_json())


_with = release_with


# The tool path reports the policy's own reasons (their wording is test_policy's business).
CASES = [
    ("type omitted", _with(type=None), REASON_TYPE),
    ("scope global", _with(scope="global"), REASON_GLOBAL),
    ("type user", _with(type="user"), REASON_TYPE),
    ("type feedback", _with(type="feedback"), REASON_TYPE),
    ("id+expected_revision", "UPDATE", REASON_UPDATE),
    ("api key", _with(body="Deploy with ACCESS_" + "KEY: " + "Zq8vT3mK9pL2xR7w"), REASON_SENSITIVE),
    ("e-mail", _with(body="Release owner: bob" + "@" + "example.org"), REASON_SENSITIVE),
    ("same name", _with(name="deploy-notes"), REASON_DUPLICATE),
    ("same title", _with(title="Deploy checklist"), REASON_DUPLICATE),
    ("same description", _with(description="How deploys are run"), REASON_DUPLICATE),
]


def _case_args(memory: Memory, args: object) -> dict[str, object]:
    if args == "UPDATE":
        existing = memory.resolve("deploy-notes")
        return {
            "id": existing.id,
            "expected_revision": existing.revision,
            "description": "How deploys are run",
            "body": "Run make deploy-v2.",
            "type": "project",
        }
    assert isinstance(args, dict)
    return args


@pytest.mark.slow
@pytest.mark.parametrize(("label", "args", "reason"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("mode", ["ask", "auto", "yolo"])
def test_needs_a_person_and_without_one_nothing_is_written(
    memory: Memory, paths: EnginePaths, label: str, args: object, reason: str, mode: str
) -> None:
    """S10.1/S10.4: every mode asks; fail-closed leaves the stores byte-identical."""
    seed(memory)
    call = _case_args(memory, args)
    before = store_bytes(paths)
    spy = Spy(answer=False)
    outcome = run_write_tool(memory, "remember", call, HEADLESS, mode, spy)
    assert (outcome.decision, outcome.reason, outcome.written) == ("confirm", reason, False)
    assert outcome.result == f"Refused: {reason}. Nothing was written."
    assert len(spy.requests) == 1 and spy.requests[0].reason == reason
    assert store_bytes(paths) == before


@pytest.mark.slow
@pytest.mark.parametrize(("label", "args", "reason"), CASES, ids=[c[0] for c in CASES])
def test_a_person_can_approve(memory: Memory, label: str, args: object, reason: str) -> None:
    seed(memory)
    call = _case_args(memory, args)
    outcome = run_write_tool(memory, "remember", call, INTERACTIVE, "ask", Spy(answer=True))
    assert (outcome.decision, outcome.written) == ("confirm", True), outcome.result


def test_confirmed_update_shows_a_diff_and_bumps_the_revision(memory: Memory) -> None:
    seed(memory)
    existing = memory.resolve("deploy-notes")
    spy = Spy(answer=True)
    call = {
        "id": existing.id,
        "expected_revision": 1,
        "description": "x",
        "body": "Run make deploy-v2.",
    }
    outcome = run_write_tool(memory, "remember", call, INTERACTIVE, "ask", spy)
    request = spy.requests[0]
    assert (request.revision_from, request.revision_to) == (1, 2)
    assert "-Run make deploy." in request.diff and "+Run make deploy-v2." in request.diff
    assert outcome.result == "Updated project/deploy-notes.md (revision 1 → 2)."
    assert memory.resolve(existing.id).revision == 2


def test_stale_expected_revision_is_not_offered_to_a_person(memory: Memory) -> None:
    seed(memory)
    existing = memory.resolve("deploy-notes")
    spy = Spy(answer=True)
    call = {"id": existing.id, "expected_revision": 7, "description": "x", "body": "y"}
    outcome = run_write_tool(memory, "remember", call, INTERACTIVE, "ask", spy)
    assert spy.requests == [] and not outcome.written
    assert outcome.result == "Not written: memory revision conflict: expected 7, found 1."


def test_sensitive_request_names_rules_not_text(memory: Memory) -> None:
    secret = "Zq8vT3mK9pL2xR7w"
    spy = Spy(answer=False)
    outcome = run_write_tool(
        memory, "remember", _with(body="ACCESS_" + "KEY: " + secret), HEADLESS, "ask", spy
    )
    assert spy.requests[0].findings == ("keyword_assignment",)
    assert secret not in json.dumps(outcome.as_json())


@pytest.mark.parametrize("args", [RELEASE, _with(type=None), _with(scope="global")])
@pytest.mark.parametrize("mode", ["ask", "yolo"])
def test_subagent_remember_is_refused(
    memory: Memory, paths: EnginePaths, args: dict[str, object], mode: str
) -> None:
    spy = Spy(answer=True)  # even a willing front end is never consulted
    outcome = run_write_tool(memory, "remember", args, Controller("subagent"), mode, spy)
    assert (outcome.decision, outcome.written) == ("denied", False)
    assert outcome.reason == "subagents cannot change memory"
    assert spy.requests == [] and store_bytes(paths) == {}


def test_headless_that_does_not_own_the_store_fails_closed(
    memory: Memory, paths: EnginePaths
) -> None:
    who = Controller("headless", owns_project_store=False)
    outcome = run_write_tool(memory, "remember", RELEASE, who, "yolo", Spy(answer=True))
    assert (outcome.decision, outcome.written) == ("denied", False)
    assert store_bytes(paths) == {}


def test_permission_is_not_replayed(memory: Memory) -> None:
    """S10.3: the same arguments again are a new decision (now a duplicate needing a person)."""
    first = run_write_tool(memory, "remember", RELEASE, HEADLESS, "yolo", Spy(answer=False))
    second = run_write_tool(memory, "remember", RELEASE, HEADLESS, "yolo", Spy(answer=False))
    assert (first.decision, first.written) == ("auto", True)
    assert (second.decision, second.written) == ("confirm", False)
    assert second.reason == "an existing memory may already cover this fact"
    assert memory.resolve("release-target").revision == 1


def test_out_of_band_approval_is_spent_by_one_write(memory: Memory) -> None:
    """An approval (MCP elicitation) binds one digest and is used once."""
    args = _with(type="user", name="prefers-tabs", description="Tabs", body="Use tabs.")
    approval = ApprovedOnce(argument_digest("remember", args))
    first = run_write_tool(memory, "remember", args, HEADLESS, "ask", approval)
    second = run_write_tool(memory, "remember", args, HEADLESS, "ask", approval)
    assert first.written and not second.written
    other = _with(type="user", name="prefers-spaces", description="Spaces", body="Use spaces.")
    assert not run_write_tool(memory, "remember", other, HEADLESS, "ask", ApprovedOnce("x")).written


CREATE_SCRIPT = """
import sys
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
paths = EnginePaths.resolve(home=sys.argv[1], workspace=sys.argv[2])
Memory(paths).save(name="release-target", description="written by another process",
                   type="project", body="Other process body.", create_only=True)
"""


def _other_process(paths: EnginePaths, script: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(APP_DIR))
    subprocess.run([sys.executable, "-c", script, str(paths.home), str(paths.workspace)],
                   check=True, env=env, timeout=60)


def test_fact_created_by_another_process_between_check_and_write_survives(
    memory: Memory, paths: EnginePaths
) -> None:
    """S10.3/RELIABILITY C8: the automatic write is create-only under the store lock."""
    outcome = run_write_tool(memory, "remember", RELEASE, HEADLESS, "yolo", Spy(answer=False),
                             before_write=lambda: _other_process(paths, CREATE_SCRIPT))
    assert (outcome.decision, outcome.written) == ("auto", False)
    assert outcome.result == (
        'Not written: memory "release-target" already exists; automatic writes are create-only.'
    )
    assert memory.resolve("release-target").body.strip() == "Other process body."


UPDATE_SCRIPT = """
import sys
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
paths = EnginePaths.resolve(home=sys.argv[1], workspace=sys.argv[2])
Memory(paths).save(name="deploy-notes", body="Changed by another process.", expected_revision=1)
"""


@pytest.mark.slow
def test_confirmed_update_never_overwrites_a_newer_revision(
    memory: Memory, paths: EnginePaths
) -> None:
    """What the person reviewed is what gets replaced, or nothing is."""
    seed(memory)
    args = {"name": "deploy-notes", "description": "How deploys are run", "body": "Mine."}
    outcome = run_write_tool(memory, "remember", args, INTERACTIVE, "ask", Spy(answer=True),
                             before_write=lambda: _other_process(paths, UPDATE_SCRIPT))
    assert not outcome.written
    assert outcome.result.startswith("Not written: memory revision conflict: expected 1, found 2")
    assert memory.resolve("deploy-notes").body.strip() == "Changed by another process."


# -- forget ------------------------------------------------------------------------------------


def test_forget_needs_a_person(memory: Memory, paths: EnginePaths) -> None:
    seed(memory)
    before = store_bytes(paths)
    for mode in ("ask", "auto", "yolo"):
        outcome = run_write_tool(
            memory, "forget", {"name": "deploy-notes"}, HEADLESS, mode, Spy(False)
        )
        assert (outcome.decision, outcome.written) == ("confirm", False)
        assert outcome.reason == "forgetting memory requires confirmation"
    assert store_bytes(paths) == before


def test_confirmed_forget_archives_by_reference(memory: Memory, paths: EnginePaths) -> None:
    seed(memory)
    spy = Spy(answer=True)
    outcome = run_write_tool(memory, "forget", {"name": "deploy-notes"}, INTERACTIVE, "ask", spy)
    assert outcome.as_json() == {
        "decision": "confirm",
        "reason": "forgetting memory requires confirmation",
        "written": True,
        "result": "Archived project/deploy-notes.md.",
    }
    assert "Run make deploy." in spy.requests[0].content
    assert memory.snapshot().facts == ()
    assert len(memory.list_archived()) == 1


def test_forget_of_nothing_asks_nobody(memory: Memory) -> None:
    spy = Spy(answer=True)
    outcome = run_write_tool(memory, "forget", {"name": "nope"}, INTERACTIVE, "ask", spy)
    assert (outcome.written, outcome.ran, spy.requests) == (False, True, [])


def test_subagent_forget_is_refused(memory: Memory, paths: EnginePaths) -> None:
    seed(memory)
    before = store_bytes(paths)
    outcome = run_write_tool(
        memory, "forget", {"name": "deploy-notes"}, Controller("subagent"), "yolo", Spy(True)
    )
    assert (outcome.decision, outcome.written) == ("denied", False)
    assert store_bytes(paths) == before


def test_invalid_arguments_and_modes_are_refused(memory: Memory) -> None:
    bad = run_write_tool(memory, "remember", _with(type="note"), HEADLESS, "ask", Spy(True))
    assert (
        bad.as_json()["result"] == "Error: type must be one of user, feedback, project, reference"
    )
    assert not run_write_tool(memory, "remember", RELEASE, HEADLESS, "always", Spy(True)).written
    assert not run_write_tool(memory, "delete", RELEASE, HEADLESS, "ask", Spy(True)).ran


def test_memory_tool_dispatch_is_read_only(memory: Memory) -> None:
    seed(memory)
    engine = ContextEngine(memory.paths, memory=memory)
    outcome = engine.run_tool("memory", {"operation": "list"}, controller="subagent")
    assert (outcome.decision, outcome.written, outcome.ran) == ("auto", False, True)
    assert "project/deploy-notes.md" in outcome.result
    bad = engine.run_tool("memory", {"operation": "list", "type": "x"}, controller="headless")
    assert not bad.ran and "type must be one of" in bad.result


# -- fixed tool definitions (S9.2: part of the cache-stable prompt) ----------------------------

SPEC_DUMP = (
    "import json, sys; from context_engine.tools.spec import TOOL_SPECS; "
    "sys.stdout.write(json.dumps([[s.name, s.description, dict(s.schema)] for s in TOOL_SPECS], "
    "sort_keys=True))"
)


def test_tool_definitions_use_the_spec_argument_names() -> None:
    from context_engine.tools import write as tools_write
    from context_engine.tools.spec import TOOL_SPECS, tool_spec

    assert [spec.name for spec in TOOL_SPECS] == ["memory", "remember", "forget"]
    assert list(tool_spec("memory").schema["properties"]) == [
        "operation",
        "query",
        "name",
        "type",
        "scope",
        "limit",
    ]
    assert list(tool_spec("remember").schema["properties"]) == [
        "name", "title", "description", "type", "scope", "body", "id", "expected_revision",
    ]  # fmt: skip
    assert list(tool_spec("forget").schema["properties"]) == ["name"]
    assert dict(tool_spec("remember").schema) == tools_write.REMEMBER_SCHEMA
    assert dict(tool_spec("forget").schema) == tools_write.FORGET_SCHEMA
    assert tool_spec("remember").description == tools_write.REMEMBER_DESCRIPTION


def test_tool_definitions_are_byte_identical_across_processes(tmp_path: Path) -> None:
    """Nothing in a definition depends on the workspace, home, cwd or time."""
    outputs = []
    for sub in ("a", "b"):
        cwd = tmp_path / sub
        cwd.mkdir()
        env = dict(os.environ, PYTHONPATH=str(APP_DIR), HOME=str(cwd), REASONIX_HOME=str(cwd))
        proc = subprocess.run([sys.executable, "-c", SPEC_DUMP], cwd=cwd, env=env,
                              capture_output=True, text=True, check=True, timeout=60)
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    assert str(tmp_path) not in outputs[0]


def test_arguments_changed_after_the_decision_are_not_written(
    memory: Memory, paths: EnginePaths
) -> None:
    """S10.3: the permission covers the arguments decided on, not whatever they became."""
    args = dict(RELEASE)
    outcome = run_write_tool(memory, "remember", args, HEADLESS, "ask", Spy(answer=False),
                             before_write=lambda: args.update(type="user", scope="global"))
    assert (outcome.decision, outcome.written) == ("auto", False)
    assert (
        outcome.result == "Not written: the write permission was granted for different arguments."
    )
    assert store_bytes(paths) == {}
