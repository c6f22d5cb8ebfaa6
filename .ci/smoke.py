"""Smoke test of a plain install (no extras): README command 1 as a newcomer meets it.

Run with the interpreter of a fresh venv that has only the wheel installed:

    /tmp/venv/bin/python .ci/smoke.py

It checks ``context-engine --version``, ``--help`` of every command, ``remember`` → ``list
--json`` → ``recall`` on a temporary home, a Claude Code ``UserPromptSubmit`` hook with a
realistic payload (exit 0, valid JSON carrying the recall block), an MCP ``initialize`` +
``tools/list`` over stdio with the SDK client, and ``context-center --demo --smoke`` offscreen.
Every failure is printed; the exit code is the number of failed checks (capped at 1).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
CE = str(BIN / "context-engine")
FAILED: list[str] = []


def check(name: str, ok: bool, detail: str = "") -> None:
    """Record and print one check."""
    print(f"{'ok  ' if ok else 'FAIL'} {name}" + (f"\n     {detail}" if detail and not ok else ""))
    if not ok:
        FAILED.append(name)


def run(args: list[str], *, stdin: str | None = None, env: dict[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a command of the installed package."""
    return subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, check=False)


def commands() -> list[str]:
    """Command names as ``context-engine --help`` lists them."""
    out = run([CE, "--help"]).stdout.splitlines()
    start = out.index("Commands:") + 1
    return [line.split()[0] for line in out[start:] if line.startswith("  ") and line.split()]


async def mcp_tools(home: Path, workspace: Path) -> list[str]:
    """initialize + tools/list against ``context-engine mcp`` with the SDK's own client."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=CE, args=["--home", str(home), "--workspace", str(workspace), "mcp"]
    )
    async with Client(params) as client:
        listed = await client.list_tools()
        return sorted(tool.name for tool in listed.tools)


def monitor_answers(home: Path) -> bool:
    """Whether the store monitor the cold commands started answers (then it is stopped)."""
    probe = ("import sys; from context_engine.monitor import client\n"
             "print('up' if client.status(sys.argv[1]) else 'down'); sys.stdout.flush()\n")
    stop = "import sys; from context_engine.monitor import client; client.stop(sys.argv[1])"
    for _ in range(40):
        if run([sys.executable, "-c", probe, str(home.resolve())]).stdout.strip() == "up":
            run([sys.executable, "-c", stop, str(home.resolve())])
            return True
        time.sleep(0.5)
    return False


def main() -> int:
    """Run every check; 0 when all pass."""
    version = run([CE, "--version"])
    check("context-engine --version", version.returncode == 0 and "version" in version.stdout,
          version.stderr)
    names = commands()
    check("--help lists the commands", len(names) >= 15, str(names))
    for name in names:
        shown = run([CE, name, "--help"])
        check(f"context-engine {name} --help", shown.returncode == 0 and "Usage:" in shown.stdout,
              shown.stderr[-2000:])
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "proj"
        (workspace / ".git").mkdir(parents=True)
        where = ["--home", str(home), "--workspace", str(workspace)]
        saved = run([CE, *where, "remember", "--name", "sentry-crash-triage",
                     "--description", "How Sentry crash reports are triaged",
                     "--body", "Sentry crash reports go to the #oncall channel; triage them "
                     "with the release tag before filing an issue."])
        check("remember", saved.returncode == 0, saved.stderr)
        listed = run([CE, *where, "list", "--json"])
        try:
            facts = json.loads(listed.stdout)["facts"]
        except (ValueError, KeyError):
            facts = []
        check("list --json", listed.returncode == 0 and len(facts) == 1, listed.stderr)
        fact_id = facts[0]["id"] if facts else "(none listed)"
        recalled = run([CE, *where, "--json", "recall", "how do we triage a sentry crash?"])
        try:
            block = json.loads(recalled.stdout)["block"]
        except (ValueError, KeyError):
            block = ""
        check("recall finds the fact", f"id={fact_id}" in block,
              recalled.stdout[-2000:] + recalled.stderr[-2000:])
        payload = json.dumps({
            "session_id": "smoke-1", "transcript_path": str(Path(tmp) / "t.jsonl"),
            "cwd": str(workspace), "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit", "prompt": "how do we triage a sentry crash?",
        })
        hook = run([CE, "--home", str(home), "hook", "claude-code", "UserPromptSubmit"],
                   stdin=payload)
        try:
            context = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            context = ""
        check("hook claude-code UserPromptSubmit", hook.returncode == 0
              and f"id={fact_id}" in context, hook.stdout[-2000:] + hook.stderr[-2000:])
        check("the store monitor started by these commands answers", monitor_answers(home),
              "no monitor answered for the home within 20 s")
        try:
            tools = asyncio.run(asyncio.wait_for(mcp_tools(home, workspace), 120))
        except Exception as exc:  # the smoke test reports any failure as a failed check
            tools = [f"error: {exc!r}"]
        check("mcp initialize + tools/list", tools == ["forget", "memory", "remember"], str(tools))
        app = run([str(BIN / "context-center"), "--demo", "--smoke"],
                  env={"QT_QPA_PLATFORM": "offscreen", "TMPDIR": tmp}, timeout=180)
        check("context-center --demo --smoke", app.returncode == 0
              and "first frame painted" in app.stdout, app.stdout[-2000:] + app.stderr[-3000:])
        left = sorted(p.name for p in Path(tmp).glob("context-center-demo-*"))
        check("the demo's temporary directory is removed", not left, str(left))
    print(f"smoke: {len(FAILED)} failed" + (f": {', '.join(FAILED)}" if FAILED else ""))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
