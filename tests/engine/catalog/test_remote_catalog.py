"""A remote workspace is served only from the server's home (issue 8, S11.6, S13.6).

The server runs as a subprocess with its own home; the client runs here with a different
home, cwd and environment. Every read must equal the server home's in-process catalog, and the
client's own home must never be opened (audited with ``sys.addaudithook``).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from context_engine.catalog.errors import Disconnected, Unavailable
from context_engine.catalog.ops import Accept, Agent, Forget, Person, Recover, Save
from context_engine.catalog.remote import RemoteCatalog
from support.fixtures import client_home_fixture, served_fixture  # noqa: F401 - pytest fixtures
from support.remote import Served, audit_opens, touched_under, wait_for

pytestmark = pytest.mark.timeout(60)
AGENT = Agent("interactive")  # an agent at the app: the policy asks the person
PERSON = Person("app")


@pytest.mark.slow
def test_reads_equal_the_server_home_and_never_open_the_client_home(
    served: Served, client_home: Path
) -> None:
    local = served.local()
    expected_facts = local.list_facts()
    expected_suggestions = local.suggestions()
    assert expected_suggestions.memories, "fixture sessions must yield candidates"
    with audit_opens() as seen:
        remote = RemoteCatalog(served.command())
        try:
            facts = remote.list_facts()
            first = facts.facts[0]
            read = remote.read(first.id)
            by_ref = remote.read("global/release-target.md")
            history = remote.revisions("project/release-target.md")
            archived = remote.archived()
            instructions = remote.instructions()
            run = remote.recall("how do I run the release build?")
            last = remote.last_trace()
            recent = remote.recent_traces()
            suggestions = remote.suggestions()
            hits = remote.search("release arm64")
        finally:
            remote.close()
    assert touched_under(seen, client_home) == []
    assert facts == expected_facts
    assert "local-secret" not in {f.name for f in facts.facts}
    assert read == local.read(first.id)
    assert by_ref == local.read("global/release-target.md")
    assert history == local.revisions("project/release-target.md")
    assert [h.revision for h in history.revisions] == [1]
    assert archived == local.archived() and len(archived) == 1
    expected_view = local.instructions()  # ``watched`` (file stamps) is local-only
    assert instructions.block == expected_view.block
    assert instructions.resolution == replace(expected_view.resolution, watched=())
    assert "LOCAL ONLY" not in instructions.block and "make release" in instructions.block
    assert [d.code for d in instructions.resolution.diagnostics]  # @missing.md travels too
    assert run.trace.hits and run.trace.hits[0].name == "release-target"
    assert last == local.last_trace() == run.trace
    assert recent == local.recent_traces() and recent[0] == run.trace
    assert suggestions == expected_suggestions
    assert hits == local.search("release arm64") and hits


def test_the_audit_would_see_a_local_fallback(client_home: Path) -> None:
    """Control: reading the client's own catalog is caught by the same audit."""
    from context_engine.catalog.local import LocalCatalog
    from context_engine.paths import EnginePaths

    with audit_opens() as seen:
        LocalCatalog(EnginePaths.resolve()).list_facts()
    assert touched_under(seen, client_home)


GLOBAL_FACT = {
    "name": "shell",
    "description": "Preferred shell is fish",
    "body": "Use fish syntax in examples.",
    "type": "user",
    "scope": "global",
}


