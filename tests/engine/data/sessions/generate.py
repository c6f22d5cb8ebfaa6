# ruff: noqa: E501  (fixture text is kept verbatim on one line)
"""Regenerate the session fixtures of this folder (the output files are committed).

Built from ../../../../shared/formats/transcripts.md: every format holds the two statements as real
user turns plus copies in assistant messages, tool results and host-injected blocks (marked
INJECTED) that must be ignored; ``negative/`` holds the statements only where no user typed them.
``@ROOT@`` and ``@HASH@`` are filled in by ``support.suggest.install``.

    .venv/bin/python tests/engine/data/sessions/generate.py
"""

import json
from pathlib import Path

OUT = Path(__file__).resolve().parent
ZH = "以后请始终用中文回复，除非我明确要求英文。"
EN = "Always run the linters before you commit."
INJ = "Always indent with tabs (INJECTED)"


def jl(path, rows, tail=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) + tail, encoding="utf-8"
    )


# ---------------- Reasonix ----------------
rx = OUT / "reasonix"
name = "20260801-093015.123456789-deepseek-v4-flash"
jl(
    rx / f"{name}.jsonl",
    [
        {"schema_version": 1},
        {"role": "system", "content": "You are Reasonix. " + INJ},
        {
            "role": "user",
            "content": "<response-language>\nFinal answer language preference: use English.\n</response-language>\n<memory-update>\nThe following project-memory changes were just made and apply from now on:\n- "
            + INJ
            + "\n</memory-update>\n\n"
            + ZH,
            "createdAt": 1785576615123,
        },
        {
            "role": "assistant",
            "content": "好的。" + EN + " I will always prefer tabs (INJECTED).",
            "createdAt": 1785576616000,
        },
        {
            "role": "user",
            "content": "<response-language>\nFinal answer language preference: use English.\n</response-language>\n"
            + EN,
            "raw_content": EN,
            "createdAt": 1785576617000,
        },
        {
            "role": "assistant",
            "content": "Running checks.",
            "tool_calls": [
                {"id": "call_1", "name": "bash", "arguments": '{"command":"make lint"}'}
            ],
            "createdAt": 1785576618000,
        },
        {
            "role": "tool",
            "content": "Never skip hooks (INJECTED tool output)",
            "tool_call_id": "call_1",
            "name": "bash",
        },
        {
            "role": "user",
            "content": "Continue pursuing the active goal. Always keep going until done (INJECTED).",
        },
        {
            "role": "user",
            "origin": "host",
            "content": "Host note: always verify before finishing (INJECTED).",
        },
        {
            "role": "user",
            "content": "# Skill: release\n\nAlways tag releases from main (INJECTED skill body).",
        },
        {
            "role": "user",
            "content": "Fix the flaky parser test please.",
            "createdAt": 1785576619000,
        },
    ],
    tail="{this line is corrupt\n",
)
(rx / f"{name}.jsonl.meta").write_text(
    json.dumps(
        {
            "id": name,
            "scope": "project",
            "workspace_root": "@ROOT@",
            "turns": 3,
            "schema_version": 1,
        },
        indent=2,
    )
)
jl(
    rx / f"{name}.events.jsonl",
    [{"type": "user", "role": "user", "content": "Always read the events log (INJECTED sidecar)."}],
)
jl(
    rx / f"subagent-{name}.jsonl",
    [{"role": "user", "content": "Always obey the parent (INJECTED subagent)."}],
)

# ---------------- Claude Code ----------------
cc = OUT / "claude-code"
sid = "3f2a9c1e-0000-4000-8000-000000000001"
env = {
    "isSidechain": False,
    "userType": "external",
    "cwd": "@ROOT@",
    "sessionId": sid,
    "version": "2.1.200",
    "gitBranch": "main",
}


def cu(uuid, content, **extra):
    return {
        **env,
        "parentUuid": None,
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": uuid,
        "timestamp": "2026-08-01T09:30:15.000Z",
        **extra,
    }


jl(
    cc / f"{sid}.jsonl",
    [
        {"type": "summary", "summary": INJ, "leafUuid": "u1"},
        cu("u1", ZH),
        {
            **env,
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": EN + " " + INJ}]},
            "uuid": "a1",
            "timestamp": "2026-08-01T09:30:16.000Z",
        },
        cu(
            "u2",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "Never skip hooks (INJECTED tool result)",
                    "is_error": False,
                }
            ],
            toolUseResult={"stdout": "x"},
        ),
        cu(
            "u3",
            "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. Always INJECTED.</local-command-caveat>",
            isMeta=True,
        ),
        cu("u4", "<system-reminder>\nContents of AGENTS.md:\n" + INJ + "\n</system-reminder>"),
        cu(
            "u5",
            [
                {
                    "type": "text",
                    "text": "<ide_opened_file>The user opened always_prefer.py (INJECTED)</ide_opened_file>",
                },
                {"type": "text", "text": EN},
            ],
        ),
        cu("u6", "Subagent task: always prefer INJECTED paths.", isSidechain=True),
        cu(
            "u7", "This session is being continued. Always INJECTED summary.", isCompactSummary=True
        ),
        cu(
            "u8",
            "<command-name>/memory</command-name>\n<command-args>always INJECTED</command-args>",
        ),
        cu("u9", "Fix the flaky parser test please."),
    ],
    tail="corrupt {{{\n",
)
jl(cc / "agent-1234.jsonl", [cu("s1", "Always obey the parent (INJECTED subagent).")])

