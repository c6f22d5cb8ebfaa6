"""Opening the engine's stores also retires the old config key, once, with a notice (S5.4)."""

from pathlib import Path

from context_engine import ContextEngine

CONFIG = b'[agent]\r\nmodel = "x"\r\nmemory_compiler = true\r\n\r\n[ui]\r\ntheme = "dark"\r\n'


def test_engine_open_removes_the_retired_key_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".reasonix").mkdir()
    (ws / ".reasonix" / "config.toml").write_bytes(CONFIG)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_bytes(b"# mine\n[agent]\nmemory_compiler = 'on'\n")

    engine = ContextEngine.open(workspace=ws, home=home)
    assert engine.upgrade_notices == []  # nothing happens before the stores are used
    _ = engine.memory
    assert len(engine.upgrade_notices) == 2
    assert (ws / ".reasonix" / "config.toml").read_bytes() == (
        b'[agent]\r\nmodel = "x"\r\n\r\n[ui]\r\ntheme = "dark"\r\n'
    )
    assert (home / "config.toml").read_bytes() == b"# mine\n[agent]\n"

    again = ContextEngine.open(workspace=ws, home=home)
    _ = again.memory
    assert again.upgrade_notices == []
