"""The proposals file: bounded, repeats merged, private, never rewritten when unreadable (S15.2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from context_engine.proposals.model import Proposal
from context_engine.proposals.store import ProposalFileError, ProposalStore


def proposal(i: int, digest: str | None = None) -> Proposal:
    return Proposal(
        id=f"prop-{i:04d}",
        tool="remember",
        arguments={"name": f"n{i}"},
        reason="why",
        agent="gemini",
        session="s",
        created_at="2026-12-01T10:00:00Z",
        reference=f"project/n{i}.md",
        content="c",
        revision_from=None,
        digest=digest or f"d{i}",
    )


def test_bounded_oldest_dropped_first(tmp_path: Path) -> None:
    store = ProposalStore(tmp_path / "data", limit=50)
    for i in range(55):
        store.add(proposal(i))
    kept = store.entries()
    assert len(kept) == 50 and kept[0].id == "prop-0005" and kept[-1].id == "prop-0054"


def test_the_same_call_again_is_merged_keeping_its_id(tmp_path: Path) -> None:
    store = ProposalStore(tmp_path / "data")
    store.add(proposal(1, digest="same"))
    store.add(proposal(2))
    again = store.add(proposal(3, digest="same"))
    assert again.id == "prop-0001"
    assert [p.id for p in store.entries()] == ["prop-0002", "prop-0001"]


def test_private_modes_and_reads_create_nothing(tmp_path: Path) -> None:
    store = ProposalStore(tmp_path / "data")
    assert store.entries() == [] and not (tmp_path / "data").exists()
    store.add(proposal(1))
    assert store.path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "data").stat().st_mode & 0o777 == 0o700


def test_an_unreadable_file_is_reported_and_never_rewritten(tmp_path: Path) -> None:
    store = ProposalStore(tmp_path)
    store.path.write_text('{"proposals": [{"id": 1}')
    with pytest.raises(ProposalFileError):
        store.entries()
    with pytest.raises(ProposalFileError):
        store.add(proposal(1))
    assert store.path.read_text() == '{"proposals": [{"id": 1}'


def test_an_id_prefix_finds_one_proposal(tmp_path: Path) -> None:
    store = ProposalStore(tmp_path)
    store.add(proposal(1))
    assert store.get("prop-00").id == "prop-0001"