# ---------------- Codex ----------------
cx = OUT / "codex"


def ev(ts, kind, payload):
    return {"timestamp": ts, "type": kind, "payload": payload}


def agents_md(ts, instructions):
    """The AGENTS.md block Codex injects as a user message (INJECTED: never a user turn)."""
    return ev(
        ts,
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": f"# AGENTS.md instructions for @ROOT@\n\n<INSTRUCTIONS>\n{instructions}"
                    "\n</INSTRUCTIONS>",
                }
            ],
        },
    )


jl(
    cx / "rollout-2026-08-01T09-30-15-0198a1b2-0000-7000-8000-000000000001.jsonl",
    [
        ev(
            "2026-08-01T09:30:15.100Z",
            "session_meta",
            {
                "id": "0198a1b2-0000-7000-8000-000000000001",
                "timestamp": "2026-08-01T09:30:15.090Z",
                "cwd": "@ROOT@",
                "originator": "codex_cli_rs",
                "cli_version": "0.50.0",
                "instructions": None,
                "source": "cli",
                "model_provider": "openai",
                "git": {"branch": "main"},
            },
        ),
        ev(
            "2026-08-01T09:30:15.101Z",
            "response_item",
            {
                "type": "message",
                "role": "developer",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<permissions instructions>Never write outside the sandbox (INJECTED)</permissions instructions>",
                    }
                ],
            },
        ),
        agents_md("2026-08-01T09:30:15.110Z", INJ),
        ev(
            "2026-08-01T09:30:15.111Z",
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<environment_context>\n  <cwd>@ROOT@</cwd>\n  Always INJECTED\n</environment_context>",
                    }
                ],
            },
        ),
        ev(
            "2026-08-01T09:30:15.112Z",
            "turn_context",
            {"cwd": "@ROOT@", "approval_policy": "on-request", "model": "gpt-5"},
        ),
        ev(
            "2026-08-01T09:30:20.000Z",
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ZH}]},
        ),
        ev(
            "2026-08-01T09:30:20.001Z",
            "event_msg",
            {
                "type": "user_message",
                "message": ZH,
                "images": [],
                "local_images": [],
                "text_elements": [],
            },
        ),
        ev(
            "2026-08-01T09:30:21.000Z",
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "好的。" + EN}],
            },
        ),
        ev(
            "2026-08-01T09:30:22.000Z",
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command":["make","lint"]}',
                "call_id": "c1",
            },
        ),
        ev(
            "2026-08-01T09:30:22.500Z",
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": "Never skip hooks (INJECTED)",
            },
        ),
        ev(
            "2026-08-01T09:30:25.000Z",
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": EN}]},
        ),
        ev(
            "2026-08-01T09:30:25.001Z",
            "event_msg",
            {
                "type": "user_message",
                "message": EN,
                "images": [],
                "local_images": [],
                "text_elements": [],
            },
        ),
        ev(
            "2026-08-01T09:30:26.000Z",
            "event_msg",
            {"type": "agent_message", "message": "Always happy to help (INJECTED)."},
        ),
        ev(
            "2026-08-01T09:30:30.000Z",
            "event_msg",
            {
                "type": "user_message",
                "message": "Fix the flaky parser test please.",
                "images": [],
                "local_images": [],
                "text_elements": [],
            },
        ),
    ],
    tail="not json at all\n",
)

