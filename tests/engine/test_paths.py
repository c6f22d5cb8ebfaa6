"""Paths, slugs and the safe-join (S1, S2, S3.7)."""

import os
from pathlib import Path

import pytest
from context_engine.errors import InvalidName, PathEscape
from context_engine.paths import (
    EnginePaths,
    bound_slug,
    fnv1a_64,
    redact_home,
    safe_join,
    slugify,
    workspace_slug,
)


def test_workspace_slug_replaces_separators() -> None:  # S2.1
    assert workspace_slug("/Users/me/proj", windows=False) == "-Users-me-proj"
    assert workspace_slug("C:\\Users\\me\\proj", windows=True) == "c--users-me-proj"


def test_fnv1a_64_known_values() -> None:
    assert fnv1a_64(b"") == 0xCBF29CE484222325
    assert fnv1a_64(b"a") == 0xAF63DC4C8601EC8C


def test_long_slug_is_bounded_with_hash() -> None:  # S2.1
    long_path = "/" + "/".join(["dir" * 10] * 20)
    slug = workspace_slug(long_path, windows=False)
    full = long_path.replace("/", "-")
    assert len(slug.encode()) == 255
    assert slug.endswith("-" + format(fnv1a_64(full.encode()), "016x"))
    assert slug.startswith(full[:238])


def test_long_slug_cuts_on_character_boundary() -> None:
    text = "记" * 100  # 300 bytes
    slug = bound_slug(text)
    head = slug[: -17]
    assert head == "记" * 79  # 237 bytes: 238 would split a character
    assert len(slug.encode()) <= 255


@pytest.mark.parametrize(
    ("name", "slug"),
    [("Prefers Tabs", "prefers-tabs"), ("记忆召回", "记忆召回"), ("../outside", "outside"),
     ("  Release  Target!! ", "release-target"), ("snake_case_name", "snake-case-name")],
)
def test_slugify(name: str, slug: str) -> None:  # S3.7
    assert slugify(name) == slug


def test_empty_slug_is_an_error() -> None:
    with pytest.raises(InvalidName, match="memory name needs at least one letter or digit"):
        slugify("../--")


@pytest.mark.parametrize("bad", ["/etc/passwd", "../x", "a/../../x", "x\x00y", "C:\\x", ""])
def test_safe_join_rejects(tmp_path: Path, bad: str) -> None:  # S2.5
    with pytest.raises(PathEscape, match="memory path escapes store"):
        safe_join(tmp_path, bad)


def test_safe_join_rejects_symlink_out(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    store = tmp_path / "store"
    store.mkdir()
    (store / "link").symlink_to(outside)
    with pytest.raises(PathEscape):
        safe_join(store, "link/x.md")
    assert safe_join(store, "a.md") == store / "a.md"


def test_safe_join_of_one_name_checks_only_a_symlink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A single name escapes only as a symlink: that one is refused when it points out and
    kept when it points in; a plain or missing name costs one ``lstat``, no ``realpath``."""
    outside = tmp_path / "outside"
    outside.mkdir()
    store = tmp_path / "deep" / "er" / "store"
    store.mkdir(parents=True)
    (store / "out.md").symlink_to(outside / "x.md")
    (store / "in.md").symlink_to(store / "real.md")
    (store / "plain.md").write_text("x")
    with pytest.raises(PathEscape):
        safe_join(store, "out.md")
    assert safe_join(store, "in.md") == store / "in.md"
    walks: list[str] = []
    real = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda p, **k: walks.append(str(p)) or real(p, **k))
    assert safe_join(store, "plain.md") == store / "plain.md"
    assert safe_join(store, "missing.md") == store / "missing.md"
    assert walks == []


def test_paths_from_home_and_env(tmp_path: Path) -> None:  # S1
    ws = tmp_path / "ws" / "sub"
    ws.mkdir(parents=True)
    (tmp_path / "ws" / ".git").mkdir()
    p = EnginePaths.resolve(home=tmp_path / "h", workspace=ws)
    assert p.root == (tmp_path / "ws").resolve()
    assert p.state == p.home
    assert p.project_store == p.home / "projects" / workspace_slug(p.root) / "memory"
    assert p.global_store == p.home / "memory" / "global"
    env = {"REASONIX_HOME": str(tmp_path / "rh"), "REASONIX_STATE_HOME": str(tmp_path / "st")}
    q = EnginePaths.resolve(workspace=ws, env=env)
    assert q.home == (tmp_path / "rh").resolve()
    assert q.state == (tmp_path / "st").resolve()
    assert q.workspace_data.parent == q.project_dir


def test_redact_home() -> None:  # S7.4
    text = "see /home/alice2/x and /Users/bob/y and C:\\Users\\Eve\\z"
    assert redact_home(text) == "see <local-home>/x and <local-home>/y and <local-home>\\z"
