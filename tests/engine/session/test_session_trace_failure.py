"""A trace that cannot be recorded never fails the turn (S8.11): the block stays, it is reported."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from context_engine.engine import ContextEngine
from context_engine.facts.memory import Memory
from context_engine.recall.trace import TraceLog


@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC])
def test_turn_keeps_its_block_when_the_trace_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], code: int
) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    engine = ContextEngine.open(workspace=workspace, home=tmp_path / "home")
    Memory(engine.paths).save(
        name="release-target", description="Release target",
        body="Release builds go out Thursdays from branch release/2.x.", type="project",
    )
    session = engine.start_session("headless")

    def refuse(self: TraceLog, trace: object) -> None:
        raise OSError(code, "cannot write here")

    monkeypatch.setattr(TraceLog, "record", refuse)
    turn = session.process_user_turn("When do release builds go out?")
    assert "<memory-recall" in turn.recall_block
    assert turn.recall_block in turn.text_for_provider
    assert engine.trace_error == "recall trace not recorded: cannot write here"
    assert "recall trace not recorded" in capsys.readouterr().err