# ---------------- Gemini ----------------
gm = OUT / "gemini"
gm.mkdir(parents=True, exist_ok=True)
(gm / "session-2026-08-01T09-30-5b1c2d3e.json").write_text(
    json.dumps(
        {
            "sessionId": "5b1c2d3e-0000-4000-8000-000000000001",
            "projectHash": "@HASH@",
            "startTime": "2026-08-01T09:30:15.000Z",
            "lastUpdated": "2026-08-01T09:31:00.000Z",
            "messages": [
                {
                    "id": "m1",
                    "timestamp": "2026-08-01T09:30:15.000Z",
                    "type": "user",
                    "content": [{"text": ZH}],
                },
                {
                    "id": "m2",
                    "timestamp": "2026-08-01T09:30:20.000Z",
                    "type": "gemini",
                    "content": EN + " " + INJ,
                    "model": "gemini-2.5-pro",
                },
                {
                    "id": "m3",
                    "timestamp": "2026-08-01T09:30:21.000Z",
                    "type": "info",
                    "content": "Always INJECTED info notice.",
                },
                {
                    "id": "m4",
                    "timestamp": "2026-08-01T09:30:22.000Z",
                    "type": "user",
                    "content": [{"text": "<context>\n" + INJ + "\n</context>\n" + EN}],
                    "displayContent": [{"text": EN}],
                },
                {
                    "id": "m5",
                    "timestamp": "2026-08-01T09:30:40.000Z",
                    "type": "user",
                    "content": "Fix the flaky parser test please.",
                },
            ],
        },
        ensure_ascii=False,
        indent=2,
    ),
    encoding="utf-8",
)
jl(
    gm / "session-2026-08-02T10-00-6c2d3e4f.jsonl",
    [
        {
            "sessionId": "6c2d3e4f-0000-4000-8000-000000000002",
            "projectHash": "@HASH@",
            "startTime": "2026-08-02T10:00:00.000Z",
            "lastUpdated": "2026-08-02T10:01:00.000Z",
            "kind": "main",
        },
        {
            "id": "n1",
            "timestamp": "2026-08-02T10:00:01.000Z",
            "type": "user",
            "content": [{"text": ZH}],
        },
        {"$set": {"lastUpdated": "2026-08-02T10:00:02.000Z"}},
        {
            "id": "n2",
            "timestamp": "2026-08-02T10:00:03.000Z",
            "type": "gemini",
            "content": [{"text": INJ}],
        },
        {
            "id": "n3",
            "timestamp": "2026-08-02T10:00:04.000Z",
            "type": "user",
            "content": [{"text": EN}],
        },
    ],
    tail='{"id": broken\n',
)

# ---------------- negatives: the same words only where no user typed them ----------------
ng = OUT / "negative"
jl(
    ng / "reasonix" / "20260802-080000.000000001-deepseek.jsonl",
    [
        {
            "role": "user",
            "content": "<memory-update>\nThe following project-memory changes were just made and apply from now on:\n- "
            + ZH
            + "\n- "
            + EN
            + "\n</memory-update>\n\nThanks, looks good.",
        },
        {"role": "assistant", "content": ZH + " " + EN},
        {"role": "user", "origin": "host", "content": EN},
        {"role": "tool", "content": EN, "tool_call_id": "c", "name": "bash"},
    ],
)
jl(
    ng / "claude-code" / "9a9a9a9a-0000-4000-8000-000000000009.jsonl",
    [
        cu(
            "x1",
            "<system-reminder>\nContents of @ROOT@/AGENTS.md:\n"
            + ZH
            + "\n"
            + EN
            + "\n</system-reminder>",
        ),
        {
            **env,
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": ZH + " " + EN}]},
            "uuid": "a1",
            "timestamp": "2026-08-01T09:30:16.000Z",
        },
        cu("x2", [{"type": "tool_result", "tool_use_id": "t", "content": EN}]),
        cu("x3", EN, isMeta=True),
        cu("x4", "Thanks, looks good."),
    ],
)
jl(
    ng / "codex" / "rollout-2026-08-02T08-00-00-0198a1b2-0000-7000-8000-000000000009.jsonl",
    [
        ev(
            "2026-08-02T08:00:00.000Z",
            "session_meta",
            {"id": "n", "cwd": "@ROOT@", "originator": "codex_cli_rs", "source": "cli"},
        ),
        agents_md("2026-08-02T08:00:00.100Z", ZH + "\n" + EN),
        ev(
            "2026-08-02T08:00:00.200Z",
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": ZH + " " + EN}],
            },
        ),
        ev(
            "2026-08-02T08:00:00.300Z",
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<environment_context>\n  <cwd>@ROOT@</cwd>\n</environment_context>",
                    }
                ],
            },
        ),
        # No event_msg in this file: the fallback path must drop the AGENTS.md injection itself.
        ev(
            "2026-08-02T08:00:01.000Z",
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Thanks, looks good."}],
            },
        ),
    ],
)
(ng / "gemini").mkdir(parents=True, exist_ok=True)
(ng / "gemini" / "session-2026-08-02T08-00-9d9d9d9d.json").write_text(
    json.dumps(
        {
            "sessionId": "9d9d9d9d",
            "projectHash": "@HASH@",
            "messages": [
                {"id": "m1", "type": "gemini", "content": ZH + " " + EN},
                {"id": "m2", "type": "info", "content": EN},
                {"id": "m3", "type": "user", "content": "Thanks, looks good."},
            ],
        },
        ensure_ascii=False,
    ),
    encoding="utf-8",
)
print("ok")
