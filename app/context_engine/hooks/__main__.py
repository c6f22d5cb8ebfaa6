"""``python -m context_engine.hooks [--home DIR] [--workspace DIR] <agent> [event]``.

The same as ``context-engine hook`` without loading the whole command line: the lean entry
point to register in an agent's hook settings, since it runs once per prompt.
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    # One short-lived process per prompt: collecting cycles among the ~10^5 objects the imports
    # and a snapshot build costs tens of ms and frees nothing the exit would not.
    gc.disable()

import argparse
import os
import sys

from .protocol import AGENTS, Agent
from .runner import run


def main(argv: list[str] | None = None) -> int:
    """Parse the few options a hook needs and answer one hook call."""
    parser = argparse.ArgumentParser(prog="python -m context_engine.hooks")
    parser.add_argument("--home", help="Reasonix home (also the state root).")
    parser.add_argument("--workspace", help="Workspace directory (default: the payload's cwd).")
    parser.add_argument(
        "--with-instructions",
        action="store_true",
        help="SessionStart also adds the # Instructions block (REASONIX.md, AGENTS.md, …).",
    )
    parser.add_argument("agent", choices=AGENTS)
    parser.add_argument("event", nargs="?", help="Default: the payload's hook_event_name.")
    args = parser.parse_args(argv)
    agent: Agent = next(name for name in AGENTS if name == args.agent)
    return run(
        agent,
        args.event,
        home=args.home,
        workspace=args.workspace,
        with_instructions=args.with_instructions,
    )


if __name__ == "__main__":
    code = main()
    # Everything is written (files atomically, stdout flushed next): skip tearing down the
    # ~10^5 objects of the snapshot and index one by one, ~10–20 ms of a hook's wall time.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
