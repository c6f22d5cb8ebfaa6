"""The one write door: ``catalog.apply(op, actor)`` decides the same way locally and remotely.

A person's own action is the confirmation (S10.5): no second approval, whether the catalog is
in process or served. An agent's call goes through the policy (S10) on both. Restore, recover
and accept are a person's actions only.
"""

from __future__ import annotations

import pytest
from context_engine.catalog.base import Catalog
from context_engine.catalog.local import LocalCatalog
from context_engine.catalog.ops import Agent, Forget, Person, Restore, Save
from context_engine.catalog.remote import RemoteCatalog
from support.fixtures import served_fixture  # noqa: F401 - pytest fixtures
from support.remote import Recorder, Served

pytestmark = pytest.mark.timeout(60)

GLOBAL_EDIT = Save(name="shell", description="Preferred shell is fish",
                   body="Use fish syntax in examples.", type="user", scope="global")



def _refusing() -> Recorder:
    return Recorder(lambda _request: False)


def _catalogs(served: Served, asked: Recorder) -> list[tuple[str, Catalog]]:
    local = LocalCatalog(served.paths, confirmation=asked)
    remote = RemoteCatalog(served.command("--no-watch"), confirmation=asked)
    return [("local", local), ("remote", remote)]


@pytest.mark.slow
def test_a_persons_edit_is_written_without_a_second_approval_locally_and_remotely(
    served: Served,
) -> None:
    """The drift: a local window wrote silently, a remote one asked the policy's approval."""
    asked = _refusing()
    for where, catalog in _catalogs(served, asked):
        try:
            edit = Save(**{**GLOBAL_EDIT.args(), "name": f"shell-{where}"})  # type: ignore[arg-type]  # reason: the args of a Save are its own fields
            outcome = catalog.apply(edit, Person("app"))
            assert (where, outcome.decision, outcome.written, outcome.ran) == (
                where, "explicit", True, True,
            )  # fmt: skip
            assert outcome.fact is not None and outcome.fact.reference == f"global/shell-{where}.md"
        finally:
            catalog.close()
    assert asked.requests == []  # nobody was asked, anywhere
    names = {f.reference for f in served.local().list_facts().facts}
    assert {"global/shell-local.md", "global/shell-remote.md"} <= names


@pytest.mark.slow
def test_an_agents_save_asks_the_person_locally_and_remotely(served: Served) -> None:
    asked = _refusing()
    for _where, catalog in _catalogs(served, asked):
        try:
            outcome = catalog.apply(GLOBAL_EDIT, Agent("interactive"))
            assert (outcome.decision, outcome.written, outcome.ran) == ("confirm", False, False)
        finally:
            catalog.close()
    assert [r.tool for r in asked.requests] == ["remember", "remember"]
    assert "shell" not in {f.name for f in served.local().list_facts().facts}


@pytest.mark.slow
def test_forget_in_the_app_asks_once_and_on_the_cli_is_the_action(served: Served) -> None:
    asked = Recorder(lambda _request: True)
    for _where, catalog in _catalogs(served, asked):
        try:
            fact = catalog.read("editor").fact
            cli = catalog.apply(Forget("nothing-by-this-name"), Person("cli"))
            assert (cli.decision, cli.written, cli.ran) == ("explicit", False, True)
            app = catalog.apply(Forget(fact.id), Person("app"))
            assert (app.decision, app.written) == ("confirm", True)
            catalog.apply(Restore("release-target", 1), Person("cli"))  # a person's own action
        finally:
            catalog.close()
        served.local().memory.recover(served.local().archived()[0].path)
    assert [r.tool for r in asked.requests] == ["forget", "forget"]


@pytest.mark.parametrize("controller", ["interactive", "headless", "subagent"])
def test_an_agent_cannot_restore(served: Served, controller: str) -> None:
    catalog = LocalCatalog(served.paths, confirmation=Recorder(lambda _r: True))
    before = catalog.read("release-target").fact
    outcome = catalog.apply(Restore("release-target", 1), Agent(controller))  # type: ignore[arg-type]  # reason: parametrized literal
    assert (outcome.decision, outcome.written, outcome.ran) == ("denied", False, False)
    assert catalog.read("release-target").fact == before