@pytest.mark.slow
def test_every_remote_write_honours_the_policy(served: Served, client_home: Path) -> None:
    """Low-risk create: written, nobody asked. Global fact: asked; no / a crashing dialog:
    nothing written; yes: written. Forget: asked. Recover: the person's own action."""
    from support.remote import Recorder

    answers: list[object] = ["no", "error", "yes", "yes"]

    def respond(_request: object) -> bool:
        answer = answers.pop(0)
        if answer == "error":
            raise RuntimeError("the dialog crashed")
        return answer == "yes"

    asked = Recorder(respond)
    remote = RemoteCatalog(served.command("--no-watch"), confirmation=asked)
    try:
        created = remote.apply(
            Save.from_args({
                "name": "ci-cache",
                "description": "CI caches the Go module directory",
                "body": "The CI job caches ~/go/pkg/mod between runs.",
                "type": "project",
            }),
            AGENT,
        )
        assert created.decision == "auto" and created.written and asked.requests == []
        assert served.local().read("project/ci-cache.md").fact.body.startswith("The CI job")
        for _refusal in ("no", "error"):
            refused = remote.apply(Save.from_args(GLOBAL_FACT), AGENT)
            assert refused.decision == "confirm" and not refused.written and not refused.ran
            assert "shell" not in {f.name for f in remote.list_facts().facts}
            assert "shell" not in {f.name for f in served.local().list_facts().facts}
        request = asked.requests[0]
        assert request.scope == "global" and request.tool == "remember"
        assert "Use fish syntax" in request.content
        saved = remote.apply(Save.from_args(GLOBAL_FACT), AGENT)
        forgot = remote.apply(Forget("editor"), AGENT)
        entry = remote.archived()[0]
        restored = remote.apply(Recover(str(entry.path)), PERSON)
        candidate = remote.suggestions().memories[0]
        accepted = remote.apply(Accept(candidate.id), PERSON)
    finally:
        remote.close()
    assert saved.written and saved.fact is not None and saved.fact.scope == "global"
    assert accepted.fact is not None and accepted.fact.body == candidate.body
    assert served.local().read(accepted.fact.id).fact == accepted.fact
    tools = [r.tool for r in asked.requests]
    assert forgot.written and tools == ["remember", "remember", "remember", "forget"]
    assert restored.decision == "explicit" and restored.fact is not None
    assert restored.fact.name == "editor"
    names = {f.reference for f in served.local().list_facts().facts}
    assert {"global/shell.md", "global/editor.md", "project/ci-cache.md"} <= names
    assert list(client_home.rglob("ci-cache.md")) == []
    assert list(client_home.rglob("shell.md")) == []


@pytest.mark.slow
def test_an_unanswered_confirmation_writes_nothing_even_if_a_yes_comes_late(
    served: Served, client_home: Path
) -> None:
    import threading

    from support.remote import Recorder

    released = threading.Event()

    def late_yes(_request: object) -> bool:
        released.wait(20)
        return True

    asked = Recorder(late_yes)
    remote = RemoteCatalog(
        served.command("--no-watch", "--confirm-timeout", "0.3"), confirmation=asked
    )
    try:
        outcome = remote.apply(Save.from_args(GLOBAL_FACT), AGENT)
        released.set()  # the yes arrives after the server stopped waiting
        after = {f.name for f in remote.list_facts().facts}
    finally:
        released.set()
        remote.close()
    assert len(asked.requests) == 1
    assert not outcome.written and outcome.decision == "confirm"
    assert "shell" not in after
    assert "shell" not in {f.name for f in served.local().list_facts().facts}


@pytest.mark.slow
def test_killing_the_server_leaves_the_client_disconnected_without_fallback(
    served: Served, client_home: Path
) -> None:
    import signal

    states: list[str] = []
    remote = RemoteCatalog(served.command("--no-watch"), on_state=states.append)
    try:
        before = remote.list_facts()
        pid = remote.client.pid
        assert pid is not None
        with audit_opens() as seen:
            os.kill(pid, signal.SIGKILL)
            assert wait_for(lambda: remote.state == "disconnected")
            for call in (
                remote.list_facts,
                remote.archived,
                remote.instructions,
                remote.suggestions,
                remote.last_trace,
                lambda: remote.read("editor"),
                lambda: remote.complete("refs"),
            ):
                with pytest.raises(Disconnected):
                    call()
        assert touched_under(seen, client_home) == []
        assert states[-1] == "disconnected"
        remote.reconnect()
        assert remote.state == "connected" and states[-1] == "connected"
        assert remote.list_facts() == before
    finally:
        remote.close()


@pytest.mark.slow
def test_a_server_without_suggestions_says_unavailable(served: Served, client_home: Path) -> None:
    with audit_opens() as seen:
        remote = RemoteCatalog(served.command("--no-watch", "--without", "suggestions"))
        try:
            assert "suggestions" not in remote.capabilities()
            assert "facts" in remote.capabilities()
            with pytest.raises(Unavailable) as info:
                remote.suggestions()
            assert info.value.code == "unavailable"
            with pytest.raises(Unavailable):
                remote.apply(Accept("mem-anything"), PERSON)
            assert remote.list_facts().facts  # the rest still works
        finally:
            remote.close()
    assert touched_under(seen, client_home) == []


@pytest.mark.slow
def test_the_server_watcher_pushes_changes(served: Served, client_home: Path) -> None:
    from context_engine.facts.memory import Memory

    seen: list[list[str]] = []
    remote = RemoteCatalog(served.command(), on_changes=seen.append)
    try:
        remote.list_facts()  # the watcher is up once initialize has answered
        Memory(served.paths).save(
            name="pushed", description="Written on the server", body="b", type="project"
        )
        assert wait_for(lambda: any("facts" in areas for areas in seen))
    finally:
        remote.close()
