"""``context-engine install|uninstall|doctor`` on the agents' own settings files (S15.1)."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from context_engine.cli.main import cli

PERSON_CLAUDE = """{
    "theme": "dark",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "date"}]}]
    }
}
"""
PERSON_CLAUDE_JSON = (
    '{\n  "numStartups": 3,\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n'
)
PERSON_CODEX_TOML = """# my Codex settings
model = "gpt-5"   # keep this comment

[mcp_servers.docs]
command = "docs-server"
args = ["--stdio"]

[projects."/somewhere"]
trust_level = "trusted"
"""
PERSON_CODEX_HOOKS = '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say hi"}]}]}}'
PERSON_GEMINI = '{\n\t"ui": {"theme": "GitHub"},\n\t"mcpServers": {"other": {"command": "y"}}\n}'


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "home"
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "CONTEXT_ENGINE_CODEX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no agent binaries: nothing real is touched
    return {"home": home, "workspace": workspace, "rx": tmp_path / "rx"}


def run(env: dict[str, Path], *args: str) -> tuple[int, str]:
    base = ["--home", str(env["rx"]), "--workspace", str(env["workspace"])]
    result = CliRunner().invoke(cli, [*base, *args], catch_exceptions=False)
    return result.exit_code, result.output


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(root.rglob("*"))
    }


def seed(home: Path, workspace: Path) -> None:
    files = {
        home / ".claude" / "settings.json": PERSON_CLAUDE,
        home / ".claude.json": PERSON_CLAUDE_JSON,
        home / ".codex" / "config.toml": PERSON_CODEX_TOML,
        home / ".codex" / "hooks.json": PERSON_CODEX_HOOKS,
        home / ".gemini" / "settings.json": PERSON_GEMINI,
        workspace / ".mcp.json": '{"mcpServers": {}}',
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
@pytest.mark.parametrize("scope", ["user", "project"])
@pytest.mark.parametrize("seeded", [True, False])
def test_install_then_uninstall_is_byte_identical(
    env: dict[str, Path], agent: str, scope: str, seeded: bool
) -> None:
    if seeded:
        seed(env["home"], env["workspace"])
    before = snapshot(env["home"].parent)
    code, out = run(env, "install", agent, "--scope", scope)
    assert code == 0, out
    assert snapshot(env["home"].parent) != before
    code, out = run(env, "install", agent, "--scope", scope)  # twice: still one entry each
    assert code == 0, out
    code, out = run(env, "uninstall", agent, "--scope", scope)
    assert code == 0, out
    assert snapshot(env["home"].parent) == before


def test_claude_code_entries_merge_with_the_persons_settings(env: dict[str, Path]) -> None:
    seed(env["home"], env["workspace"])
    assert run(env, "install", "claude-code")[0] == 0
    settings = json.loads((env["home"] / ".claude" / "settings.json").read_text())
    assert settings["theme"] == "dark" and settings["permissions"]["allow"] == ["Bash(ls:*)"]
    start = settings["hooks"]["SessionStart"]
    assert start[0]["hooks"][0]["command"] == "date"  # the person's own hook stays first
    ours = start[1]["hooks"][0]["command"]
    assert ours.startswith(f"{Path(sys.executable).absolute()} -I -m context_engine.hooks ")
    assert ours.endswith(" claude-code SessionStart") and f"--home {env['rx']}" in ours
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"] == "notify-send done"
    servers = json.loads((env["home"] / ".claude.json").read_text())["mcpServers"]
    assert servers["other"] == {"command": "x"}
    assert servers["context-engine"]["command"] == str(Path(sys.executable).absolute())
    assert servers["context-engine"]["args"][-1] == "mcp"
    assert servers["context-engine"]["alwaysLoad"] is True  # connected before the first turn
    backup = env["home"] / ".claude" / "settings.json.context-engine-backup"
    assert backup.read_text() == PERSON_CLAUDE


def test_codex_toml_keeps_comments_and_gemini_timeout_is_in_ms(env: dict[str, Path]) -> None:
    seed(env["home"], env["workspace"])
    code, out = run(env, "install", "codex")
    assert code == 0
    assert "open /hooks and trust" in out  # codex not on PATH: the trust step is explained
    text = (env["home"] / ".codex" / "config.toml").read_text()
    person = text.replace("mcp_optional_startup_grace_ms = 10000\n", "")
    assert person.startswith(PERSON_CODEX_TOML.split("[projects")[0])  # comments and layout kept
    assert '\n\n[projects."/somewhere"]\ntrust_level = "trusted"\n' in text
    config = tomllib.loads(text)
    assert config["mcp_servers"]["docs"]["command"] == "docs-server"
    assert config["mcp_servers"]["context-engine"]["args"][-1] == "mcp"
    hooks = json.loads((env["home"] / ".codex" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"Stop", "SessionStart", "UserPromptSubmit"}
    assert run(env, "install", "gemini")[0] == 0
    gemini = json.loads((env["home"] / ".gemini" / "settings.json").read_text())
    handler = gemini["hooks"]["BeforeAgent"][0]["hooks"][0]
    assert handler["timeout"] == 30_000 and handler["command"].endswith(" gemini BeforeAgent")
    assert gemini["mcpServers"]["other"] == {"command": "y"} and gemini["ui"]["theme"] == "GitHub"


def test_unparsable_settings_are_never_rewritten(env: dict[str, Path]) -> None:
    path = env["home"] / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"ui": {"theme": "x",}')  # trailing comma: not JSON
    code, out = run(env, "install", "gemini")
    assert code == 1 and "is not valid JSON" in out
    assert path.read_text() == '{"ui": {"theme": "x",}'
    assert sorted(os.listdir(path.parent)) == ["settings.json"]


def test_dry_run_writes_nothing(env: dict[str, Path]) -> None:
    before = snapshot(env["home"].parent)
    code, out = run(env, "install", "claude-code", "--dry-run")
    assert code == 0 and "would update" in out
    assert snapshot(env["home"].parent) == before


@pytest.mark.slow  # runs the hooks as processes
def test_doctor_passes_on_a_good_setup_and_fails_on_a_broken_one(env: dict[str, Path]) -> None:
    code, out = run(env, "doctor", "gemini", "--no-agent")
    assert code == 1 and "run `context-engine install gemini`" in out
    assert run(env, "install", "gemini")[0] == 0
    code, out = run(env, "doctor", "gemini", "--no-agent")
    assert code == 0, out
    assert "SessionStart:" in out and "of 10,000 characters" in out
    assert "BeforeAgent:" in out
    assert "MCP start-up: 3 tools listed in" in out  # the server was started and asked
    path = env["home"] / ".gemini" / "settings.json"
    settings = json.loads(path.read_text())
    for event in ("SessionStart", "BeforeAgent"):
        handler = settings["hooks"][event][0]["hooks"][0]
        python = str(Path(sys.executable).absolute())
        handler["command"] = handler["command"].replace(python, "/gone/python3")
        handler["timeout"] = 30  # seconds, as if it were Claude Code
    path.write_text(json.dumps(settings))
    code, out = run(env, "doctor", "gemini", "--no-agent")
    assert code == 1
    assert "SessionStart hook failed" in out
    assert "Gemini's hook timeout is in milliseconds: 30 ms" in out
    path.write_text("{")
    code, out = run(env, "doctor", "--no-agent")
    assert code == 1 and "is not valid JSON" in out


@pytest.mark.slow  # runs the hooks as processes
def test_doctor_reports_an_oversized_block(
    env: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from context_engine.facts.memory import Memory
    from context_engine.paths import EnginePaths

    paths = EnginePaths.resolve(home=env["rx"], workspace=env["workspace"])
    memory = Memory(paths)
    for i in range(3):
        memory.save(name=f"f{i}", description="d" * 300, body="b", type="project")
    assert run(env, "install", "claude-code")[0] == 0
    monkeypatch.setenv("CONTEXT_ENGINE_MEMORY_BLOCK_CHARS", "20000")
    monkeypatch.setattr("context_engine.install.targets.CONTEXT_LIMIT", 10_000)
    from context_engine.install import targets

    monkeypatch.setitem(
        targets.SPECS,
        "claude-code",
        targets.SPECS["claude-code"].__class__("claude-code", "claude", 500, 30, "s"),
    )
    code, out = run(env, "doctor", "claude-code", "--no-agent")
    assert code == 1 and "keeps only about 500" in out


def test_codex_gets_an_mcp_startup_grace_only_when_the_person_set_none(
    env: dict[str, Path],
) -> None:
    seed(env["home"], env["workspace"])
    config = env["home"] / ".codex" / "config.toml"
    assert run(env, "install", "codex")[0] == 0
    # Codex leaves a slow optional MCP server's tools out of the first model step otherwise.
    assert tomllib.loads(config.read_text())["mcp_optional_startup_grace_ms"] == 10_000
    assert run(env, "uninstall", "codex")[0] == 0
    assert config.read_text() == PERSON_CODEX_TOML
    config.write_text("mcp_optional_startup_grace_ms = 500\n" + PERSON_CODEX_TOML)
    code, out = run(env, "install", "codex")
    assert code == 0 and "mcp_optional_startup_grace_ms = 500 is kept" in out
    assert tomllib.loads(config.read_text())["mcp_optional_startup_grace_ms"] == 500
    assert run(env, "uninstall", "codex")[0] == 0
    assert config.read_text().startswith("mcp_optional_startup_grace_ms = 500\n")


@pytest.mark.slow  # starts the MCP server as a process
def test_doctor_starts_the_mcp_server_and_weighs_it_against_codexs_grace(
    env: dict[str, Path],
) -> None:
    assert run(env, "install", "codex")[0] == 0
    config = env["home"] / ".codex" / "config.toml"
    text = config.read_text()
    config.write_text(
        text.replace("mcp_optional_startup_grace_ms = 10000", "mcp_optional_startup_grace_ms = 1")
    )
    code, out = run(env, "doctor", "codex", "--no-agent")
    assert code == 1 and "Codex waits 1 ms for an MCP server" in out, out
    config.write_text(text.replace('"mcp"]', '"no-such-command"]'))
    code, out = run(env, "doctor", "codex", "--no-agent")
    assert code == 1 and "the MCP server did not start: no answer to initialize" in out, out
